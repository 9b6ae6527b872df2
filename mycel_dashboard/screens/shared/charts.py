"""Every Plotly figure of the dashboard, built as plain dicts (no plotly import at request time).

Figures reach the page through `json_script` and are drawn by static/dashboard/charts.js. Any text that
came from Mycel's data is HTML-escaped here, because Plotly renders a subset of HTML in hover labels.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memory_core.replay import ModelCall
from memory_core.whatif import ThreadWhatIf


@dataclass(frozen=True, slots=True)
class CallPoint:
    """One model call of a thread, as the context-fill chart shows it."""

    call: int  # 1-based model call number
    message_index: int  # the AI message this call produced
    stored: int  # Mycel's estimate of the stored history before the call
    after_pruning: int
    sent: int  # after the summary view
    tiktoken: int | None
    input_tokens: int | None  # provider-reported
    compacted: bool  # compaction ran at this call
    pruned: bool  # at least one result was trimmed or cleared
    url: str  # where the timeline shows that message


def _trace(name: str, x: list[int], y: list[int | None], **extra: Any) -> dict[str, Any]:
    return {"type": "scatter", "mode": "lines+markers", "name": name, "x": x, "y": y, **extra}


def context_fill_figure(
    points: Sequence[CallPoint], *, trigger_tokens: int, context_limit: int, title: str = ""
) -> dict[str, Any]:
    """Context fill per model call: stored, after pruning, sent, tiktoken, provider tokens; trigger and limit."""
    x = [p.call for p in points]
    custom = [[f"msg-{p.message_index}", p.url] for p in points]
    hover = "call %{x}<br>%{fullData.name}: %{y:,} tokens<extra></extra>"
    common = {"customdata": custom, "hovertemplate": hover}
    data: list[dict[str, Any]] = [
        _trace(
            "stored (Mycel estimate)",
            x,
            [p.stored for p in points],
            line={"width": 1, "dash": "dot"},
            **common,
        ),
        _trace("after pruning", x, [p.after_pruning for p in points], line={"width": 1.5}, **common),
        _trace("sent to the model", x, [p.sent for p in points], line={"width": 2.5}, **common),
    ]
    if any(p.tiktoken is not None for p in points):
        data.append(
            _trace(
                "tiktoken (sent)",
                x,
                [p.tiktoken for p in points],
                line={"width": 1, "dash": "dash"},
                **common,
            )
        )
    if any(p.input_tokens is not None for p in points):
        data.append(
            _trace(
                "provider input tokens",
                x,
                [p.input_tokens for p in points],
                mode="markers",
                marker={"symbol": "diamond", "size": 7},
                **common,
            )
        )
    compacted = [p for p in points if p.compacted]
    if compacted:
        data.append(
            _markers(
                compacted,
                "compaction ran",
                [p.sent for p in compacted],
                {"symbol": "star", "size": 12},
                "call %{x}: compaction ran<extra></extra>",
            )
        )
    pruned = [p for p in points if p.pruned and not p.compacted]
    if pruned:
        data.append(
            _markers(
                pruned,
                "results trimmed / cleared",
                [p.after_pruning for p in pruned],
                {"symbol": "triangle-down", "size": 8},
                "call %{x}: results pruned, %{y:,} tokens after<extra></extra>",
            )
        )
    last = max(x) if x else 1
    shapes = [
        _hline(trigger_tokens, "trigger"),
        _hline(context_limit, "limit"),
    ]
    annotations = [
        _label(last, trigger_tokens, f"compaction trigger 70 % ({trigger_tokens:,})"),
        _label(last, context_limit, f"context limit ({context_limit:,})"),
    ]
    layout: dict[str, Any] = {
        "title": {"text": html.escape(title)} if title else None,
        "xaxis": {"title": {"text": "model call"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "tokens"}, "rangemode": "tozero"},
        "shapes": shapes,
        "annotations": annotations,
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": -0.2},
        "margin": {"l": 60, "r": 20, "t": 20 if not title else 40, "b": 40},
        "height": 340,
    }
    if layout["title"] is None:
        del layout["title"]
    return {"data": data, "layout": layout, "config": {"displaylogo": False, "responsive": True}}


def whatif_figure(whatif: ThreadWhatIf, url: Callable[[int], str]) -> dict[str, Any] | None:
    """The thread's context-fill chart under the current config, with the proposal's traces overlaid."""
    current, proposed = whatif.current, whatif.proposed
    if not current.calls:
        return None
    figure = context_fill_figure(
        call_points(current.calls, url),
        trigger_tokens=current.settings.trigger_tokens,
        context_limit=current.settings.context_limit,
    )
    if proposed.settings == current.settings:
        return figure
    x = list(range(1, len(proposed.calls) + 1))
    hover = "call %{x}<br>%{fullData.name}: %{y:,} tokens<extra></extra>"
    proposal = {"mode": "lines", "hovertemplate": hover, "meta": "proposed"}
    figure["data"].extend(
        [
            _trace(
                "proposed: after pruning",
                x,
                [c.pruned_tokens for c in proposed.calls],
                line={"width": 1.5, "dash": "dashdot"},
                **proposal,
            ),
            _trace(
                "proposed: sent to the model",
                x,
                [c.sent_tokens for c in proposed.calls],
                line={"width": 3, "dash": "dash"},
                **proposal,
            ),
        ]
    )
    compacted = [(n, c) for n, c in enumerate(proposed.calls, start=1) if c.compacted]
    if compacted:
        figure["data"].append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "proposed: compaction ran",
                "x": [n for n, _ in compacted],
                "y": [c.sent_tokens for _, c in compacted],
                "marker": {"symbol": "star-open", "size": 12},
                "hovertemplate": "call %{x}: compaction would run<extra></extra>",
                "meta": "proposed",
            }
        )
    layout = figure["layout"]
    for role, before, after in (
        ("trigger", current.settings.trigger_tokens, proposed.settings.trigger_tokens),
        ("limit", current.settings.context_limit, proposed.settings.context_limit),
    ):
        if after != before:
            layout["shapes"].append(_hline(after, role, dash="dot"))
            layout["annotations"].append(
                _label(len(x), after, f"proposed {role} ({after:,})", xanchor="left", yanchor="top")
            )
    return figure


def script_json(figure: dict[str, Any]) -> str:
    """The figure as JSON that is safe inside <script type="application/json">: "<", ">" and "&" become
    unicode escapes, as Django's json_script writes them (str.replace: its translate() takes ~20 ms on
    a 900-point figure)."""
    text = json.dumps(figure)
    return text.replace("&", "\\u0026").replace("<", "\\u003C").replace(">", "\\u003E")


def call_points(calls: Sequence[ModelCall], url: Callable[[int], str]) -> list[CallPoint]:
    """Replayed model calls as chart points; `url(message_index)` links each to the timeline."""
    return [
        CallPoint(
            call=number,
            message_index=call.index,
            stored=call.stored_tokens,
            after_pruning=call.pruned_tokens,
            sent=call.sent_tokens,
            tiktoken=call.tiktoken_sent,
            input_tokens=call.provider_input_tokens,
            compacted=call.compacted,
            pruned=bool(call.soft_trimmed or call.hard_cleared),
            url=url(call.index),
        )
        for number, call in enumerate(calls, start=1)
    ]


def _hline(y: int, role: str, *, dash: str | None = None) -> dict[str, Any]:
    return {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "y0": y,
        "y1": y,
        "line": {"dash": dash or ("dash" if role == "trigger" else "solid"), "width": 1},
        "name": role,
    }


def _label(x: int, y: int, text: str, *, xanchor: str = "right", yanchor: str = "bottom") -> dict[str, Any]:
    return {"x": x, "y": y, "text": text, "showarrow": False, "xanchor": xanchor, "yanchor": yanchor}


def _markers(
    points: Sequence[CallPoint], name: str, y: list[int], marker: dict[str, Any], hover: str
) -> dict[str, Any]:
    """A marker trace whose points carry the timeline anchor and URL the click handler scrolls to."""
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": [p.call for p in points],
        "y": y,
        "marker": marker,
        "customdata": [[f"msg-{p.message_index}", p.url] for p in points],
        "hovertemplate": hover,
    }

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

from memory_core import figures
from memory_core.call_record.calls import RecordedCall, recompaction_runs
from memory_core.memory_settings import MemorySettings
from memory_core.rules.profile import RulesProfile
from memory_core.whatif import ThreadWhatIf

# How every screen that shows reconstructed calls names the rules they follow (one wording).
RULES_WORDS = {
    RulesProfile.MAIN: "Mycel main's rules: trigger on the pruned history",
    RulesProfile.DEV: "Mycel dev's rules: trigger on the summarized view",
}


def rules_words(profile: RulesProfile, reason: str = "") -> str:
    """The rules profile in words, with why it applies ("dev layout", "chosen here") when given."""
    return f"{RULES_WORDS[profile]} ({reason})" if reason else RULES_WORDS[profile]


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
    compacted: bool  # Mycel compacted right before this call
    compaction_stored: bool  # False: compacted, but Mycel stored no summary row
    pruned: bool  # at least one result was trimmed or cleared
    url: str  # where the timeline shows that message
    trigger: int  # the trigger and limit in force at this call (they change when the settings did)
    limit: int
    call_url: str = ""  # the page with this call's exact request


def _trace(name: str, x: list[int], y: Sequence[int | None], **extra: Any) -> dict[str, Any]:
    return {"type": "scatter", "mode": "lines+markers", "name": name, "x": x, "y": y, **extra}


# What a fill over 100 % is, said beside it wherever one is shown: the window cannot hold more than it
# holds, so such a figure is Mycel's own estimate overshooting, not a count the provider made.
ESTIMATE_WORDS = "Mycel's estimate (characters ÷ 2), not the provider's count"


def fill_words(ratio: float) -> str:
    """A share of the context window as every chart and caption writes it: "1.5 %", "90.0 %"; over
    100 % it says whose figure it is ("111.6 % (Mycel's estimate …)")."""
    shown = figures.percent(ratio, decimals=1)
    return f"{shown} ({ESTIMATE_WORDS})" if ratio > 1 else shown


def size_axis(title: str, peak: int) -> dict[str, Any]:
    """An axis of bytes labelled as the pages write sizes ("250 KB", "1.00 MB"): ticks at 1, 2 or 5 × a
    power of ten, about five of them up to `peak` (Plotly's own labels would read "0.2M")."""
    step = 1
    while peak / step > 5:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2  # 1, 2, 5, 10, 20, 50, …
    ticks = list(range(0, peak + step, step))
    return {
        "title": {"text": title},
        "rangemode": "tozero",
        "automargin": True,  # "50.0 KB" is wider than Plotly's own "50k": room for it and the title
        "tickvals": ticks,
        "ticktext": [figures.size(t) for t in ticks],
    }


def whole_axis(title: str, last: int) -> dict[str, Any]:
    """An x-axis of whole things (model calls, checkpoints): ticks on integers only, every one of them
    while there are few (Plotly would put a 3-call chart's ticks at 0.5, 1.5, …)."""
    axis: dict[str, Any] = {"title": {"text": title}, "rangemode": "tozero", "tickformat": ",d"}
    if last <= 12:
        axis.update(tick0=0, dtick=1)
    return axis


def _percent_of(value: int, limit: int) -> str:
    return fill_words(value / limit) if limit else "?"


def context_fill_figure(points: Sequence[CallPoint], *, title: str = "") -> dict[str, Any]:
    """Context fill per model call: stored, after pruning, sent, tiktoken, provider tokens; the trigger and
    the limit in force; Mycel's real compactions, and the runs where it compacted at every call.

    When the thread uses a sliver of its window (2 % of 1,000,000), the y-axis zooms to the data and the
    trigger and limit lines, now above the view, are named in its corner instead.
    """
    x = [p.call for p in points]
    custom = [[f"msg-{p.message_index}", p.url, p.call_url, _percent_of(p.sent, p.limit)] for p in points]
    hover = (
        "call %{x}<br>%{fullData.name}: %{y:,} tokens<br>sent = %{customdata[3]} of the window<extra></extra>"
    )
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
    stored = [p for p in points if p.compacted and p.compaction_stored]
    if stored:
        data.append(
            _markers(
                stored,
                "compacted (summary stored)",
                [p.sent for p in stored],
                {"symbol": "star", "size": 12},
                "call %{x}: Mycel compacted (its summary row is stored)<extra></extra>",
            )
        )
    lost = [p for p in points if p.compacted and not p.compaction_stored]
    if lost:
        data.append(
            _markers(
                lost,
                "compacted, summary not stored",
                [p.sent for p in lost],
                {"symbol": "star-open", "size": 13, "line": {"width": 2}},
                "call %{x}: compacted, summary not stored (no row)<extra></extra>",
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
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    if len({(p.trigger, p.limit) for p in points}) <= 1:
        trigger, limit = (points[0].trigger, points[0].limit) if points else (0, 0)
        shapes += [_hline(trigger, "trigger"), _hline(limit, "limit")]
        annotations += [
            _label(last, trigger, f"compaction trigger 70 % ({figures.count(trigger)})"),
            _label(last, limit, f"context limit ({figures.count(limit)})"),
        ]
    else:  # the settings changed during the thread: the lines step where they did
        for role, values in (("trigger", [p.trigger for p in points]), ("limit", [p.limit for p in points])):
            data.append(
                _trace(
                    f"{'compaction trigger' if role == 'trigger' else 'context limit'} in force",
                    x,
                    values,
                    mode="lines",
                    line={"width": 1, "dash": "dash" if role == "trigger" else "solid", "shape": "hvh"},
                    hovertemplate=f"call %{{x}}: {role} %{{y:,}}<extra></extra>",
                    meta=role,
                )
            )
    for first, end in recompaction_runs(points):
        shapes.append(_band(first - 0.5, end + 0.5))
        annotations.append(
            {
                "x": (first + end) / 2,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": f"re-compacted at every call ({first}\u2013{end})",
                "showarrow": False,
                "yanchor": "bottom",
            }
        )
    yaxis: dict[str, Any] = {"title": {"text": "tokens"}, "rangemode": "tozero", "tickformat": ",d"}
    peak = max(
        (
            v
            for p in points
            for v in (p.stored, p.after_pruning, p.sent, p.tiktoken or 0, p.input_tokens or 0)
        ),
        default=0,
    )
    lowest_trigger = min((p.trigger for p in points), default=0)
    if points and peak and peak < 0.35 * lowest_trigger:
        yaxis["range"] = [0, peak * 1.25]
        limit = points[-1].limit
        annotations.append(
            {
                "x": 0,
                "y": 1,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "left",
                "yanchor": "top",
                "showarrow": False,
                "align": "left",
                "text": (
                    f"zoomed to the data: the trigger ({figures.count(lowest_trigger)}) and the context limit "
                    f"({figures.count(limit)}) "
                    f"are above this view<br>peak sent: {_percent_of(max(p.sent for p in points), limit)} of the window"
                ),
            }
        )
    layout: dict[str, Any] = {
        "title": {"text": html.escape(title)} if title else None,
        "xaxis": whole_axis("model call", last),
        "yaxis": yaxis,
        "shapes": shapes,
        "annotations": annotations,
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": -0.2},
        "margin": {"l": 60, "r": 20, "t": 24 if not title else 40, "b": 40},
        "height": 340,
    }
    if layout["title"] is None:
        del layout["title"]
    return {"data": data, "layout": layout, "config": {"displaylogo": False, "responsive": True}}


def whatif_figure(
    whatif: ThreadWhatIf,
    url: Callable[[int], str],
    *,
    trigger_of: Callable[[MemorySettings], int] = lambda settings: settings.trigger_tokens,
) -> dict[str, Any] | None:
    """The thread's context-fill chart under the current config, with the proposal's traces overlaid;
    `trigger_of` is the rules' trigger of a config (Mycel dev's takes its trigger_tokens)."""
    current, proposed = whatif.current, whatif.proposed
    if not current.calls:
        return None
    figure = context_fill_figure(call_points(current.calls, url))
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
        ("trigger", trigger_of(current.settings), trigger_of(proposed.settings)),
        ("limit", current.settings.context_limit, proposed.settings.context_limit),
    ):
        if after != before:
            layout["shapes"].append(_hline(after, role, dash="dot"))
            layout["annotations"].append(
                _label(
                    len(x), after, f"proposed {role} ({figures.count(after)})", xanchor="left", yanchor="top"
                )
            )
    return figure


def script_json(figure: dict[str, Any]) -> str:
    """The figure as JSON that is safe inside <script type="application/json">: "<", ">" and "&" become
    unicode escapes, as Django's json_script writes them (str.replace: its translate() takes ~20 ms on
    a 900-point figure)."""
    text = json.dumps(figure)
    return text.replace("&", "\\u0026").replace("<", "\\u003C").replace(">", "\\u003E")


def call_points(
    calls: Sequence[RecordedCall], url: Callable[[int], str], call_url: Callable[[int], str] | None = None
) -> list[CallPoint]:
    """Model calls as chart points; `url(message_index)` links each to the timeline, `call_url(call)` to
    the page with its exact request."""
    return [
        CallPoint(
            call=call.call,
            message_index=call.index,
            stored=call.stored_tokens,
            after_pruning=call.pruned_tokens,
            sent=call.sent_tokens,
            tiktoken=call.tiktoken_tokens,
            input_tokens=call.provider_input_tokens,
            compacted=call.compacted,
            compaction_stored=call.compaction_stored,
            pruned=bool(call.soft_trimmed or call.hard_cleared),
            url=url(call.index),
            trigger=call.trigger_tokens,
            limit=call.context_limit,
            call_url=call_url(call.call) if call_url else "",
        )
        for call in calls
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


def _band(x0: float, x1: float) -> dict[str, Any]:
    return {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": x0,
        "x1": x1,
        "y0": 0,
        "y1": 1,
        "line": {"width": 0},
        "fillcolor": "rgba(214, 120, 40, 0.10)",
        "layer": "below",
        "name": "recompaction",
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
        "customdata": [[f"msg-{p.message_index}", p.url, p.call_url] for p in points],
        "hovertemplate": hover,
    }

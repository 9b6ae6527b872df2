"""The Storage screen's Plotly figures (and the Thread page's bytes chart), as plain dicts drawn by
static/dashboard/charts.js, following screens/shared/charts.py: text from Mycel's data is HTML-escaped
(Plotly renders a subset of HTML in labels), a click on a bar opens the URL in customdata[2]."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

from memory_core import figures
from memory_core.app.storage import ThreadStorage
from memory_core.footprint.growth import CheckpointPoint
from memory_core.ids import short_id
from mycel_dashboard.screens.shared.charts import size_axis, whole_axis

# The bar chart shows this many of the biggest threads (the table pages through the rest).
BIGGEST = 15
_CONFIG = {"displaylogo": False, "responsive": True}


def _label(rank: int, row: ThreadStorage) -> str:
    return html.escape(f"{rank}. {row.name or short_id(row.thread_id)}")


def biggest_threads_figure(
    rows: Sequence[ThreadStorage], breakdown_url: Callable[[str], str]
) -> dict[str, Any] | None:
    """The biggest threads by bytes as horizontal bars, quadratic growers apart; None with no bytes."""
    top = [row for row in rows[:BIGGEST] if row.bytes > 0]
    if not top:
        return None
    data: list[dict[str, Any]] = []
    # "Other threads" first: it takes the theme's quiet colour, the quadratic growers the next one.
    for quadratic, name in ((False, "other threads"), (True, "grows with the square of its length")):
        chosen = [(rank, row) for rank, row in enumerate(top, start=1) if row.quadratic is quadratic]
        if not chosen:
            continue
        data.append(
            {
                "type": "bar",
                "orientation": "h",
                "name": name,
                "y": [_label(rank, row) for rank, row in chosen],
                "x": [row.bytes for _, row in chosen],
                "customdata": [
                    [
                        "",
                        "",
                        breakdown_url(row.thread_id),
                        figures.percent(row.share, decimals=1),
                        figures.delta_size(row.growth_bytes_per_turn),
                        figures.size(row.bytes),
                    ]
                    for _, row in chosen
                ],
                "hovertemplate": (
                    "%{y}<br>%{customdata[5]} (%{customdata[3]} of all threads)<br>"
                    "%{customdata[4]} per turn<extra></extra>"
                ),
            }
        )
    order = [_label(rank, row) for rank, row in enumerate(top, start=1)]
    layout = {
        "barmode": "overlay",
        "xaxis": size_axis("bytes on disk", max(row.bytes for row in top)),
        # Biggest at the top: Plotly draws the first category at the bottom.
        "yaxis": {"categoryorder": "array", "categoryarray": list(reversed(order)), "automargin": True},
        "legend": {"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom"},
        "margin": {"l": 20, "r": 20, "t": 30, "b": 40},
        "height": max(220, 28 * len(top) + 100),
        "hovermode": "closest",
    }
    return {"data": data, "layout": layout, "config": _CONFIG}


def checkpoint_bytes_figure(points: Sequence[CheckpointPoint], *, height: int = 220) -> dict[str, Any] | None:
    """Bytes per checkpoint, stacked as checkpoint + metadata, writes and (PostgreSQL) blobs."""
    if not points:
        return None
    x = [p.index for p in points]
    hover = "checkpoint %{x} (turn %{customdata[1]})<br>%{fullData.name}: %{customdata[2]}<extra></extra>"
    parts: list[tuple[str, list[int]]] = [
        ("checkpoint + metadata", [p.checkpoint for p in points]),
        ("writes", [p.writes for p in points]),
    ]
    if any(p.blobs for p in points):
        parts.append(("blobs (first referenced here)", [p.blobs for p in points]))
    data = [
        {
            "type": "bar",
            "name": name,
            "x": x,
            "y": y,
            "customdata": [
                [html.escape(p.checkpoint_id), p.turn, figures.size(n)]
                for p, n in zip(points, y, strict=True)
            ],
            "hovertemplate": hover,
        }
        for name, y in parts
    ]
    layout = {
        "barmode": "stack",
        "xaxis": whole_axis("checkpoint (oldest first)", len(points)),
        "yaxis": size_axis("bytes", max(p.total for p in points)),
        "legend": {"orientation": "h", "x": 0, "y": 1, "yanchor": "bottom"},
        "margin": {"l": 60, "r": 20, "t": 30, "b": 40},
        "height": height,
        "hovermode": "closest",
    }
    return {"data": data, "layout": layout, "config": _CONFIG}

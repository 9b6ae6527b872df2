"""The Tool-output pressure heatmap: tool x thread (or day), colour = the tool's share of the characters
sent in that column, hover with the counts, a click opens the calls behind the cell.

Plain dicts drawn by static/dashboard/charts.js (a point's customdata[2] is where a click goes). Tool
names and thread ids come from Mycel's data, so they are HTML-escaped (Plotly renders some HTML).
"""

from __future__ import annotations

import html
from typing import Any

from memory_core import figures
from mycel_dashboard.screens.context.tools.presenter import UNKNOWN_DAY, Cell, HeatBy, Heatmap

COLOUR_TITLE = "share of the characters sent"
# customdata: 0-1 unused by a heatmap (charts.js' timeline anchor), 2 the click's URL, then these counts.
_COUNTS = ("sent_chars", "chars_removed", "results", "trimmed", "cleared", "spills", "re_requests")


def _custom(cell: Cell | None) -> list[str]:
    if cell is None:
        return ["", "", ""] + [""] * (len(_COUNTS) + 2)
    return [
        "",
        "",
        cell.url,
        *(figures.count(cell.counts[name]) for name in _COUNTS),  # 3..9
        figures.percent(cell.share, decimals=1),  # 10
        html.escape(cell.column or UNKNOWN_DAY),  # 11
    ]


def heatmap_figure(heat: Heatmap) -> dict[str, Any]:
    column = "thread" if heat.by is HeatBy.THREAD else "day (UTC)"
    hover = (
        "%{y} in " + column + " %{customdata[11]}"
        "<br>%{customdata[10]} of the characters sent there"
        "<br>sent %{customdata[3]} chars; pruning removed %{customdata[4]}"
        "<br>%{customdata[5]} results: %{customdata[6]} trimmed, %{customdata[7]} cleared"
        "<br>%{customdata[8]} spilled; %{customdata[9]} asked again after a clear"
        "<br>click: the calls behind it<extra></extra>"
    )
    return {
        "data": [
            {
                "type": "heatmap",
                "x": [html.escape(label) for _, label in heat.columns],
                "y": [html.escape(tool) for tool in heat.tools],
                "z": [[round(c.share, 4) if c else None for c in row] for row in heat.rows],
                "customdata": [[_custom(c) for c in row] for row in heat.rows],
                "hovertemplate": hover,
                "colorscale": "YlOrRd",
                "reversescale": True,  # Plotly's YlOrRd runs red to yellow: the larger share is the redder
                "zmin": 0,
                "zmax": 1,
                "xgap": 2,
                "ygap": 2,
                "colorbar": {"title": {"text": COLOUR_TITLE, "side": "right"}, "tickformat": ".0%"},
            }
        ],
        "layout": {
            "height": max(280, 140 + 34 * len(heat.tools)),
            "margin": {"l": 110, "r": 20, "t": 40, "b": 120},
            "xaxis": {"type": "category", "tickangle": -35, "title": {"text": column}},
            "yaxis": {"type": "category", "autorange": "reversed"},
            "title": {"text": f"Colour: the tool's {COLOUR_TITLE} in that {column.split()[0]}"},
        },
        "config": {"responsive": True, "displaylogo": False},
    }

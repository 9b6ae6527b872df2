"""The cache screen's figure: the fleet's re-written tokens per cause (a Plotly bar chart).

Plain dicts in the shape of mycel_dashboard/screens/shared/charts.py, drawn by static/dashboard/charts.js.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core import figures
from mycel_dashboard.screens.context.cache.presenter import BREAKING


def cause_figure(totals: Mapping[str, Any], unit: str) -> dict[str, Any]:
    """One bar per cause: the tokens it made the provider write to its cache again."""
    tokens = [totals["by_cause"][c]["rewritten_tokens"] for c in BREAKING]
    costs = [totals["by_cause"][c]["cost_usd"] for c in BREAKING]
    return {
        "data": [
            {
                "type": "bar",
                "x": list(BREAKING),
                "y": tokens,
                # [3]: charts.js reads [0] to [2] of a clicked point as its anchor and links.
                "customdata": [
                    ["", "", "", figures.count(n), figures.money(c) if c is not None else "not priced"]
                    for n, c in zip(tokens, costs, strict=True)
                ],
                "hovertemplate": (
                    "%{x}: %{customdata[3]} tokens re-written<br>cost: %{customdata[4]}<extra></extra>"
                ),
                "marker": {"color": ["#d08c2a", "#c0392b", "#2c6fbb", "#7d5ba6"]},
            }
        ],
        "layout": {
            "height": 300,
            "margin": {"l": 70, "r": 20, "t": 40, "b": 40},
            "bargap": 0.5,
            "xaxis": {"type": "category"},
            "yaxis": {"title": {"text": f"tokens ({unit})"}, "rangemode": "tozero", "tickformat": ",d"},
            "title": {"text": "Tokens re-written to the prompt cache, by what broke the prefix"},
        },
        "config": {"responsive": True, "displaylogo": False},
    }

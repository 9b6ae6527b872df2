"""The Cost screen's figure: cost per day stacked by model (tokens per day when there is no price book).

Plain dicts in the shape of mycel_dashboard/screens/shared/charts.py, drawn by static/dashboard/charts.js.
Model names come from Mycel's data, so they are HTML-escaped (Plotly renders some HTML in labels).
"""

from __future__ import annotations

import html
from typing import Any

from memory_core import figures
from memory_core.economics.cost import ZERO, CostReport


def cost_figure(report: CostReport) -> dict[str, Any]:
    """One bar trace per model over the report's days: its cost in USD, or its tokens without prices."""
    days = [d.name for d in report.days]
    priced = report.book is not None
    models = [m.line.name for m in report.models]
    data: list[dict[str, Any]] = []
    for model in models:
        if priced:
            costs = [d.by_model.get(model, ZERO) for d in report.days]
            y: list[float] = [float(c) for c in costs]
            shown = [figures.money(c) for c in costs]
        else:
            tokens = [d.tokens_by_model.get(model, 0) for d in report.days]
            y = [float(t) for t in tokens]
            shown = [f"{figures.count(t)} tokens" for t in tokens]
        if not any(y):
            continue
        name = html.escape(model)
        data.append(
            {
                "type": "bar",
                "name": name,
                "x": days,
                "y": y,
                "customdata": [["", "", "", v] for v in shown],  # [3]: charts.js reads 0-2 on a click
                "hovertemplate": f"{name}<br>%{{x}}: %{{customdata[3]}}<extra></extra>",
            }
        )
    return {
        "data": data,
        "layout": {
            "barmode": "stack",
            "height": 320,
            "margin": {"l": 60, "r": 20, "t": 30, "b": 40},
            "bargap": 0.5,
            "xaxis": {"type": "category"},
            "yaxis": {
                "title": {"text": "USD" if priced else "tokens"},
                "rangemode": "tozero",
                **({"tickprefix": "$", "tickformat": ",.2f"} if priced else {"tickformat": ",d"}),
            },
            "legend": {"orientation": "h", "y": -0.2},
            "title": {
                "text": "Cost per day (UTC), by model"
                if priced
                else "Tokens per day (UTC), by model (no prices)"
            },
        },
        "config": {"responsive": True, "displaylogo": False},
    }

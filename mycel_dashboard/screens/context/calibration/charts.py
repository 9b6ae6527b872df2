"""The calibration screen's figure: the provider's input tokens against Mycel's estimate of what it sent,
one marker trace and one fit line per model, with the real 70 % line and the limit when they are in view.

Plain dicts in the shape of mycel_dashboard/screens/shared/charts.py, drawn by static/dashboard/charts.js.
Model and thread names come from Mycel's data, so they are HTML-escaped (Plotly renders some HTML)."""

from __future__ import annotations

import html
from typing import Any

from memory_core import figures

# A line more than this many times above the highest point would flatten every point: named instead.
_LINE_IN_VIEW = 3.0


def calibration_figure(report: dict[str, Any]) -> dict[str, Any]:
    """Scatter of (estimate, provider) per model, the fitted line, estimate = real, and the lines."""
    data: list[dict[str, Any]] = []
    top_x = top_y = 0
    for model in report["models"]:
        points = model.get("points", [])
        if not points:
            continue
        name = html.escape(model["model"])
        xs = [p["sent_tokens"] for p in points]
        ys = [p["provider_input_tokens"] for p in points]
        top_x, top_y = max(top_x, *xs), max(top_y, *ys)
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": name,
                "x": xs,
                "y": ys,
                "text": [f"{html.escape(p['thread_id'])} call {p['call']}" for p in points],
                "hovertemplate": f"{name}<br>%{{text}}<br>estimate %{{x:,}} → provider %{{y:,}}<extra></extra>",
            }
        )
        fit = model["fit"]
        if fit is not None:
            ends = [0, max(xs)]
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": (
                        f"{name} fit: {figures.count(fit['overhead_tokens'])} + "
                        f"{figures.ratio(fit['rate'])} × estimate"
                    ),
                    "x": ends,
                    "y": [fit["overhead_tokens"] + fit["rate"] * x for x in ends],
                    "line": {"dash": "dot"},
                    "hoverinfo": "skip",
                }
            )
    if top_x:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "estimate = real",
                "x": [0, top_x],
                "y": [0, top_x],
                "line": {"color": "#999", "dash": "dash", "width": 1},
                "hoverinfo": "skip",
            }
        )
    shapes, above = _lines(report, max(top_y, top_x))
    return {
        "data": data,
        "layout": {
            "height": 380,
            "margin": {"l": 70, "r": 20, "t": 40, "b": 50},
            "xaxis": {"title": {"text": "Mycel's estimate of what it sent (tokens)"}, "rangemode": "tozero"},
            "yaxis": {"title": {"text": "provider input_tokens"}, "rangemode": "tozero"},
            "legend": {"orientation": "h", "y": -0.25},
            "title": {"text": "Provider input tokens against Mycel's estimate, per model call"},
            "shapes": shapes,
            "annotations": [
                {
                    "xref": "paper",
                    "yref": "paper",
                    "x": 1,
                    "y": 1,
                    "xanchor": "right",
                    "showarrow": False,
                    "text": "above the view: " + "; ".join(above),
                    "font": {"size": 11},
                }
            ]
            if above
            else [],
        },
        "config": {"responsive": True, "displaylogo": False},
    }


def _lines(report: dict[str, Any], top: float) -> tuple[list[dict[str, Any]], list[str]]:
    shapes: list[dict[str, Any]] = []
    above: list[str] = []
    limits = sorted({m["limit_in_force"] for m in report["models"] if m["limit_in_force"]})
    for limit in limits:
        for value, label, dash in ((0.7 * limit, "real 70 % line", "dot"), (limit, "limit", "solid")):
            if top and value > _LINE_IN_VIEW * top:
                above.append(f"{label} {figures.count(value)}")
                continue
            shapes.append(
                {
                    "type": "line",
                    "xref": "paper",
                    "x0": 0,
                    "x1": 1,
                    "y0": value,
                    "y1": value,
                    "line": {"color": "#c0392b", "dash": dash, "width": 1},
                    "label": {"text": f"{label} {figures.count(value)}", "textposition": "end"},
                }
            )
    return shapes, above

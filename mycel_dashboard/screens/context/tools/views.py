"""The Tool-output pressure screen (/context/tools/, ?by=day): which tools fill the window."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core.app.tools import KEPT, tools_for_page
from memory_core.economics.tool_pressure import UNIT
from mycel_dashboard.screens.context.tools.charts import COLOUR_TITLE, heatmap_figure
from mycel_dashboard.screens.context.tools.presenter import (
    TOP_THREADS,
    HeatBy,
    ask_rows,
    heatmap,
    tool_sections,
)
from mycel_dashboard.screens.shared.fleet_budget import fleet_deadline, kept_report, progress_context
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.forms import LenientForm
from mycel_dashboard.web.links import call_urls
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


class HeatForm(LenientForm):
    by = forms.ChoiceField(
        required=False, initial=HeatBy.THREAD.value, choices=[(b.value, b.value) for b in HeatBy], label="by"
    )


def _thread_url(thread_id: str) -> str:
    try:
        return reverse("thread", args=[thread_id])
    except NoReverseMatch:
        return ""


def tools_page(request: HttpRequest) -> HttpResponse:
    deadline = fleet_deadline(settings.DASHBOARD_FLEET_BUDGET_S)
    values, notes = HeatForm(request.GET).values()
    by = HeatBy(values["by"])
    source, reader = open_source()
    problems: list[str] = []
    found = guarded(
        "the tool-pressure report",
        lambda: tools_for_page(reader, kept=kept_report(source, reader, KEPT.name), deadline=deadline),
        problems,
    )
    context: dict[str, object] = {
        "source": source,
        "by": by.value,
        "notes": notes,
        "problems": problems,
        "pressure": None,
        "unit": UNIT,
        "colour_title": COLOUR_TITLE,
        "top_threads": TOP_THREADS,
    }
    if found is not None:
        problems.extend(problem_text(p) for p in found.problems)
        # `mycel-memory tools --json`'s very dict, its long lists cut as a page shows them.
        report = found.document
        heat = heatmap(report, by, thread_url=_thread_url)
        context.update(
            pressure=report,
            heat=heat,
            figure=heatmap_figure(heat),
            sections=tool_sections(report, thread_url=_thread_url),
            asks=ask_rows(report, thread_url=_thread_url, call_url=lambda t, n: call_urls(t)(n)),
            **progress_context(found.progress, reload_url=request.get_full_path()),
        )
    return render_screen(request, "context_tools.html", None, context)

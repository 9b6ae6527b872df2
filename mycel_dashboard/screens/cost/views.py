"""The Cost screen: provider usage x Mycel's pricing cache over a period, per model, thread and day."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core.app.cost import cost_document, fleet_cost
from mycel_dashboard.screens.cost.charts import cost_figure
from mycel_dashboard.screens.cost.forms import PeriodForm
from mycel_dashboard.screens.cost.presenter import cost_page as present
from mycel_dashboard.screens.shared.fleet_budget import fleet_deadline, progress_context
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.links import call_urls
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _reversed(name: str, *args: str) -> str:
    try:
        return reverse(name, args=list(args))
    except NoReverseMatch:
        return ""


def cost_page(request: HttpRequest) -> HttpResponse:
    deadline = fleet_deadline(settings.DASHBOARD_FLEET_BUDGET_S)
    since, until, notes = PeriodForm(request.GET).period()
    source, reader = open_source()
    problems: list[str] = []
    found = guarded(
        "the cost report",
        lambda: fleet_cost(reader, since=since, until=until, deadline=deadline),
        problems,
    )
    context: dict[str, object] = {
        "source": source,
        "since": since,
        "until": until,
        "notes": notes,
        "problems": problems,
        "cost": None,
    }
    if found is not None:
        problems.extend(problem_text(p) for p in found.problems)
        page = present(
            found.report,
            thread_url=lambda thread_id: _reversed("thread", thread_id),
            call_url=lambda thread_id, number: call_urls(thread_id)(number),
            checkpoint_url=lambda thread_id, checkpoint_id: _reversed("checkpoint", thread_id, checkpoint_id),
        )
        context.update(
            cost=page,
            pricing_notes=found.notes,
            pricing_path=str(found.pricing_path),
            figure=cost_figure(found.report),
            # The very JSON `mycel-memory cost --json` prints (tests compare them).
            cost_json=cost_document(found),
            **progress_context(found.progress, reload_url=request.get_full_path()),
        )
    return render_screen(request, "cost.html", None, context)

"""The Cost screen: provider usage x Mycel's pricing cache over a period, per model, thread and day."""

from __future__ import annotations

from datetime import date

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core.app.cost import FleetCost, cost_document, fleet_cost
from memory_core.app.fleet_cost import THREADS_SHOWN, indexed_cost
from memory_core.app.fleet_index import store_name
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.cost.charts import cost_figure
from mycel_dashboard.screens.cost.forms import PeriodForm
from mycel_dashboard.screens.cost.presenter import cost_page as present
from mycel_dashboard.screens.cost.presenter import thread_pager
from mycel_dashboard.screens.shared.fleet_budget import fleet_deadline, progress_context
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, start_builder
from mycel_dashboard.web.fleet_usage import DashboardCostIndex
from mycel_dashboard.web.links import call_urls
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _reversed(name: str, *args: str) -> str:
    try:
        return reverse(name, args=list(args))
    except NoReverseMatch:
        return ""


def _report(
    reader: MycelReader, locations: MycelLocations, since: date | None, until: date | None, page: int
) -> FleetCost:
    """From the fleet index when it can answer (one page of threads), else by walking the fleet within the
    page's time budget."""
    store = store_name(reader)
    found = indexed_cost(
        reader,
        DashboardFleetIndex(),
        DashboardCostIndex(),
        since=since,
        until=until,
        offset=(page - 1) * THREADS_SHOWN,
        limit=THREADS_SHOWN,
        read_later=lambda full: start_builder(locations, store, full=full),
    )
    if found is not None:
        return found
    deadline = fleet_deadline(settings.DASHBOARD_FLEET_BUDGET_S)
    return fleet_cost(reader, since=since, until=until, deadline=deadline)


def cost_page(request: HttpRequest) -> HttpResponse:
    form = PeriodForm(request.GET)
    since, until, notes = form.period()
    page = form.page_number()
    source, reader = open_source()
    problems: list[str] = []
    found = guarded(
        "the cost report", lambda: _report(reader, source.locations, since, until, page), problems
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
        shown = present(
            found.report,
            thread_url=lambda thread_id: _reversed("thread", thread_id),
            call_url=lambda thread_id, number: call_urls(thread_id)(number),
            checkpoint_url=lambda thread_id, checkpoint_id: _reversed("checkpoint", thread_id, checkpoint_id),
        )
        context.update(
            cost=shown,
            from_index=found.records_pending is not None,
            records_pending=found.records_pending or 0,
            pager=thread_pager(found, page, request.GET),
            pricing_notes=found.notes,
            pricing_path=str(found.pricing_path),
            figure=cost_figure(found.report),
            # The very JSON `mycel-memory cost --json` prints (tests compare them).
            cost_json=cost_document(found),
            **progress_context(found.progress, reload_url=request.get_full_path()),
        )
    return render_screen(request, "cost.html", None, context)

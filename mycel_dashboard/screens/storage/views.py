"""The Storage screen: every store's space, the threads ranked by size and growth, one thread's breakdown,
and the retention form (the retention screen previews what a policy frees)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.urls import NoReverseMatch, reverse

from memory_core import figures as fig
from memory_core.app.fleet_index import store_name
from memory_core.app.fleet_storage import fleet_storage_report
from memory_core.app.storage import StorageReport, StorageSort, thread_storage
from memory_core.footprint.growth import MIN_TURNS_TO_FIT
from memory_core.records import StoreProblem
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader, Result
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.screens.storage.charts import biggest_threads_figure
from mycel_dashboard.screens.storage.forms import StorageForm
from mycel_dashboard.screens.storage.presenter import (
    PER_PAGE,
    last_page,
    page_offset,
    ranking_page,
    store_cards,
    thread_bytes_card,
    thread_param,
)
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, start_builder
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def _breakdown_url(thread_id: str) -> str:
    param = thread_param(thread_id)
    return f"{reverse('storage')}?thread={param}" if param else ""


def _thread_url(thread_id: str) -> str:
    try:
        return reverse("thread", args=[thread_id])
    except NoReverseMatch:
        return ""


def storage_page(request: HttpRequest) -> HttpResponse:
    values, notes = StorageForm(request.GET).values()
    sort, turns, thread_id = StorageSort(values["sort"]), values["turns"], values["thread"]
    source, reader = open_source()
    problems: list[str] = []
    absent: list[str] = []
    read: list[StoreProblem] = []
    context: dict[str, Any] = {
        "source": source,
        "sort": sort.value,
        "turns": turns,
        "notes": notes,
        "min_turns_to_fit": MIN_TURNS_TO_FIT,
    }
    found = guarded(
        "the storage report",
        lambda: _report(reader, source.locations, turns, sort, values["page"], notes),
        problems,
    )
    report = found.value if found is not None else None
    if found is not None:
        read.extend(found.problems)
    if report is not None:
        context.update(
            report=report,
            ranking=ranking_page(report, per_page=PER_PAGE),
            stores=store_cards(report),
            figure=biggest_threads_figure(report.biggest, _breakdown_url),
            sorts=[(s.value, label) for s, label in _SORT_LABELS.items()],
        )
    if thread_id is not None:
        context.update(_breakdown(reader, thread_id, turns, report, read, notes, problems))
    for p in dict.fromkeys(read):
        (absent if p.expected_absence else problems).append(problem_text(p))
    context.update(problems=list(dict.fromkeys(problems)), absent=list(dict.fromkeys(absent)))
    return render_screen(request, "storage.html", None, context)


def _report(
    reader: MycelReader, locations: MycelLocations, turns: int, sort: StorageSort, page: int, notes: list[str]
) -> Result[StorageReport]:
    """One page of the ranking: from the fleet index when it can answer, else by walking the fleet's bytes;
    a page past the end shows the last (and says so)."""
    store = store_name(reader)

    def read(offset: int) -> Result[StorageReport]:
        return fleet_storage_report(
            reader,
            DashboardFleetIndex(),
            turns_ahead=turns,
            sort=sort,
            offset=offset,
            limit=PER_PAGE,
            read_later=lambda full: start_builder(locations, store, full=full),
        )

    found = read(page_offset(page, per_page=PER_PAGE))
    pages = last_page(found.value.thread_count, per_page=PER_PAGE)
    if page > pages:
        notes.append(
            f"There are only {fig.count(pages)} page{'s' if pages != 1 else ''} of threads: showing the last."
        )
        found = read(page_offset(pages, per_page=PER_PAGE))
    return found


_SORT_LABELS = {
    StorageSort.BYTES: "size today",
    StorageSort.GROWTH: "growth per turn",
    StorageSort.PROJECTED: "projected size",
}


def _breakdown(
    reader: MycelReader,
    thread_id: str,
    turns: int,
    report: StorageReport | None,
    read: list[StoreProblem],
    notes: list[str],
    problems: list[str],
) -> dict[str, Any]:
    fleet = report.total_bytes if report is not None else 0
    detail = guarded(
        f"the bytes of thread {thread_id!r}",
        lambda: thread_storage(reader, thread_id, turns_ahead=turns, fleet_bytes=fleet),
        problems,
    )
    if detail is None:
        return {}
    read.extend(detail.problems)
    if detail.value is None:
        notes.append(f"No checkpoint store holds a thread {thread_id!r}: nothing to break down.")
        return {}
    card = thread_bytes_card(reader, thread_id, problems, turns_ahead=turns, row=detail.value.thread)
    return {
        "detail": detail.value,
        "bytes_card": card,
        "detail_thread_url": _thread_url(thread_id),
    }

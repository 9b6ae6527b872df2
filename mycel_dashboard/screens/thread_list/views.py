"""Screen 1: every thread of every configured store."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memory_core.app.fleet_index import store_name
from memory_core.family import family_thread_ids, registered_only_rows
from memory_core.records import ThreadRow
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.live.pulse import newest_activity
from mycel_dashboard.screens.shared.caches import derived_from
from mycel_dashboard.screens.shared.family import family_param, read_agents
from mycel_dashboard.screens.shared.memory import ContextLimitInfo, ThreadMemories, guarded, problem_text
from mycel_dashboard.screens.shared.replays import thread_record
from mycel_dashboard.screens.thread_list.forms import ThreadListForm
from mycel_dashboard.screens.thread_list.heads import head_facts_reader
from mycel_dashboard.screens.thread_list.indexed import PageParts, fleet_page
from mycel_dashboard.screens.thread_list.presenter import (
    FLAG_LABELS,
    LastCall,
    column_headers,
    last_call_of,
    thread_page,
)
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, start_builder
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source


def thread_list(request: HttpRequest) -> HttpResponse:
    query, notes = ThreadListForm(request.GET).query()
    source, reader = open_source()
    problems: list[str] = []
    absent: list[str] = []
    agents = read_agents(reader, problems, absent)
    context_for = ThreadMemories(source.locations, override=query.context_limit)

    def limit_for(row: ThreadRow) -> ContextLimitInfo:
        return context_for(row).limit

    def estimates(rows: Sequence[ThreadRow]) -> dict[str, int | None]:
        found = reader.head_estimates(rows)
        problems.extend(problem_text(p) for p in found.problems)
        return found.value

    def last_calls(rows: Sequence[ThreadRow]) -> dict[str, LastCall]:
        """The record's last call of each row (the very record the Thread page draws)."""
        found = {}
        for row in rows:
            if row.head_checkpoint_id and row.messages:
                last = guarded(
                    f"the model calls of {row.thread_id!r}",
                    partial(_last_call, reader, row, context_for),
                    problems,
                )
                if last is not None:
                    found[row.thread_id] = last
        return found

    head_facts = head_facts_reader(reader, lambda row: context_for(row).settings, problems)
    fleet = fleet_page(
        reader,
        DashboardFleetIndex(),
        query,
        PageParts(
            limit_for,
            head_facts,
            last_calls,
            agents,
            frozenset(family_thread_ids(agents, query.family)) if query.family is not None else None,
        ),
        index_from=settings.DASHBOARD_FLEET_INDEX_FROM,
        start_builder=lambda full=True: start_builder(source.locations, store_name(reader), full=full),
    )
    if fleet is not None:
        page, index_note = fleet.page, fleet.note
        problems.extend(problem_text(p) for p in fleet.problems)
        live_since, live_known = fleet.newest, page.all_threads
    else:
        result = reader.list_threads()
        problems.extend(problem_text(p) for p in result.problems)
        # Failed registrations have no checkpoint, so only the registry knows them: rows of their own.
        # Kept with the list tuple, so the orderings derived from `rows` are kept too.
        rows = (
            derived_from(
                result.value,
                ("registered", agents),
                lambda: result.value + registered_only_rows(agents, (row.thread_id for row in result.value)),
            )
            if agents
            else result.value
        )
        page = thread_page(
            rows,
            query,
            limit_for=limit_for,
            head_facts=head_facts,
            estimates=estimates,
            agents=agents,
            last_calls=last_calls,
        )
        index_note = ""
        # What live.js's polls compare with: the newest activity this list shows, and how many threads.
        live_since, live_known = newest_activity(result.value), len(result.value)
    context = {
        "source": source,
        "query": query,
        "page": page,
        "columns": column_headers(query),
        "flag_choices": [(flag.value, label) for flag, label in FLAG_LABELS.items()],
        "problems": problems,
        "notes": notes,
        "absent": absent,
        "family_param": family_param(query.family) if query.family is not None else None,
        "index_note": index_note,
        "live_since": live_since,
        "live_known": live_known,
    }
    return render_screen(request, "threads.html", "thread-rows", context)


def _last_call(reader: MycelReader, row: ThreadRow, context_for: ThreadMemories) -> LastCall | None:
    return last_call_of(thread_record(reader, row, limit=context_for.override))

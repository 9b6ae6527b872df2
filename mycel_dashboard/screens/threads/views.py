"""Screen 1: every thread of every configured store."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from django.http import HttpRequest, HttpResponse

from memory_core.messages import Message
from memory_core.pruning import prune_decisions
from memory_core.records import StoreProblem, ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.reader import MycelReader
from memory_core.tokens import estimate_tokens
from mycel_dashboard.screens.shared.caches import BoundedCache
from mycel_dashboard.screens.shared.memory import ContextLimitInfo, MemoryContext, problem_text, thread_memory
from mycel_dashboard.screens.threads.forms import ThreadListForm
from mycel_dashboard.screens.threads.presenter import (
    FLAG_LABELS,
    HeadFacts,
    SortKey,
    ThreadListQuery,
    thread_page,
)
from mycel_dashboard.web.render import render_screen
from mycel_dashboard.web.source import open_source

_COLUMNS = (
    (SortKey.THREAD, "Thread", ""),
    (SortKey.NAME, "Name", ""),
    (SortKey.MODEL, "Model", ""),
    (SortKey.MESSAGES, "Messages", "num"),
    (SortKey.CHECKPOINTS, "Checkpoints", "num"),
    (SortKey.UPDATED, "Last activity", ""),
    (SortKey.BYTES, "On disk", "num"),
    (SortKey.FILL, "Context fill", ""),
    (SortKey.FLAGS, "Flags", ""),
)
_TEXT_COLUMNS = {SortKey.THREAD, SortKey.NAME, SortKey.MODEL}

# A thread's estimate and whether its newest checkpoint has trimmed/cleared results depend only on that
# checkpoint and the settings, so they are remembered per head checkpoint id.
_HEADS: BoundedCache[HeadFacts] = BoundedCache(20_000)
_DERIVING = threading.Lock()


def _columns(query: ThreadListQuery) -> list[dict[str, object]]:
    columns = []
    for key, label, css in _COLUMNS:
        active = key is query.sort
        if active:
            next_order = "asc" if query.descending else "desc"
        else:
            next_order = "asc" if key in _TEXT_COLUMNS else "desc"
        columns.append(
            {"key": key.value, "label": label, "css": css, "active": active, "next_order": next_order}
        )
    return columns


def _head_facts(
    reader: MycelReader,
    context_for: Callable[[ThreadRow], MemoryContext],
    problems: list[str],
) -> Callable[[Sequence[ThreadRow]], dict[str, HeadFacts]]:
    def head_facts(rows: Sequence[ThreadRow]) -> dict[str, HeadFacts]:
        found: dict[str, HeadFacts] = {}
        todo: list[ThreadRow] = []
        for row in rows:
            if not row.head_checkpoint_id or row.messages == 0:
                found[row.thread_id] = HeadFacts(
                    pruned=False, estimated_tokens=0 if row.head_checkpoint_id else None
                )
                continue
            cached = _HEADS.cached(_key(row, context_for))
            if cached is None:
                todo.append(row)
            else:
                found[row.thread_id] = cached
        if todo:
            # Many heads at once (a sort by flags reads all 10,000): one connection, each decoded once;
            # requests arriving together wait for one pass and reuse it.
            with _DERIVING:
                todo = [row for row in todo if not _reuse(row, context_for, found)]
                read_problems: list[StoreProblem] = []
                for row, messages in reader.head_messages(todo, read_problems):
                    facts = _facts_of(messages, context_for(row).settings)
                    _HEADS.put(_key(row, context_for), facts)
                    found[row.thread_id] = facts
                # The estimates are settings-free: kept with the head facts, a later fill sort reuses them.
                reader.keep_estimates(
                    (row, found[row.thread_id].estimated_tokens) for row in todo if row.thread_id in found
                )
                problems.extend(problem_text(p) for p in read_problems)
        return found

    return head_facts


def _key(row: ThreadRow, context_for: Callable[[ThreadRow], MemoryContext]) -> tuple[object, ...]:
    return (row.thread_id, row.head_checkpoint_id, context_for(row).settings)


def _reuse(
    row: ThreadRow, context_for: Callable[[ThreadRow], MemoryContext], found: dict[str, HeadFacts]
) -> bool:
    cached = _HEADS.cached(_key(row, context_for))
    if cached is not None:
        found[row.thread_id] = cached
    return cached is not None


def _facts_of(messages: tuple[Message, ...] | None, settings: MemorySettings) -> HeadFacts:
    if messages is None:
        return HeadFacts(pruned=False, estimated_tokens=None)
    result = prune_decisions(messages, settings=settings)
    return HeadFacts(
        pruned=any(d.action.changes_content for d in result.decisions),
        estimated_tokens=estimate_tokens(messages),
    )


def thread_list(request: HttpRequest) -> HttpResponse:
    query, notes = ThreadListForm(request.GET).query()
    source, reader = open_source()
    result = reader.list_threads()
    problems = [problem_text(p) for p in result.problems]
    contexts: dict[tuple[str | None, str | None], MemoryContext] = {}

    def context_for(row: ThreadRow) -> MemoryContext:
        # Config files are read once per (model, workspace) per request, not once per thread.
        key = (row.configured_model or row.model, row.cwd)
        if key not in contexts:
            contexts[key] = thread_memory(row, override=query.context_limit, locations=source.locations)
        return contexts[key]

    def limit_for(row: ThreadRow) -> ContextLimitInfo:
        return context_for(row).limit

    def estimates(rows: Sequence[ThreadRow]) -> dict[str, int | None]:
        found = reader.head_estimates(rows)
        problems.extend(problem_text(p) for p in found.problems)
        return found.value

    page = thread_page(
        result.value,
        query,
        limit_for=limit_for,
        head_facts=_head_facts(reader, context_for, problems),
        estimates=estimates,
    )
    context = {
        "source": source,
        "query": query,
        "page": page,
        "columns": _columns(query),
        "flag_choices": [(flag.value, label) for flag, label in FLAG_LABELS.items()],
        "problems": problems,
        "notes": notes,
    }
    return render_screen(request, "threads.html", "thread-rows", context)

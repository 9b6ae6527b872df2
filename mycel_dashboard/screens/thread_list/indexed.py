"""The Threads list of a big fleet: from the fleet index (sorted, filtered and paged in SQL), or, while
the index is being built, from what SQL alone can sort (newest activity, id). No Django here.

A fleet smaller than DASHBOARD_FLEET_INDEX_FROM threads with no index is listed in memory as before
(`None` from `fleet_page`): it needs no index, and every sort and flag is exact there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memory_core import figures
from memory_core.app.fleet_index import (
    FleetIndexStore,
    Freshness,
    IndexedThread,
    IndexQuery,
    look,
    store_name,
)
from memory_core.records import AgentRecord, StoreProblem, ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import ContextLimitInfo
from mycel_dashboard.screens.thread_list.presenter import (
    Flag,
    LastCall,
    PageHeadFacts,
    SortKey,
    ThreadListQuery,
    ThreadPage,
    shown_page,
)

# What the floor can order by without the index.
_FLOOR_SORTS = {SortKey.UPDATED, SortKey.THREAD}


@dataclass(frozen=True, slots=True)
class FleetPage:
    page: ThreadPage
    note: str  # what the page should say about the index ("" when it is complete and current)
    newest: float  # the newest activity listed (epoch seconds), for the live poll
    problems: tuple[StoreProblem, ...] = ()


@dataclass(frozen=True, slots=True)
class PageParts:
    """What turns rows into the page's items (the view's, as for the list in memory)."""

    limit_for: Callable[[ThreadRow], ContextLimitInfo]
    head_facts: Callable[[Sequence[ThreadRow]], Mapping[str, PageHeadFacts]]
    last_calls: Callable[[Sequence[ThreadRow]], Mapping[str, LastCall]]
    agents: Sequence[AgentRecord]
    family: frozenset[str] | None  # the family filter's thread ids


def fleet_page(
    reader: MycelReader,
    index: FleetIndexStore,
    query: ThreadListQuery,
    parts: PageParts,
    *,
    index_from: int,
    start_builder: Callable[..., object],
) -> FleetPage | None:
    """The page from the index or the floor; None when the fleet is small enough to list in memory."""
    freshness = look(reader, index)
    if freshness.ready:
        if freshness.needs_builder:
            start_builder()
        elif freshness.records_due:
            start_builder(full=False)
        return _from_index(reader, index, query, parts, freshness)
    problems: list[StoreProblem] = []
    per_page = max(1, query.per_page)
    by_id = query.sort is SortKey.THREAD
    descending = query.descending if query.sort in _FLOOR_SORTS else True
    total, heads = reader.backend.newest_heads(
        problems,
        limit=per_page,
        offset=(max(1, query.page) - 1) * per_page,
        by_id=by_id,
        descending=descending,
    )
    if freshness.state is None and total < index_from:
        return None
    start_builder()
    return _floor(reader, query, parts, freshness, total, heads, problems)


def _from_index(
    reader: MycelReader,
    index: FleetIndexStore,
    query: ThreadListQuery,
    parts: PageParts,
    freshness: Freshness,
) -> FleetPage:
    per_page = max(1, query.per_page)
    asked = IndexQuery(
        sort=query.sort.value,
        descending=query.descending,
        offset=(max(1, query.page) - 1) * per_page,
        limit=per_page,
        needle=query.q.strip().lower(),
        flag=query.flag.value if query.flag is not None else None,
        thread_ids=parts.family,
        context_limit=query.context_limit,
    )
    store = store_name(reader)
    total, all_threads, shown = index.page(store, asked)
    pages = max(1, -(-total // per_page))
    if query.page > pages and total:
        # Past the last page: the last one, as the list in memory answers.
        total, all_threads, shown = index.page(store, _at_page(asked, pages, per_page))
    known = {t.thread_id: PageHeadFacts(pruned=t.pruned, estimated_tokens=t.estimated_tokens) for t in shown}

    def head_facts(rows: Sequence[ThreadRow]) -> Mapping[str, PageHeadFacts]:
        # A limit set in the URL changes what is trimmed: the heads are read under it (the visible page).
        return parts.head_facts(rows) if query.context_limit else known

    page = shown_page(
        [t.row for t in shown],
        query,
        total=total,
        all_threads=all_threads,
        limit_for=parts.limit_for,
        head_facts=head_facts,
        agents=parts.agents,
        last_calls=parts.last_calls,
    )
    note = _catching_up(freshness)
    if query.flag is Flag.RECOMPACTS and (pending := index.records_pending(store)):
        # Re-compaction is told by each thread's record, which the record pass reads after the heads.
        note = " ".join(
            part
            for part in (
                note,
                f"{figures.count(pending)} threads' records of model calls are still being read: this filter "
                "is as of the records read so far.",
            )
            if part
        )
    return FleetPage(page, note, _newest(freshness, shown), tuple(freshness.problems))


def _at_page(asked: IndexQuery, page: int, per_page: int) -> IndexQuery:
    return IndexQuery(
        sort=asked.sort,
        descending=asked.descending,
        offset=(page - 1) * per_page,
        limit=per_page,
        needle=asked.needle,
        flag=asked.flag,
        thread_ids=asked.thread_ids,
        context_limit=asked.context_limit,
    )


def _floor(
    reader: MycelReader,
    query: ThreadListQuery,
    parts: PageParts,
    freshness: Freshness,
    total: int,
    heads: list[tuple[str, int, str]],
    problems: list[StoreProblem],
) -> FleetPage:
    needle = query.q.strip()
    # Until the index is built, a search finds a whole id only (that thread's own read).
    found = reader.read_thread_rows([needle] if needle else [thread_id for thread_id, _, _ in heads])
    problems.extend(found.problems)
    rows = found.value
    if needle:
        total = len(rows)
    page = shown_page(
        rows,
        query,
        total=total,
        all_threads=total if not needle else len(rows),
        limit_for=parts.limit_for,
        head_facts=parts.head_facts,
        agents=parts.agents,
        last_calls=parts.last_calls,
    )
    return FleetPage(
        page,
        _building(query, freshness),
        max((r.updated_at.timestamp() for r in rows if r.updated_at), default=0.0),
        tuple(problems),
    )


def _building(query: ThreadListQuery, freshness: Freshness) -> str:
    state = freshness.state
    progress = (
        f"{figures.count(state.done)} of {figures.count(state.total)} threads"
        if state is not None and state.total
        else "starting"
    )
    unsorted = []
    if query.sort not in _FLOOR_SORTS:
        unsorted.append(f"sorting by {query.sort.value}")
    if query.flag is not None:
        unsorted.append(f"the {query.flag.value} filter")
    if query.q.strip():
        unsorted.append("searching part of an id or a name (a whole id is found now)")
    if query.family is not None:
        unsorted.append("the family filter")
    waiting = f"; {', '.join(unsorted)} will work once it is done" if unsorted else ""
    if query.flag is Flag.RECOMPACTS:
        waiting += "; the re-compaction flag is only known for the rows shown"
    return (
        f"The fleet index is being built ({progress}): the list is ordered by "
        f"{'thread id' if query.sort is SortKey.THREAD else 'last activity'}, as the database alone can sort it; "
        f"context fill and flags are filled in for the rows shown{waiting}."
    )


def _catching_up(freshness: Freshness) -> str:
    if freshness.behind:
        return (
            f"{figures.count(freshness.behind)} threads moved since the fleet index last caught up: their figures here are "
            "as of before; the index is catching up in the background."
        )
    return ""


def _newest(freshness: Freshness, shown: Sequence[IndexedThread]) -> float:
    """The newest activity the index has seen (its watermark's time), else the page's newest."""
    state = freshness.state
    at = time_of_checkpoint_id(state.watermark) if state is not None and state.watermark else None
    if at is not None:
        return at.timestamp()
    return max((t.row.updated_at.timestamp() for t in shown if t.row.updated_at), default=0.0)

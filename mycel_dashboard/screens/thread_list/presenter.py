"""The thread list as the Threads screen shows it: flags, context fill, search, filter, sort and paging.

No Django here: the view parses the URL into a ThreadListQuery and renders the ThreadPage this returns.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, TypeVar

from memory_core.app.calls import ThreadCalls
from memory_core.call_record.calls import recompacts_every_call
from memory_core.family import agents_by_thread, family_thread_ids
from memory_core.memory_settings import compaction_trigger
from memory_core.records import AgentRecord, ThreadRow
from mycel_dashboard.screens.shared.caches import derived_from
from mycel_dashboard.screens.shared.memory import ContextLimitInfo


class Flag(StrEnum):
    COMPACTED = "compacted"
    PRUNED = "pruned"  # results trimmed or cleared under the current config
    QUEUED = "queued"
    SANDBOX = "sandbox"
    RECOMPACTS = "recompacts"  # Mycel main compacted at each of the thread's last calls (reference §3.4)
    BREAKER_OPEN = "breaker_open"  # Mycel dev turned automatic compaction off (mycel-dev §4.3)


FLAG_LABELS: dict[Flag, str] = {
    Flag.COMPACTED: "compacted",
    Flag.PRUNED: "trimmed / cleared",
    Flag.QUEUED: "queued items",
    Flag.SANDBOX: "sandbox",
    Flag.RECOMPACTS: "re-compacts every call",
    Flag.BREAKER_OPEN: "compaction off (breaker open)",
}
# Flags only the record of the calls tells (the visible page's, or every candidate's when filtered by).
_RECORD_FLAGS = frozenset({Flag.RECOMPACTS})


class SortKey(StrEnum):
    THREAD = "thread"
    NAME = "name"
    MODEL = "model"
    MESSAGES = "messages"
    CHECKPOINTS = "checkpoints"
    UPDATED = "updated"
    BYTES = "bytes"
    FILL = "fill"
    FLAGS = "flags"


# Newest activity first is what people open the list for.
DEFAULT_SORT = SortKey.UPDATED
PER_PAGE = 50


@dataclass(frozen=True, slots=True, kw_only=True)
class ThreadListQuery:
    q: str = ""
    flag: Flag | None = None
    sort: SortKey = DEFAULT_SORT
    descending: bool = True
    page: int = 1
    per_page: int = PER_PAGE
    context_limit: int | None = None  # overrides every thread's resolved limit
    family: str | None = None  # only this thread and its sub-agents, recursively (agent_registry.db)


@dataclass(frozen=True, slots=True)
class PageHeadFacts:
    """What only the newest checkpoint's messages can tell: computed for the visible page only."""

    pruned: bool  # some tool result is trimmed or cleared under the current config
    estimated_tokens: int | None  # Mycel's estimate of the stored messages


@dataclass(frozen=True, slots=True)
class LastCall:
    """The thread's last model call as Mycel made it (the record the Thread page draws)."""

    sent_tokens: int  # Mycel's estimate of what it sent
    context_limit: int  # the limit in force at that call
    over_trigger: bool
    recompacts: bool  # each of the last calls compacted again

    @property
    def fill(self) -> float:
        return self.sent_tokens / self.context_limit if self.context_limit else 0.0


def last_call_of(record: ThreadCalls) -> LastCall | None:
    if not record.calls:
        return None
    last = record.calls[-1]
    return LastCall(
        last.sent_tokens, last.context_limit, last.over_trigger, recompacts_every_call(record.calls)
    )


@dataclass(frozen=True, slots=True)
class ThreadListItem:
    row: ThreadRow
    limit: ContextLimitInfo
    fill: float | None  # Mycel's estimate / the limit; None when the estimate is unknown
    flags: tuple[Flag, ...]
    head: PageHeadFacts | None  # None = not computed (off the visible page)
    agent: AgentRecord | None = None  # the row's registration, when it is a sub-agent
    last: LastCall | None = None  # None = not computed (off the visible page) or no model call yet

    @property
    def registered_only(self) -> bool:
        """A registered sub-agent no other store knows: its registration failed before any checkpoint."""
        return self.agent is not None and self.row.checkpoints == 0 and self.row.head_checkpoint_id is None

    @property
    def estimated_tokens(self) -> int | None:
        if self.row.estimated_tokens is not None:
            return self.row.estimated_tokens
        return self.head.estimated_tokens if self.head is not None else None

    @property
    def over_trigger(self) -> bool:
        estimate = self.estimated_tokens
        return estimate is not None and estimate > compaction_trigger(self.limit.value)


@dataclass(frozen=True, slots=True)
class ThreadPage:
    items: tuple[ThreadListItem, ...]
    total: int  # after search and filter
    all_threads: int
    page: int
    pages: int
    query: ThreadListQuery

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def _matches(row: ThreadRow, needle: str) -> bool:
    if not needle:
        return True
    return needle in row.thread_id.lower() or (row.name is not None and needle in row.name.lower())


def _static_flags(row: ThreadRow) -> list[Flag]:
    flags: list[Flag] = []
    if row.summaries > 0:
        flags.append(Flag.COMPACTED)
    if row.queued > 0:
        flags.append(Flag.QUEUED)
    if row.sandbox_state:
        flags.append(Flag.SANDBOX)
    if row.breaker_open:
        flags.append(Flag.BREAKER_OPEN)
    return flags


# Sort keys that need only the row: the list sorts rows and builds items for the visible page alone.
_ROW_SORT_VALUES: dict[SortKey, Callable[[ThreadRow], Any]] = {
    SortKey.THREAD: lambda row: row.thread_id,
    SortKey.NAME: lambda row: (row.name or "").lower() or None,
    SortKey.MODEL: lambda row: (row.model or "").lower() or None,
    SortKey.MESSAGES: lambda row: row.messages,
    SortKey.CHECKPOINTS: lambda row: row.checkpoints,
    SortKey.UPDATED: lambda row: row.updated_at.timestamp() if isinstance(row.updated_at, datetime) else None,
    SortKey.BYTES: lambda row: row.bytes_on_disk,
}
_ITEM_SORT_VALUES: dict[SortKey, Callable[[ThreadListItem], Any]] = {
    SortKey.FILL: lambda item: item.fill,
    SortKey.FLAGS: lambda item: len(item.flags),
}
E = TypeVar("E")


def _sorted(
    entries: list[E], value_of: Callable[[E], Any], thread_id_of: Callable[[E], str], descending: bool
) -> list[E]:
    # Unknown values (no name, no estimate) always sink to the bottom, whichever the direction.
    keyed = [(value_of(entry), entry) for entry in entries]
    known = [(value, thread_id_of(entry), entry) for value, entry in keyed if value is not None]
    unknown = sorted((entry for value, entry in keyed if value is None), key=thread_id_of)
    known.sort(key=lambda triple: (triple[0], triple[1]), reverse=descending)
    return [triple[2] for triple in known] + unknown


def list_item(
    row: ThreadRow,
    head: PageHeadFacts | None,
    known_estimate: int | None = None,
    last: LastCall | None = None,
    *,
    query: ThreadListQuery,
    limit_for: Callable[[ThreadRow], ContextLimitInfo],
    agent: AgentRecord | None = None,
) -> ThreadListItem:
    """One row of the list as the page shows it: its limit, fill and flags."""
    limit = ContextLimitInfo(query.context_limit, "set in the URL") if query.context_limit else limit_for(row)
    estimate = row.estimated_tokens
    if estimate is None and head is not None:
        estimate = head.estimated_tokens
    if estimate is None:
        estimate = known_estimate
    fill = estimate / limit.value if estimate is not None and limit.value > 0 else None
    flags = _static_flags(row)
    if head is not None and head.pruned:
        flags.insert(1 if Flag.COMPACTED in flags else 0, Flag.PRUNED)
    if last is not None and last.recompacts:
        flags.insert(flags.index(Flag.COMPACTED) + 1 if Flag.COMPACTED in flags else 0, Flag.RECOMPACTS)
    return ThreadListItem(
        last=last, row=row, limit=limit, fill=fill, flags=tuple(flags), head=head, agent=agent
    )


def shown_page(
    shown: Sequence[ThreadRow],
    query: ThreadListQuery,
    *,
    total: int,
    all_threads: int,
    limit_for: Callable[[ThreadRow], ContextLimitInfo],
    head_facts: Callable[[Sequence[ThreadRow]], Mapping[str, PageHeadFacts]],
    agents: Sequence[AgentRecord] = (),
    last_calls: Callable[[Sequence[ThreadRow]], Mapping[str, LastCall]] | None = None,
) -> ThreadPage:
    """A page whose rows were searched, filtered, sorted and paged elsewhere (the fleet index, in SQL):
    only the visible rows become items."""
    per_page = max(1, query.per_page)
    pages = max(1, math.ceil(total / per_page))
    page = min(max(1, query.page), pages)
    registered = agents_by_thread(agents)
    heads = head_facts(shown)
    lasts = last_calls(shown) if last_calls is not None else {}
    items = tuple(
        list_item(
            row,
            heads.get(row.thread_id),
            last=lasts.get(row.thread_id),
            query=query,
            limit_for=limit_for,
            agent=registered.get(row.thread_id),
        )
        for row in shown
    )
    return ThreadPage(items=items, total=total, all_threads=all_threads, page=page, pages=pages, query=query)


def thread_page(
    rows: Sequence[ThreadRow],
    query: ThreadListQuery,
    *,
    limit_for: Callable[[ThreadRow], ContextLimitInfo],
    head_facts: Callable[[Sequence[ThreadRow]], Mapping[str, PageHeadFacts]],
    estimates: Callable[[Sequence[ThreadRow]], Mapping[str, int | None]] | None = None,
    agents: Sequence[AgentRecord] = (),
    last_calls: Callable[[Sequence[ThreadRow]], Mapping[str, LastCall]] | None = None,
) -> ThreadPage:
    """Search, filter, sort and page the thread list.

    `head_facts` decodes threads' newest checkpoints (many at once), so it is only asked for the visible
    page, or for every candidate when the list is filtered or sorted by what it tells. Sorting by context
    fill needs only the estimates, which `estimates` gives (each head decoded once, ever). `agents` (the
    sub-agent registry) marks sub-agent rows and serves the family filter. `last_calls` gives the record's
    last call of many threads (what was sent, and whether Mycel re-compacts at every call); like the head
    facts, it is asked for the visible page only, or for every candidate when filtered by what it tells.
    """
    calls_of = last_calls or (lambda rows: {})
    needle = query.q.strip().lower()
    # A new registry comes with a new version of the files, so with a new `rows`: keying on rows suffices.
    family = family_thread_ids(agents, query.family) if query.family is not None else None
    candidates = derived_from(
        rows,
        ("search", needle, query.family),
        lambda: [
            row for row in rows if _matches(row, needle) and (family is None or row.thread_id in family)
        ],
    )
    registered = agents_by_thread(agents)

    def item(
        row: ThreadRow,
        head: PageHeadFacts | None,
        known_estimate: int | None = None,
        last: LastCall | None = None,
    ) -> ThreadListItem:
        return list_item(
            row,
            head,
            known_estimate,
            last,
            query=query,
            limit_for=limit_for,
            agent=registered.get(row.thread_id),
        )

    per_page = max(1, query.per_page)
    if query.flag is None and query.sort in _ROW_SORT_VALUES:
        # Order and page the rows; only the visible page becomes items (and reads its heads).
        rows_in_order = derived_from(
            rows,
            ("order", needle, query.family, query.sort, query.descending),
            lambda: _sorted(
                candidates, _ROW_SORT_VALUES[query.sort], lambda row: row.thread_id, query.descending
            ),
        )
        total = len(rows_in_order)
        pages = max(1, math.ceil(total / per_page))
        page = min(max(1, query.page), pages)
        shown = rows_in_order[(page - 1) * per_page : page * per_page]
        heads, lasts = head_facts(shown), calls_of(shown)
        visible = [item(row, heads.get(row.thread_id), last=lasts.get(row.thread_id)) for row in shown]
    else:
        needs_heads = query.flag is Flag.PRUNED or query.sort is SortKey.FLAGS
        by_estimate = query.sort is SortKey.FILL and not needs_heads and estimates is not None
        estimated = estimates(candidates) if by_estimate and estimates is not None else {}
        every_head = head_facts(candidates) if needs_heads else {}
        every_last = calls_of(candidates) if query.flag in _RECORD_FLAGS else {}
        items = [
            item(
                row,
                every_head.get(row.thread_id),
                estimated.get(row.thread_id),
                every_last.get(row.thread_id),
            )
            for row in candidates
        ]
        if query.flag is not None:
            items = [entry for entry in items if query.flag in entry.flags]
        by_row = _ROW_SORT_VALUES.get(query.sort)

        def value_of(entry: ThreadListItem) -> Any:
            return by_row(entry.row) if by_row is not None else _ITEM_SORT_VALUES[query.sort](entry)

        items = _sorted(items, value_of, lambda entry: entry.row.thread_id, query.descending)
        total = len(items)
        pages = max(1, math.ceil(total / per_page))
        page = min(max(1, query.page), pages)
        shown_items = items[(page - 1) * per_page : page * per_page]
        heads = head_facts([entry.row for entry in shown_items if entry.head is None])
        lasts = calls_of([entry.row for entry in shown_items if entry.last is None])
        visible = [
            entry
            if entry.head is not None and entry.last is not None
            else item(
                entry.row,
                entry.head or heads.get(entry.row.thread_id),
                None,
                entry.last or lasts.get(entry.row.thread_id),
            )
            for entry in shown_items
        ]
    return ThreadPage(
        items=tuple(visible),
        total=total,
        all_threads=len(rows),
        page=page,
        pages=pages,
        query=query,
    )


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


def column_headers(query: ThreadListQuery) -> list[dict[str, object]]:
    """The table's headers, each with the order a click on it sorts by."""
    columns: list[dict[str, object]] = []
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

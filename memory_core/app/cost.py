"""Every model call of every thread with its provider usage, model and day: what the cost report sums.

A thread's calls are its head's AI messages (call N is the N-th, as on the Thread page), then the AI
messages of its abandoned branches (a rolled-back head, a fork's other side) that the head does not
hold, each once (by message id). A branch end is a checkpoint no later checkpoint carries forward: no
child (nor, on dev's layout without parent ids, the next checkpoint) holds as many messages. Only the
head and those ends are decoded; a message's day is the creation time of the oldest checkpoint holding
it, from the series the reader already has.

Kept per thread head (memory_core/memo.py): checkpoints are only appended, so the same head and count
mean the same calls, and a new checkpoint recomputes that thread alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any

from memory_core.app.fleet_calls import Budget, FleetProgress, progress_json
from memory_core.call_record.calls import checkpoints_holding, holder_of
from memory_core.economics.cost import (
    CallUsage,
    CostReport,
    PriceBook,
    Usage,
    ai_calls,
    cost_json,
    cost_report,
    read_usage,
)
from memory_core.memo import Key, Memo
from memory_core.messages import Message
from memory_core.records import CheckpointRow, ProblemKind, StoreProblem, ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.reader import MycelReader, Result
from memory_core.stores.runtime_config import get_pricing_file

ABANDONED = "abandoned branch"

_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})
THREAD_CALLS: Memo[Result[tuple[CallUsage, ...]]] = Memo("stores.cost_calls", max_entries=20_000)


def _clean(result: Result[tuple[CallUsage, ...]]) -> bool:
    return not any(p.kind in _TRANSIENT for p in result.problems)


def list_fleet_calls(reader: MycelReader, *, since: date | None = None) -> Result[tuple[CallUsage, ...]]:
    """Every thread's calls (list_thread_calls for each listed thread with checkpoints); with `since`,
    threads whose head was written before that day are skipped, as none of their calls can be later."""
    return fleet_calls_until(reader, since=since, deadline=None)[0]


def fleet_calls_until(
    reader: MycelReader, *, since: date | None, deadline: float | None
) -> tuple[Result[tuple[CallUsage, ...]], FleetProgress]:
    """`list_fleet_calls`, newest activity first, with fleet_calls' deadline rule: past `deadline` only
    the threads whose calls are kept are taken (one is always read), the rest counted as pending."""
    listed = reader.list_threads()
    problems: list[StoreProblem] = list(listed.problems)
    calls: list[CallUsage] = []
    analysed = pending = 0
    budget = Budget(deadline)
    for row in listed.value:
        if row.head_checkpoint_id is None or _before(row.head_checkpoint_id, since):
            continue
        if budget.spent():
            kept = THREAD_CALLS.get(_calls_key(reader, row))
            if kept is None:
                pending += 1
                continue
            found = kept
        else:
            found = _thread_calls(reader, row, budget.counted(partial(_read_thread_calls, reader, row)))
        analysed += 1
        calls.extend(found.value)
        problems.extend(p for p in found.problems if p not in problems)
    return Result(tuple(calls), tuple(problems)), FleetProgress(analysed, pending)


def _before(head_id: str, since: date | None) -> bool:
    # A call's time is its holder checkpoint's, and no checkpoint id is newer than the head's (uuid6).
    head_time = time_of_checkpoint_id(head_id) if since is not None else None
    return head_time is not None and since is not None and head_time.astimezone(UTC).date() < since


def list_thread_calls(reader: MycelReader, row: ThreadRow) -> Result[tuple[CallUsage, ...]]:
    """One thread's calls, kept per (store, thread, head, checkpoint count)."""
    return _thread_calls(reader, row, partial(_read_thread_calls, reader, row))


def _thread_calls(
    reader: MycelReader, row: ThreadRow, compute: Callable[[], Result[tuple[CallUsage, ...]]]
) -> Result[tuple[CallUsage, ...]]:
    return THREAD_CALLS.get_or_compute(_calls_key(reader, row), compute, keep=_clean)


def _calls_key(reader: MycelReader, row: ThreadRow) -> Key:
    # No settings digest: usage is what the provider reported, under whatever config. Not fleet_calls'
    # reductions memo either: these are read from every branch end, not from the head's record.
    return Key(
        reader.store_key, thread=row.thread_id, head=row.head_checkpoint_id, what=("cost", row.checkpoints)
    )


def _read_thread_calls(reader: MycelReader, row: ThreadRow) -> Result[tuple[CallUsage, ...]]:
    listed = reader.list_checkpoints(row.thread_id)
    problems = list(listed.problems)
    checkpoints = listed.value  # newest first
    if not checkpoints:
        return Result((), tuple(problems))
    head = row.head_checkpoint_id or checkpoints[0].checkpoint_id
    by_id = {c.checkpoint_id: c for c in checkpoints}
    calls: list[CallUsage] = []
    seen: set[object] = set()
    for end in [head, *_branch_ends(checkpoints, head)]:
        state = reader.get_state(row.thread_id, end)
        problems.extend(p for p in state.problems if p not in problems)
        if state.value is None:
            continue
        holding = checkpoints_holding(_lineage_rows(checkpoints, end), end)
        number = 0
        for index, message in ai_calls(state.value.messages):
            number += 1
            mark = _identity(index, message)
            if mark in seen:
                continue
            seen.add(mark)
            holder = by_id.get(holder_of(index, holding) or end)
            calls.append(_call(row, message, holder, number if end == head else None, end != head))
    return Result(tuple(calls), tuple(problems))


def _identity(index: int, message: Message) -> object:
    # Without an id, an AI message is the same call when it sits at the same place with the same text.
    return message.id if message.id else ("#", index, message.text)


def _call(
    row: ThreadRow, message: Message, holder: CheckpointRow | None, number: int | None, abandoned: bool
) -> CallUsage:
    if message.model_name:
        model, source = message.model_name, "response"
    elif holder is not None and holder.model:
        model, source = holder.model, "checkpoint"
    elif row.model:
        model, source = row.model, "thread"
    else:
        model, source = None, "unknown"
    usage = read_usage(message.usage_metadata)
    return CallUsage(
        thread_id=row.thread_id,
        call=number,
        message_id=message.id,
        model=model,
        model_from=source,
        at=holder.created_at if holder else None,
        checkpoint_id=holder.checkpoint_id if holder else None,
        branch=ABANDONED if abandoned else None,
        usage=usage if isinstance(usage, Usage) else None,
        no_usage=None if isinstance(usage, Usage) else usage,
    )


def _lineage_rows(checkpoints: Sequence[CheckpointRow], end: str) -> Sequence[CheckpointRow]:
    # With parent ids the lineage is walked from `end`; without them (dev) it is every older checkpoint.
    if any(c.parent_checkpoint_id for c in checkpoints):
        return checkpoints
    ids = [c.checkpoint_id for c in checkpoints]
    return checkpoints[ids.index(end) :] if end in ids else checkpoints


def _branch_ends(checkpoints: Sequence[CheckpointRow], head: str) -> list[str]:
    """Checkpoints whose messages nothing later carries forward (the head excluded), oldest first."""
    oldest_first = list(reversed(checkpoints))
    if any(c.parent_checkpoint_id for c in oldest_first):
        children: dict[str, list[CheckpointRow]] = {}
        for c in oldest_first:
            if c.parent_checkpoint_id:
                children.setdefault(c.parent_checkpoint_id, []).append(c)
        followers = {c.checkpoint_id: children.get(c.checkpoint_id, []) for c in oldest_first}
    else:
        # Dev's layout has no parent ids: each checkpoint's follower is the next one.
        followers = {c.checkpoint_id: oldest_first[i + 1 : i + 2] for i, c in enumerate(oldest_first)}
    ends: list[str] = []
    for c in oldest_first:
        if c.checkpoint_id == head or not c.messages:
            continue
        if not any((f.messages or 0) >= c.messages for f in followers[c.checkpoint_id]):
            ends.append(c.checkpoint_id)
    return ends


@dataclass(frozen=True, slots=True)
class FleetCost:
    """The report over a period and what to say about its inputs (the page and the CLI say the same)."""

    report: CostReport
    pricing_path: Path
    notes: tuple[str, ...]  # about the pricing cache: absent, unreadable, stale
    problems: tuple[StoreProblem, ...]  # from the stores
    progress: FleetProgress
    # From the fleet index (memory_core/app/fleet_cost.py): its threads whose calls are as of an older head,
    # or not read yet; None when the report walked the fleet's checkpoints.
    records_pending: int | None = None
    threads_offset: int = 0  # the report's `threads` are this far down the costliest-first order


@dataclass(frozen=True, slots=True)
class Pricing:
    """The config home's pricing cache as Mycel reads it: the book (None: nothing to price) and why."""

    book: PriceBook | None
    path: Path
    notes: tuple[str, ...]  # why nothing is priced, or why the prices may be Mycel's no more


def pricing_of(reader: MycelReader, *, now: datetime | None = None) -> Pricing:
    """The one reading of pricing_cache.json behind every priced figure (Cost, the prompt-cache cost)."""
    pricing = get_pricing_file(reader.locations)
    notes = [p.message for p in pricing.problems]
    book: PriceBook | None = None
    if not pricing.exists:
        notes.append(f"No pricing cache at {pricing.path}: nothing is priced; tokens are still counted.")
    elif pricing.document:
        book = PriceBook.from_document(pricing.document, now=now or datetime.now(UTC))
        notes.extend(book.problems)
        if not book.prices:
            # Mycel treats a cache without prices as invalid and fetches again; there is nothing to price.
            notes.append(
                f"{pricing.path} holds no model prices: nothing is priced; tokens are still counted."
            )
            book = None
        elif book.stale and book.age_s is not None:
            notes.append(
                f"The pricing cache is {book.age_s / 3600:.0f} h old: Mycel ignores a cache older than 24 h "
                "and fetches prices again, so the prices it uses today may differ."
            )
    return Pricing(book, pricing.path, tuple(notes))


def fleet_cost(
    reader: MycelReader,
    *,
    since: date | None,
    until: date | None,
    now: datetime | None = None,
    deadline: float | None = None,
) -> FleetCost:
    """Every thread's calls priced by the config home's pricing_cache.json: the one function behind the
    Cost screen and `mycel-memory cost`; with `deadline`, over the threads read by then."""
    calls, progress = fleet_calls_until(reader, since=since, deadline=deadline)
    pricing = pricing_of(reader, now=now)
    report = cost_report(calls.value, pricing.book, since=since, until=until)
    return FleetCost(report, pricing.path, pricing.notes, calls.problems, progress)


def cost_document(found: FleetCost) -> dict[str, Any]:
    """`mycel-memory cost --json`, and every figure of the Cost screen."""
    return {
        **cost_json(found.report),
        **progress_json(found.progress),
        "from_index": found.records_pending is not None,
        "records_pending": found.records_pending or 0,
        "threads_offset": found.threads_offset,
    }

"""The record pass of the fleet index: each thread's record of model calls, tallied (RecordTally) and kept
beside its head facts, so the fleet's memory health (fill as sent at the last call, re-compaction, summaries
not stored, calls with no usage, the estimate against the provider's count) is read from the index in one
query, never by walking the fleet on a scrape.

A record costs far more than a head's facts (every checkpoint, the summaries, the config's history), so the
pass runs after the head pass, newest activity first, and a look only marks it due. A thread whose head
moved keeps its last tally until the pass reads the new head: alerts do not flap while it catches up, and
`records_due` says how far behind it is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from memory_core.app.context_reports import CONTEXT_REPORTS
from memory_core.app.cost import list_thread_calls, pricing_of
from memory_core.app.fleet_index import (
    FleetIndexStore,
    IndexedThread,
    RecordTally,
    index_rows,
    store_name,
    usage_order,
)
from memory_core.app.kept_reports import thread_reductions
from memory_core.app.thread import thread_facts
from memory_core.economics.cost import CallUsage, PriceBook, UsageGroup, group_report, usage_groups
from memory_core.stores.reader import MycelReader

log = logging.getLogger(__name__)

RECORD_CHUNK = 100  # records read and kept per step (each reads a thread's every checkpoint)
INLINE_RECORDS = 50  # records a request reads itself (a small fleet's first scrape); the rest: background


def record_tally(
    memory: dict[str, Any],
    head: str,
    usage: tuple[UsageGroup, ...] = (),
    unmetered: tuple[CallUsage, ...] = (),
    book: PriceBook | None = None,
) -> RecordTally:
    """The tally of a thread's record (thread_facts' "memory") read at `head`, with its calls' usage (its
    cost for the order of threads at `book`'s prices)."""
    calls = memory["calls"]
    total = group_report(usage, (), book).total
    last = calls[-1] if calls else None
    measured = [c for c in calls if c["provider_input_tokens"] is not None]
    limit = last["context_limit"] if last else 0
    return RecordTally(
        head=head,
        calls=len(calls),
        calls_without_usage=sum(
            1 for c in calls if c["provider_input_tokens"] is None and not c.get("refused", False)
        ),
        compactions=sum(1 for c in calls if c["compacted"]),
        compactions_not_stored=len(memory["compactions_not_stored"]),
        trimmed_results=(last["soft_trimmed"] + last["hard_cleared"]) if last else 0,
        recompacting=bool(memory["recompacts_every_call"]),
        fill_sent=last["estimated_tokens"]["sent"] / limit if last and limit > 0 else None,
        provider_tokens=sum(c["provider_input_tokens"] for c in measured),
        estimated_tokens=sum(c["estimated_tokens"]["sent"] for c in measured),
        usage=usage,
        unmetered=unmetered,
        usage_calls=total.calls,
        tokens=total.usage.total,
        cost_order=total.cost_usd or Decimal(0),
    )


def thread_usage(
    reader: MycelReader, thread: IndexedThread
) -> tuple[tuple[UsageGroup, ...], tuple[CallUsage, ...]]:
    """The thread's calls as the Cost report reads them (its one function), grouped as the index keeps them:
    priced when a report reads them, so a new pricing cache prices every kept call at once."""
    groups, without = usage_groups(list_thread_calls(reader, thread.row).value)
    return tuple(sorted(groups, key=usage_order)), tuple(without)


def thread_record_tally(
    reader: MycelReader, thread: IndexedThread, book: PriceBook | None
) -> RecordTally | None:
    """A thread's tally at its indexed head (None without a head), its cost order at `book`'s prices (the
    pricing cache's digest is in the index's version: a new cache makes every record due again)."""
    head = thread.row.head_checkpoint_id
    if head is None:
        return None
    usage, unmetered = thread_usage(reader, thread)
    tally = record_tally(thread_facts(reader, thread.row)["memory"], head, usage, unmetered, book)
    return replace(tally, reports=thread_reductions(reader, thread.row, CONTEXT_REPORTS))


def build_records(
    reader: MycelReader,
    index: FleetIndexStore,
    *,
    limit: int | None = None,
    chunk: int = RECORD_CHUNK,
    on_progress: Callable[[int], None] | None = None,
) -> int | None:
    """Read the records the index lacks, newest activity first (at most `limit`), under the builder's lock;
    how many were read, or None when another builder holds the lock."""
    store = store_name(reader)
    done = 0
    with index.builder_lock(store) as mine:
        if not mine:
            return None
        failed: set[str] = set()  # a record that could not be read stays due: this pass asks no more
        while limit is None or done < limit:
            want = chunk if limit is None else min(chunk, limit - done)
            due = [t for t in index.records_due(store, want + len(failed)) if t not in failed][:want]
            if not due:
                break
            tallies = _tallies(reader, index_rows(index, store, due))
            failed.update(set(due) - {thread.thread_id for thread, _ in tallies})
            index.put_records(store, tallies)
            done += len(due)
            if on_progress is not None:
                on_progress(done)
    if done:
        log.info("fleet index: %d records of %s read", done, store)
    return done


def _tallies(
    reader: MycelReader, threads: Sequence[IndexedThread]
) -> list[tuple[IndexedThread, RecordTally]]:
    out: list[tuple[IndexedThread, RecordTally]] = []
    book = pricing_of(reader).book  # read once per chunk
    for thread in threads:
        try:
            tally = thread_record_tally(reader, thread, book)
        except Exception:  # noqa: BLE001 - one unreadable record must not stop the fleet's; it stays due
            log.exception("fleet index: the record of %s could not be read", thread.thread_id)
            continue
        if tally is not None:
            out.append((thread, tally))
    return out

"""Every thread's record, reduced for the fleet reports (calibration, tool pressure, the prompt-cache cost).

The record is `thread_calls` under the thread's config as it was then, exactly what `mycel-memory calls`
prints. A fleet report needs only a small reduction of it per thread (a tally, a few numbers per call),
so `reduce_fleet` keeps those, one memo for every report, per thread head: a warm report reads nothing,
a thread that moved is the only one rebuilt, and no memo holds the fleet's messages. The whole records
are kept only for the few threads last read (`recorded_thread`: the cache screen's one-thread view).

A page passes a deadline: threads are taken newest activity first, and once it has passed only the
reductions already kept are used; the rest are counted as pending, to be computed by the next request.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar

from memory_core.app.calls import TRANSIENT, ThreadCalls, record_configured, thread_calls
from memory_core.app.thread_settings import project_folder, thread_model
from memory_core.call_record.evidence import Configured
from memory_core.memo import Key, Memo, digest
from memory_core.records import StoreProblem, ThreadRow
from memory_core.rules.profile import RulesProfile
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import change_points
from memory_core.tokens import default_counter

T = TypeVar("T")
V = TypeVar("V")

# Whole records (messages included) for the threads last read one by one; the fleet keeps reductions.
_RECORDS: Memo[ThreadCalls] = Memo("stores.fleet_records", max_entries=32)


@dataclass(frozen=True, slots=True)
class _Reduced:
    value: object
    problems: tuple[StoreProblem, ...]


# Every report's per-thread reductions: small, so sized for a 10,000-thread fleet in several reports.
_REDUCTIONS: Memo[_Reduced] = Memo("stores.fleet_reductions", max_entries=60_000)


class Budget:
    """A fleet loop's deadline (a `time.monotonic()` time, None: none): spent once it has passed and this
    loop computed at least one thread, so each reload of a page goes on from where the last stopped."""

    def __init__(self, deadline: float | None) -> None:
        self.deadline = deadline
        self.computed = 0

    def spent(self) -> bool:
        return self.deadline is not None and self.computed > 0 and time.monotonic() >= self.deadline

    def counted(self, compute: Callable[[], V]) -> Callable[[], V]:
        """`compute`, counted when it runs (a kept value, or one another request computes, is not)."""

        def run() -> V:
            self.computed += 1
            return compute()

        return run


@dataclass(frozen=True, slots=True)
class FleetProgress:
    """How much of the fleet a report covers: all of it without a deadline."""

    analysed: int
    pending: int  # threads left out because the deadline passed before their reduction was computed

    @property
    def total(self) -> int:
        return self.analysed + self.pending


def progress_json(progress: FleetProgress) -> dict[str, int]:
    """The two fields every fleet report's --json (and its page's context) carries."""
    return {"analysed_threads": progress.analysed, "pending_threads": progress.pending}


@dataclass(frozen=True, slots=True)
class FleetReduction(Generic[T]):
    threads: tuple[tuple[ThreadRow, T], ...]  # the analysed threads, newest activity first
    problems: tuple[StoreProblem, ...]
    progress: FleetProgress

    @property
    def values(self) -> tuple[T, ...]:
        return tuple(value for _row, value in self.threads)


def recorded_thread(
    reader: MycelReader,
    row: ThreadRow,
    *,
    rules: RulesProfile | None = None,
    today: tuple[Configured, str] | None = None,
) -> ThreadCalls:
    """The thread's model calls as Mycel made them, under its effective config (memoized per head).

    `today` is the config and its digest when the caller already resolved them (a fleet report resolves
    each model and workspace once, not each thread)."""
    configured, settings_digest = today or _today(reader, row)

    def compute() -> ThreadCalls:
        return thread_calls(reader, row, configured, counter=default_counter(), rules=rules)

    if row.head_checkpoint_id is None:
        return compute()
    return _RECORDS.get_or_compute(
        _key(reader.store_key, row, settings_digest, rules), compute, keep=lambda found: not found.transient
    )


def _key(store: Hashable, row: ThreadRow, settings_digest: str, rules: RulesProfile | None) -> Key:
    return Key(
        store=store,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=settings_digest,
        what=(row.checkpoints, row.summaries, rules),
    )


def _today(reader: MycelReader, row: ThreadRow) -> tuple[Configured, str]:
    """The record's config for the thread (as it was then) and its digest, which leaves out the moment
    it was read as of: threads read between the same config changes share it."""
    configured = record_configured(reader.locations, row)
    return configured, digest(replace(configured, as_of=None))


def _fleet_today(reader: MycelReader) -> Iterator[tuple[ThreadRow, tuple[Configured, str]]]:
    # The record's config depends on the thread's model and workspace, and on which of the config files'
    # changes came before its newest activity: read once per such triple, per report.
    points: dict[tuple[object, object], tuple[datetime, ...]] = {}
    resolved: dict[tuple[object, object, int], tuple[Configured, str]] = {}
    for row in reader.list_threads().value:
        if row.head_checkpoint_id is None:
            continue
        pair = (thread_model(row), project_folder(reader.locations, row))
        if pair not in points:
            points[pair] = change_points(reader.locations, project_folder(reader.locations, row))
        moment = row.updated_at
        epoch = bisect_right(points[pair], moment) if moment is not None else -1
        triple = (*pair, epoch)
        if triple not in resolved:
            resolved[triple] = _today(reader, row)
        configured, settings_digest = resolved[triple]
        yield row, (replace(configured, as_of=moment), settings_digest)


def fleet_records(reader: MycelReader) -> Iterator[tuple[ThreadRow, ThreadCalls]]:
    """Every thread with checkpoints, newest activity first, with its whole record (tests and tools that
    need the messages; the reports use `reduce_fleet`, which keeps no record)."""
    for row, today in _fleet_today(reader):
        yield row, recorded_thread(reader, row, today=today)


def reduce_fleet(
    reader: MycelReader,
    what: Hashable,
    reduce: Callable[[ThreadRow, ThreadCalls], T],
    *,
    vary: Callable[[Configured], Hashable] | None = None,
    deadline: float | None = None,
) -> FleetReduction[T]:
    """`reduce(row, record)` for every thread with checkpoints, newest activity first, kept per head.

    `what` names the reduction (and anything it depends on: encodings…); `vary` adds what it depends on
    that follows from the thread's config (a proposal over it). `deadline` (a `time.monotonic()` time):
    past it only kept reductions are taken, though one is always computed, so each reload goes on.
    A reduction whose record met a lock or a time limit is returned but not kept."""
    store_key = reader.store_key  # one report reads one version of the store
    threads: list[tuple[ThreadRow, T]] = []
    problems: list[StoreProblem] = []
    pending = 0
    budget = Budget(deadline)
    for row, (configured, settings_digest) in _fleet_today(reader):
        key = _key(store_key, row, settings_digest, None)
        key = key._replace(what=(what, key.what, vary(configured) if vary else None))
        if budget.spent():
            found = _REDUCTIONS.get(key)
            if found is None:
                pending += 1
                continue
        else:
            compute = _reducer(reader, row, (configured, settings_digest), reduce)
            found = _REDUCTIONS.get_or_compute(key, budget.counted(compute), keep=_lasting)
        threads.append((row, found.value))  # type: ignore[arg-type]  # kept under this `what`'s key only
        problems.extend(p for p in found.problems if p not in problems)
    return FleetReduction(tuple(threads), tuple(problems), FleetProgress(len(threads), pending))


def _reducer(
    reader: MycelReader,
    row: ThreadRow,
    today: tuple[Configured, str],
    reduce: Callable[[ThreadRow, ThreadCalls], object],
) -> Callable[[], _Reduced]:
    def compute() -> _Reduced:
        # Through the records memo: concurrent first visits of a big thread build its record once.
        record = recorded_thread(reader, row, today=today)
        return _Reduced(reduce(row, record), record.problems)

    return compute


def _lasting(reduced: _Reduced) -> bool:
    return not any(p.kind in TRANSIENT for p in reduced.problems)

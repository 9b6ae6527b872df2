"""The Storage screen's and `mycel-memory storage`'s one report: every thread's bytes, share, growth and
projection, ranked; every store's space beside the sum of its threads; one thread's checkpoints and its
head's channels. The JSON shape is made here, once, for the CLI and the page's figures alike.

This module walks the fleet's bytes (kept per version of the stores); once the dashboard's fleet index is
built the same report comes from it (memory_core/app/fleet_storage.py), one page of threads at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from memory_core.footprint.facts import ChannelBytes, StoreSpace, ThreadBytes
from memory_core.footprint.growth import (
    Footprint,
    Pace,
    TurnBytes,
    bytes_per_checkpoint,
    footprint,
    thread_growth,
    turn_numbers,
)
from memory_core.memo import Key, Memo
from memory_core.records import ProblemKind, StoreProblem, loud_messages
from memory_core.stores.reader import MycelReader, Result

DEFAULT_TURNS_AHEAD = 50
# The fleet's report, per version of the stores and projection: fitting 10,000 threads' growth costs
# ~1 s (tests/benchmarks/bench_storage.py measured 0.7-1.3 s warm without it, against the 500 ms target);
# it is derived only from what the reader keeps under the same version (fleet bytes, list, space).
REPORTS: Memo[Result[StorageReport]] = Memo("storage.reports", max_entries=4)
_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})

# A projection further out than this says nothing a shorter one does not (and keeps the sum cheap).
MAX_TURNS_AHEAD = 10_000
CHART_THREADS = 15  # the biggest threads the report's chart draws


class StorageSort(StrEnum):
    BYTES = "bytes"
    GROWTH = "growth"
    PROJECTED = "projected"


@dataclass(frozen=True, slots=True)
class ThreadStorage:
    """One thread's row of the report."""

    thread_id: str
    name: str | None
    store: str
    layout: str
    checkpoints: int
    pace: Pace
    share: float  # of all threads' bytes; 0.0 when the fleet holds none
    projected_bytes: int  # after the report's turns_ahead more turns

    @property
    def bytes(self) -> int:
        return self.pace.total_bytes

    @property
    def turns(self) -> int:
        return self.pace.turns

    @property
    def growth_bytes_per_turn(self) -> int:
        return self.pace.growth_bytes_per_turn

    @property
    def quadratic(self) -> bool:
        return self.pace.quadratic


@dataclass(frozen=True, slots=True)
class StoreTotals:
    """One store: its space as measured (None when it could not be read) and the sum of its threads."""

    store: str
    space: StoreSpace | None
    threads: int
    thread_bytes: int


@dataclass(frozen=True, slots=True)
class StorageReport:
    threads: tuple[ThreadStorage, ...]  # ranked by `sort`, from `offset` (every thread when not paged)
    thread_count: int  # every thread of the report, shown or not
    stores: tuple[StoreTotals, ...]
    turns_ahead: int
    total_bytes: int  # all threads' bytes
    projected_total_bytes: int  # every thread's projected size summed: the fleet after turns_ahead more turns
    biggest: tuple[ThreadStorage, ...]  # the CHART_THREADS biggest by bytes
    sort: StorageSort = StorageSort.BYTES
    offset: int = 0
    # From the fleet index: threads that moved since it was brought up to date (their figures are as of
    # before), and threads it holds without bytes (a read failed when they were indexed). None: walked.
    behind: int | None = None
    without_bytes: int = 0


def rank_key(sort: StorageSort) -> Callable[[ThreadStorage], tuple[int, int, str]]:
    """The report's order: biggest first by bytes, by growth per turn or by projected size, ties by bytes
    then id (the fleet index orders by the same columns: mycel_dashboard/web/fleet_storage.py)."""
    if sort is StorageSort.GROWTH:
        return lambda t: (-t.growth_bytes_per_turn, -t.bytes, t.thread_id)
    if sort is StorageSort.PROJECTED:
        return lambda t: (-t.projected_bytes, -t.bytes, t.thread_id)
    return lambda t: (-t.bytes, 0, t.thread_id)


@dataclass(frozen=True, slots=True)
class CheckpointStorage:
    """One checkpoint's row of a thread's breakdown (oldest first)."""

    checkpoint_id: str
    parent_id: str | None
    source: str | None
    turn: int
    checkpoint: int
    metadata: int
    writes: int
    blobs: int
    total: int
    cumulative: int


@dataclass(frozen=True, slots=True)
class ThreadDetail:
    """One thread's breakdown: its row (share of the fleet when known), its checkpoints, its head's channels."""

    thread: ThreadStorage
    turns: tuple[TurnBytes, ...]  # the bytes each turn added, oldest first
    rows: tuple[CheckpointStorage, ...]
    head_checkpoint_id: str | None
    channels: tuple[ChannelBytes, ...]
    other_bytes: int  # rows under no root checkpoint: counted, never freed
    turns_ahead: int  # how far the row's projected_bytes looks


def _names(reader: MycelReader, problems: list[StoreProblem]) -> dict[str, str | None]:
    listed = reader.list_threads()
    problems.extend(listed.problems)
    return {row.thread_id: row.name for row in listed.value}


def storage_row(
    thread_id: str, name: str | None, found: Footprint, *, fleet_bytes: int, turns_ahead: int
) -> ThreadStorage:
    """One thread's report row from its footprint: its share of `fleet_bytes`, its projection."""
    pace = found.pace
    return ThreadStorage(
        thread_id=thread_id,
        name=name,
        store=found.store,
        layout=found.layout,
        checkpoints=found.checkpoints,
        pace=pace,
        share=pace.total_bytes / fleet_bytes if fleet_bytes else 0.0,
        projected_bytes=pace.projected_bytes(turns_ahead),
    )


def thread_row(thread: ThreadBytes, *, name: str | None, fleet_bytes: int, turns_ahead: int) -> ThreadStorage:
    """One thread's report row: its growth fitted, its projection `turns_ahead` turns on."""
    return storage_row(
        thread.thread_id, name, footprint(thread), fleet_bytes=fleet_bytes, turns_ahead=turns_ahead
    )


def storage_report(
    reader: MycelReader,
    *,
    turns_ahead: int = DEFAULT_TURNS_AHEAD,
    sort: StorageSort = StorageSort.BYTES,
    offset: int = 0,
    limit: int | None = None,
) -> Result[StorageReport]:
    """Every thread's bytes, share, growth and projection (ranked by `sort`, `limit` of them from
    `offset`; all by default), and every store's space beside its threads, with what could not be read.
    The fleet's walk is kept per version of the stores (a read that met a lock is not kept)."""
    whole = REPORTS.get_or_compute(
        Key(reader.backend.version(), what=("storage_report", turns_ahead)),
        lambda: _read_report(reader, turns_ahead),
        keep=lambda found: not any(p.kind in _TRANSIENT for p in found.problems),
    )
    report = whole.value
    ranked = (
        report.threads if sort is StorageSort.BYTES else tuple(sorted(report.threads, key=rank_key(sort)))
    )
    shown = ranked[offset:] if limit is None else ranked[offset : offset + limit]
    return Result(replace(report, threads=shown, sort=sort, offset=offset), whole.problems)


def _read_report(reader: MycelReader, turns_ahead: int) -> Result[StorageReport]:
    problems: list[StoreProblem] = []
    fleet = reader.fleet_bytes()
    problems.extend(fleet.problems)
    threads = fleet.value
    spaces = reader.store_space()
    problems.extend(spaces.problems)
    names = _names(reader, problems)
    fleet_total = sum(t.total for t in threads)
    rows = [
        thread_row(t, name=names.get(t.thread_id), fleet_bytes=fleet_total, turns_ahead=turns_ahead)
        for t in threads
    ]
    rows.sort(key=rank_key(StorageSort.BYTES))
    report = StorageReport(
        threads=tuple(rows),
        thread_count=len(rows),
        stores=store_totals(spaces.value, _sums(rows)),
        turns_ahead=turns_ahead,
        total_bytes=fleet_total,
        projected_total_bytes=sum(r.projected_bytes for r in rows),
        biggest=tuple(rows[:CHART_THREADS]),
    )
    return Result(report, tuple(dict.fromkeys(problems)))


def _sums(rows: Sequence[ThreadStorage]) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for row in rows:
        threads, total = counts.get(row.store, (0, 0))
        counts[row.store] = (threads + 1, total + row.bytes)
    return counts


def store_totals(
    spaces: Sequence[StoreSpace], sums: Mapping[str, tuple[int, int]]
) -> tuple[StoreTotals, ...]:
    """Each store's space beside (threads, their bytes) of the store in `sums`, by its label."""
    left = dict(sums)
    totals = [StoreTotals(s.store, s, *left.pop(s.store, (0, 0))) for s in spaces]
    # A store whose threads were read but whose space was not (a refused dbstat, a role without grants).
    totals += [StoreTotals(store, None, n, total) for store, (n, total) in left.items()]
    return tuple(totals)


def thread_storage(
    reader: MycelReader, thread_id: str, *, turns_ahead: int = DEFAULT_TURNS_AHEAD, fleet_bytes: int = 0
) -> Result[ThreadDetail | None]:
    """One thread's checkpoints (oldest first) and its head's channels; None when no store holds it.

    `fleet_bytes` (the report's total, when the caller has it) gives the thread's share; 0 leaves it 0.
    """
    problems: list[StoreProblem] = []
    found = reader.thread_bytes(thread_id)
    problems.extend(found.problems)
    thread = found.value
    if thread is None:
        return Result(None, tuple(problems))
    listed = reader.get_thread(thread_id)
    problems.extend(listed.problems)
    name = listed.value.name if listed.value is not None else None
    channels = reader.channel_bytes(thread_id, None)
    problems.extend(channels.problems)
    head, head_channels = channels.value
    points = bytes_per_checkpoint(thread)
    turns = turn_numbers(thread.checkpoints)
    rows = tuple(
        CheckpointStorage(
            checkpoint_id=c.checkpoint_id,
            parent_id=c.parent_id,
            source=c.source,
            turn=turn,
            checkpoint=c.checkpoint,
            metadata=c.metadata,
            writes=c.writes,
            blobs=c.blobs,
            total=c.total,
            cumulative=point.cumulative,
        )
        for c, turn, point in zip(thread.checkpoints, turns, points, strict=True)
    )
    growth = thread_growth(thread)
    detail = ThreadDetail(
        thread=storage_row(
            thread_id, name, footprint(thread, growth), fleet_bytes=fleet_bytes, turns_ahead=turns_ahead
        ),
        turns=growth.turns,
        rows=rows,
        head_checkpoint_id=head,
        channels=tuple(sorted(head_channels, key=lambda c: (-c.total, c.channel))),
        other_bytes=thread.other_bytes,
        turns_ahead=turns_ahead,
    )
    return Result(detail, tuple(dict.fromkeys(problems)))


# -- the one JSON shape ------------------------------------------------------------------------------


def _problem_json(problem: StoreProblem) -> dict[str, Any]:
    return {
        "kind": problem.kind.value,
        "store": problem.store,
        "message": problem.message,
        "path": str(problem.path) if problem.path else None,
    }


def thread_json(row: ThreadStorage) -> dict[str, Any]:
    """A thread's report row as `storage --json` prints it (issue 14's names)."""
    fit = row.pace.fit
    return {
        "thread_id": row.thread_id,
        "name": row.name,
        "store": row.store,
        "layout": row.layout,
        "bytes": row.bytes,
        "checkpoints": row.checkpoints,
        "share": row.share,
        "turns": row.turns,
        "growth_bytes_per_turn": row.growth_bytes_per_turn,
        "growth_basis": row.pace.basis,
        "projected_bytes": row.projected_bytes,
        "quadratic": row.quadratic,
        "fit": {"a": fit.a, "b": fit.b, "r2": fit.r2} if fit else None,
    }


def _space_json(totals: StoreTotals) -> dict[str, Any]:
    space = totals.space
    measured: dict[str, Any] = {"measured": space is not None}
    if space is not None:
        measured.update(
            engine=space.engine,
            location=space.location,
            file_bytes=space.file_bytes,
            wal_bytes=space.wal_bytes,
            free_bytes=space.free_bytes,
            measured_by=space.measured_by,
            estimated=list(space.estimated),
            tables=[
                {"name": t.name, "kind": t.kind, "bytes": t.bytes, "payload": t.payload} for t in space.tables
            ],
        )
    return {"store": totals.store, "threads": totals.threads, "thread_bytes": totals.thread_bytes, **measured}


def storage_as_json(result: Result[StorageReport]) -> dict[str, Any]:
    """The whole report as `mycel-memory storage --json` prints it."""
    report = result.value
    return {
        "turns_ahead": report.turns_ahead,
        "total_bytes": report.total_bytes,
        "projected_total_bytes": report.projected_total_bytes,
        "sort": report.sort.value,
        "thread_count": report.thread_count,
        "offset": report.offset,
        "from_index": report.behind is not None,
        "behind": report.behind,
        "without_bytes": report.without_bytes,
        "threads": [thread_json(row) for row in report.threads],
        "stores": [_space_json(s) for s in report.stores],
        "problems": [_problem_json(p) for p in result.problems],
        "warnings": loud_messages(result.problems),
    }


def thread_storage_as_json(detail: ThreadDetail, problems: Sequence[StoreProblem] = ()) -> dict[str, Any]:
    """One thread's breakdown as `mycel-memory storage THREAD_ID --json` prints it."""
    return {
        **thread_json(detail.thread),
        "turns_ahead": detail.turns_ahead,
        "other_bytes": detail.other_bytes,
        "head_checkpoint_id": detail.head_checkpoint_id,
        "checkpoint_rows": [
            {
                "checkpoint_id": r.checkpoint_id,
                "parent_id": r.parent_id,
                "source": r.source,
                "turn": r.turn,
                "checkpoint": r.checkpoint,
                "metadata": r.metadata,
                "writes": r.writes,
                "blobs": r.blobs,
                "bytes": r.total,
                "cumulative": r.cumulative,
            }
            for r in detail.rows
        ],
        "channels": [
            {"channel": c.channel, "inline": c.inline, "blob": c.blob, "writes": c.writes, "bytes": c.total}
            for c in detail.channels
        ],
        "turn_bytes": [
            {
                "turn": t.turn,
                "first_checkpoint_id": t.first_checkpoint_id,
                "checkpoints": t.checkpoints,
                "bytes": t.bytes,
            }
            for t in detail.turns
        ],
        "problems": [_problem_json(p) for p in problems],
    }

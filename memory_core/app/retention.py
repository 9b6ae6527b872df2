"""The retention dry-run over a data home: what the planner needs, read through MycelReader, then planned.

One function for the CLI and the page (one truth). The planner (retention.py) stays pure; this module only
decides what to read: byte facts for the fleet, and checkpoint rows, file operations, run events and
summaries only for the threads that would drop something.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime

from memory_core.footprint.facts import ThreadBytes
from memory_core.footprint.retention import (
    RetentionPlan,
    RetentionPolicy,
    Unreachable,
    plan_retention,
    replanned,
    rollback_targets,
    unreachable_after,
    with_unreachable,
)
from memory_core.footprint.script import ScriptTarget
from memory_core.memo import Key, Memo
from memory_core.records import CheckpointRow, FileOperation, ProblemKind, RunEvent, StoreProblem, SummaryRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.reader import MycelReader, Result


@dataclass(frozen=True, slots=True)
class RetentionDryRun:
    """A planned policy, the problems met reading for it, and where its script would run."""

    plan: RetentionPlan
    problems: tuple[StoreProblem, ...]
    target: ScriptTarget


# A plan is kept per version of the stores (memory_core/memo.py's rule): the same policy over the same data
# plans the same, so a second request, or the export after the preview, is not planned again. Not kept: a
# plan under the idle rule (it depends on the time) or one read while a store was locked or slow.
PLANS: Memo[RetentionDryRun] = Memo("storage.retention_plans", max_entries=8)
_TRANSIENT = (ProblemKind.LOCKED, ProblemKind.TIMEOUT)


def retention_dry_run(
    reader: MycelReader,
    policy: RetentionPolicy,
    *,
    now: datetime | None = None,
    only: Collection[str] | None = None,
) -> RetentionDryRun:
    """Plan `policy` over every thread of the reader's checkpoint store (or the threads in `only`);
    nothing is written."""
    if now is not None or policy.idle_days is not None:
        return _dry_run(reader, policy, now or datetime.now(UTC), only)
    key = Key(reader.backend.version(), what=(policy, None if only is None else frozenset(only)))
    return PLANS.get_or_compute(
        key,
        lambda: _dry_run(reader, policy, datetime.now(UTC), only),
        keep=lambda run: not any(p.kind in _TRANSIENT for p in run.problems),
    )


def _dry_run(
    reader: MycelReader, policy: RetentionPolicy, moment: datetime, only: Collection[str] | None
) -> RetentionDryRun:
    problems: list[StoreProblem] = []
    threads = _threads(reader, only, problems)
    activity = _last_activity(threads) if policy.idle_days is not None else {}
    # Protection only ever keeps more: a thread that drops nothing unprotected drops nothing protected, so
    # only threads that would drop something are read further.
    first = plan_retention(threads, policy, protected={}, last_activity=activity, now=moment)
    by_id = {t.thread_id: t for t in threads}
    sides: dict[str, _Side] = {}
    rows: dict[str, list[CheckpointRow]] = {}
    for t in first.touched:
        side = _Side(
            reader.list_file_operations(t.thread_id),
            reader.list_run_events(t.thread_id),
            reader.list_summaries(t.thread_id),
        )
        for read in (side.operations, side.events, side.summaries):
            problems.extend(p for p in read.problems if p not in problems)
        sides[t.thread_id] = side
        # Checkpoint rows (metadata: run ids, rollback notes) only where they can matter: a dashboard
        # rollback writes an "update" checkpoint, and only side rows can become unreachable.
        if side.any or any(c.source in (None, "update") for c in by_id[t.thread_id].checkpoints):
            listed = reader.list_checkpoints(t.thread_id)
            problems.extend(p for p in listed.problems if p not in problems)
            rows[t.thread_id] = listed.value
    protected = {tid: targets for tid, found in rows.items() if (targets := rollback_targets(found))}
    # Only the threads with a rollback or undo target are planned again.
    again = plan_retention(
        [by_id[tid] for tid in protected], policy, protected=protected, last_activity=activity, now=moment
    )
    plan = replanned(first, again.threads)
    lost: dict[str, Unreachable] = {}
    for t in plan.touched:
        side = sides[t.thread_id]
        lost[t.thread_id] = unreachable_after(
            t,
            rows.get(t.thread_id, []),
            file_operations=side.operations.value,
            run_events=side.events.value,
            summaries=side.summaries.value,
        )
    return RetentionDryRun(with_unreachable(plan, lost), tuple(problems), script_target(reader))


@dataclass(frozen=True, slots=True)
class _Side:
    operations: Result[list[FileOperation]]
    events: Result[list[RunEvent]]
    summaries: Result[list[SummaryRow]]

    @property
    def any(self) -> bool:
        return bool(self.operations.value or self.events.value or self.summaries.value)


def _threads(
    reader: MycelReader, only: Collection[str] | None, problems: list[StoreProblem]
) -> tuple[ThreadBytes, ...]:
    if only is None:
        fleet = reader.fleet_bytes()
        problems.extend(fleet.problems)
        return fleet.value
    # A few named threads: read just those (the fleet's memo answers when it is kept).
    found: list[ThreadBytes] = []
    for thread_id in only:
        one = reader.thread_bytes(thread_id)
        problems.extend(p for p in one.problems if p not in problems)
        if one.value is not None:
            found.append(one.value)
    return tuple(found)


def _last_activity(threads: tuple[ThreadBytes, ...]) -> dict[str, datetime | None]:
    # A thread's last activity is its newest checkpoint's time (LangGraph's uuid6 ids carry it).
    return {
        t.thread_id: time_of_checkpoint_id(max(c.checkpoint_id for c in t.checkpoints))
        if t.checkpoints
        else None
        for t in threads
    }


def script_target(reader: MycelReader) -> ScriptTarget:
    """Where the reader's checkpoints live, as the script names it (a Postgres URL always masked)."""
    where = reader.backend.checkpoint_location()
    return ScriptTarget(where.engine, where.location, schemas=where.schemas)

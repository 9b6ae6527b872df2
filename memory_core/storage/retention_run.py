"""The retention dry-run over a data home: what the planner needs, read through MycelReader, then planned.

One function for the CLI and the page (one truth). The planner (retention.py) stays pure; this module only
decides what to read: byte facts for the fleet, and checkpoint rows, file operations, run events and
summaries only for the threads that would drop something.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from memory_core.records import StoreProblem
from memory_core.storage.facts import ThreadBytes
from memory_core.storage.retention import (
    RetentionPlan,
    RetentionPolicy,
    Unreachable,
    plan_retention,
    rollback_targets,
    unreachable_after,
    with_unreachable,
)
from memory_core.storage.script import ScriptTarget
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.postgres.backend import PostgresBackend
from memory_core.stores.postgres.storage_facts import store_label
from memory_core.stores.reader import MycelReader


@dataclass(frozen=True, slots=True)
class RetentionDryRun:
    """A planned policy, the problems met reading for it, and where its script would run."""

    plan: RetentionPlan
    problems: tuple[StoreProblem, ...]
    target: ScriptTarget


def retention_dry_run(
    reader: MycelReader, policy: RetentionPolicy, *, now: datetime | None = None
) -> RetentionDryRun:
    """Plan `policy` over every thread of the reader's checkpoint store; nothing is written."""
    moment = now or datetime.now(UTC)
    problems: list[StoreProblem] = []
    fleet = reader.fleet_bytes()
    problems.extend(fleet.problems)
    threads = fleet.value
    activity = _last_activity(threads) if policy.idle_days is not None else {}
    # Protection only ever keeps more: a thread that drops nothing unprotected drops nothing protected, so
    # only threads that would drop something have their checkpoint rows (and rollback notes) read.
    first = plan_retention(threads, policy, protected={}, last_activity=activity, now=moment)
    rows = {}
    for t in first.touched:
        listed = reader.list_checkpoints(t.thread_id)
        problems.extend(p for p in listed.problems if p not in problems)
        rows[t.thread_id] = listed.value
    protected = {tid: rollback_targets(found) for tid, found in rows.items()}
    plan = plan_retention(threads, policy, protected=protected, last_activity=activity, now=moment)
    lost: dict[str, Unreachable] = {}
    for t in plan.touched:
        ops, events, summaries = (
            reader.list_file_operations(t.thread_id),
            reader.list_run_events(t.thread_id),
            reader.list_summaries(t.thread_id),
        )
        for read in (ops, events, summaries):
            problems.extend(p for p in read.problems if p not in problems)
        lost[t.thread_id] = unreachable_after(
            t,
            rows[t.thread_id],
            file_operations=ops.value,
            run_events=events.value,
            summaries=summaries.value,
        )
    return RetentionDryRun(with_unreachable(plan, lost), tuple(problems), script_target(reader))


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
    backend = reader.backend
    if isinstance(backend, PostgresBackend):
        layouts, _ = backend.layouts()
        return ScriptTarget(
            "postgresql",
            backend.masked_url,
            schemas={store_label(layout): layout.schema for layout in layouts},
        )
    return ScriptTarget("sqlite", str(reader.locations.main))

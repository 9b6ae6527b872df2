"""Rollback and undo end to end: read what the impact report needs, then apply it. Shared by web and CLI."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.app.errors import AppError, StoreUnreadable, UnknownThread
from memory_core.breaker import BREAKER_CHANNEL
from memory_core.records import ProblemKind, StoreProblem, SummaryRow
from memory_core.rollback import (
    CheckpointCopy,
    RollbackApplied,
    RollbackImpact,
    RollbackRefused,
    plan_rollback,
    rollback_record,
)
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader

# Said on every dev-layout preview (page and CLI): reference mycel-dev.md §7.
DEV_RESTART_NOTE = (
    "Mycel dev keeps a pooled agent's summary cache in memory: restart Mycel's backend before this"
    " is fully in effect (until then a running agent may still use the summaries it cached)."
)


class UnknownCheckpoint(AppError):
    """The thread has no such checkpoint."""


class CheckpointsUnreadable(StoreUnreadable):
    """The thread's checkpoints could not be read (leon.db missing, damaged, locked…): not an unknown id."""


def _unreadable(problems: tuple[StoreProblem, ...], what: str) -> CheckpointsUnreadable | None:
    reasons = [p.message for p in problems if p.kind is not ProblemKind.TRUNCATED]
    if not reasons:
        return None
    return CheckpointsUnreadable(f"{what} cannot be read: {'; '.join(dict.fromkeys(reasons))}")


def _sandbox_note(reader: MycelReader, thread_id: str) -> str | None:
    sandbox = reader.get_sandbox(thread_id).value
    if sandbox is None or not sandbox.leases:
        return None
    lease = sandbox.leases[0]
    return (
        f"Sandbox lease {lease.lease_id} ({sandbox.state or 'unknown state'}) is not changed: files and processes"
        " inside the sandbox stay as they are now."
    )


def preview_rollback(
    reader: MycelReader,
    thread_id: str,
    target_checkpoint_id: str,
    *,
    now: datetime | None = None,
    action: str = "rollback",
) -> RollbackImpact:
    """The impact report for rolling `thread_id` back to a checkpoint (nothing is written)."""
    listed = reader.list_checkpoints(thread_id)
    checkpoints = listed.value
    if not checkpoints:
        raise _unreadable(listed.problems, f"the checkpoints of thread {thread_id!r}") or UnknownThread(
            f"no checkpoints for thread {thread_id!r}"
        )
    if not any(row.checkpoint_id == target_checkpoint_id for row in checkpoints):
        raise UnknownCheckpoint(f"checkpoint {target_checkpoint_id!r} is not on thread {thread_id!r}")
    found = reader.get_state(thread_id, target_checkpoint_id)
    if found.value is None:
        # Listed a moment ago, so the file went away or got locked in between: never preview from nothing.
        raise _unreadable(found.problems, f"checkpoint {target_checkpoint_id!r}") or UnknownCheckpoint(
            f"checkpoint {target_checkpoint_id!r} is not on thread {thread_id!r}"
        )
    target = found.value
    head = reader.get_state(thread_id).value
    summaries = reader.list_summaries(thread_id)
    queue = reader.list_queue(thread_id)
    run_events = reader.list_run_events(thread_id)
    dev = _is_dev_thread(reader, thread_id)
    impact = plan_rollback(
        thread_id=thread_id,
        checkpoints=checkpoints,
        target_checkpoint_id=target_checkpoint_id,
        target_messages=target.messages,
        head_messages=head.messages if head else (),
        summaries=summaries.value,
        queue=queue.value,
        file_operations=reader.list_file_operations(thread_id).value,
        run_events=run_events.value,
        sandbox_note=_sandbox_note(reader, thread_id),
        now=now or datetime.now(UTC),
        action=action,
    )
    if dev:
        impact = replace(impact, warnings=(*impact.warnings, *_dev_notes(head.channels if head else {})))
    blind = _blind_spots((*summaries.problems, *queue.problems, *run_events.problems))
    return replace(impact, refusals=(*impact.refusals, *blind)) if blind else impact


def _is_dev_thread(reader: MycelReader, thread_id: str) -> bool:
    if not reader.locations.postgres_url:
        return False
    row = reader.get_thread(thread_id).value
    return row is not None and row.layout == "dev"


def _dev_notes(head_channels: Mapping[str, Any]) -> tuple[str, ...]:
    """What a dev-layout rollback keeps from the head, and the restart Mycel needs (postgres_writer)."""
    breaker = head_channels.get(BREAKER_CHANNEL)
    if isinstance(breaker, Mapping):
        state = "open" if breaker.get("breaker_open") else "closed"
        kept = f"the current compaction breaker ({state}, {breaker.get('failure_count', 0)} failure(s))"
    else:
        kept = "the current compaction breaker state (none stored)"
    return (
        f"The new head keeps {kept} and the current pending permission requests; every other channel is"
        " the target's.",
        DEV_RESTART_NOTE,
    )


# A missing file or table is normal for Mycel (nothing recorded yet); these mean "could not look".
# A store that exists but cannot be read (damaged, locked, slow, another layout, a role without SELECT, a
# server out of reach) leaves the preview blind; a store that is simply absent does not.
_BLINDING = frozenset(
    {
        ProblemKind.CORRUPT,
        ProblemKind.LOCKED,
        ProblemKind.TIMEOUT,
        ProblemKind.UNKNOWN_SCHEMA,
        ProblemKind.DENIED,
        ProblemKind.UNREACHABLE,
    }
)


def _blind_spots(problems: tuple[StoreProblem, ...]) -> tuple[str, ...]:
    """Refusals for the stores a safe rollback must read: the summaries it deactivates, and the queue and
    run events that say whether the agent is running. Without them the preview would be guessing."""
    return tuple(
        dict.fromkeys(
            f"cannot check the {p.store} store, so this preview would be guessing: {p.message}"
            for p in problems
            if p.kind in _BLINDING
        )
    )


def preview_undo(reader: MycelReader, thread_id: str, *, now: datetime | None = None) -> RollbackImpact:
    """Undo = roll forward to the head the last rollback replaced; only while that rollback is the head."""
    found = reader.get_state(thread_id)
    head = found.value
    if head is None:
        raise _unreadable(found.problems, f"the checkpoints of thread {thread_id!r}") or UnknownThread(
            f"no checkpoints for thread {thread_id!r}"
        )
    note = rollback_record(head.checkpoint.metadata)
    if note is None:
        raise RollbackRefused(
            "nothing to undo: the active checkpoint was not written by a dashboard rollback"
            " (or the agent has run since)"
        )
    return preview_rollback(reader, thread_id, str(note["previous_head"]), now=now, action="undo")


def _summary_db(locations: MycelLocations, summaries: tuple[SummaryRow, ...]) -> Path:
    stores = {summary.store for summary in summaries}
    if len(stores) > 1:
        raise RollbackRefused("summaries to change live in two files; refusing a partial update")
    return locations.main if stores == {"main"} else locations.summary


STALE_CONFIRMATION = (
    "The thread changed since you previewed this (new checkpoints). Read the new report below."
)


def apply_rollback(
    locations: MycelLocations,
    impact: RollbackImpact,
    *,
    actor: str,
    force: bool = False,
    reader: MycelReader | None = None,
    confirmed_fingerprint: str | None = None,
) -> RollbackApplied:
    """Write the previewed rollback or undo; refuses on any refusal (running only with force), a moved head,
    or a confirmation given for another preview than `impact` (`confirmed_fingerprint`)."""
    if confirmed_fingerprint is not None and confirmed_fingerprint != impact.fingerprint:
        raise RollbackRefused(STALE_CONFIRMATION)
    if not impact.can_apply_with(force=force):
        raise RollbackRefused("; ".join(impact.refusals))
    deactivate = tuple(summary.summary_id for summary in impact.summaries_to_deactivate)
    reactivate: tuple[str, ...] = ()
    summaries = impact.summaries_to_deactivate
    if impact.action == "undo":
        reader = reader or MycelReader(locations)
        head = reader.get_state(impact.thread_id).value
        note = rollback_record(head.checkpoint.metadata) if head else None
        reactivate = tuple(str(item) for item in (note or {}).get("deactivated_summaries", []))
        if reactivate:
            all_summaries = reader.list_summaries(impact.thread_id).value
            summaries = tuple(summary for summary in all_summaries if summary.summary_id in reactivate)
    copy = CheckpointCopy(
        thread_id=impact.thread_id,
        target_checkpoint_id=impact.target_checkpoint_id,
        expected_fingerprint=impact.fingerprint,
        actor=actor,
        action=impact.action,
        summary_db=_summary_db(locations, summaries) if summaries else None,
        deactivate_summary_ids=deactivate,
        reactivate_summary_ids=reactivate,
        force=force,
    )
    return (reader or MycelReader(locations)).backend.copy_checkpoint(copy)


def applied_as_dict(applied: RollbackApplied) -> dict[str, Any]:
    """What a written rollback or undo changed, as plain JSON-ready data (CLI --json, audit log)."""
    return {
        "new_head_checkpoint_id": applied.new_head_checkpoint_id,
        "previous_head_checkpoint_id": applied.previous_head_checkpoint_id,
        "deactivated_summaries": list(applied.deactivated_summary_ids),
        "reactivated_summaries": list(applied.reactivated_summary_ids),
    }


def impact_as_dict(impact: RollbackImpact) -> dict[str, Any]:
    """The impact report as plain JSON-ready data (CLI --json, audit log)."""
    return {
        "thread_id": impact.thread_id,
        "action": impact.action,
        "target_checkpoint_id": impact.target_checkpoint_id,
        "head_checkpoint_id": impact.head_checkpoint_id,
        "fingerprint": impact.fingerprint,
        "target_messages": impact.target_messages,
        "head_messages": impact.head_messages,
        "messages_leaving": [
            {"index": m.index, "type": m.type.value, "id": m.id, "preview": m.preview}
            for m in impact.messages_leaving
        ],
        "later_checkpoints": list(impact.later_checkpoints),
        "summaries_to_deactivate": [
            {"summary_id": s.summary_id, "compact_up_to_index": s.compact_up_to_index}
            for s in impact.summaries_to_deactivate
        ],
        "queued_items": [{"id": q.id, "content": q.content} for q in impact.queued_items],
        "file_operations_not_reverted": [
            {"id": op.id, "operation_type": op.operation_type, "file_path": op.file_path}
            for op in impact.file_operations_not_reverted
        ],
        "sandbox": impact.sandbox_note,
        "running": {"is_running": impact.running.is_running, "reasons": list(impact.running.reasons)},
        "warnings": list(impact.warnings),
        "refusals": list(impact.refusals),
    }

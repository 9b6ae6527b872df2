"""Rollback as a plan: what rolling a thread back to an earlier checkpoint would change, before anything is written.

History stays append-only: a rollback writes one new checkpoint that copies the target's state and becomes
the newest (= active) one. Later checkpoints are kept; undo is another such copy of the previous head.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from memory_core.messages import Message, MessageType
from memory_core.records import CheckpointRow, FileOperation, QueueItem, RunEvent, SummaryRow

# A checkpoint written this recently means Mycel is probably still in the middle of a run.
DEFAULT_RUNNING_WINDOW = timedelta(seconds=15)
# Run events Mycel writes when a run ends (backend/web/services/streaming_service.py).
_RUN_END_EVENTS = frozenset({"run_done", "error", "cancelled"})
ROLLBACK_METADATA_KEY = "mycel_dashboard"


class RollbackRefused(Exception):
    """The write did not happen; the message says why in plain words."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointCopy:
    """A rollback or undo to write: `target_checkpoint_id` copied as the thread's new head, refused when the
    head no longer has `expected_fingerprint`; summaries deactivated or reactivated beside it."""

    thread_id: str
    target_checkpoint_id: str
    expected_fingerprint: str
    actor: str
    action: str = "rollback"
    summary_db: Path | None = None
    deactivate_summary_ids: tuple[str, ...] = ()
    reactivate_summary_ids: tuple[str, ...] = ()
    force: bool = False

    def writer_arguments(self) -> dict[str, Any]:
        """What both engines' writers take, by keyword (each adds where it writes; PostgreSQL the force)."""
        return {
            "summary_db": self.summary_db,
            "thread_id": self.thread_id,
            "target_checkpoint_id": self.target_checkpoint_id,
            "expected_fingerprint": self.expected_fingerprint,
            "actor": self.actor,
            "action": self.action,
            "deactivate_summary_ids": self.deactivate_summary_ids,
            "reactivate_summary_ids": self.reactivate_summary_ids,
        }


@dataclass(frozen=True, slots=True)
class RollbackApplied:
    thread_id: str
    action: str
    new_head_checkpoint_id: str
    previous_head_checkpoint_id: str
    target_checkpoint_id: str
    deactivated_summary_ids: tuple[str, ...]
    reactivated_summary_ids: tuple[str, ...]


def rollback_record(metadata: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The dashboard's note in a checkpoint's metadata, when that checkpoint was written by a rollback."""
    note = metadata.get(ROLLBACK_METADATA_KEY)
    return note if isinstance(note, Mapping) and note.get("action") == "rollback" else None


@dataclass(frozen=True, slots=True)
class DashboardWrite:
    """A checkpoint the dashboard wrote (a rollback or an undo), not an agent's run: who, when, which."""

    action: str  # "rollback" or "undo"
    actor: str
    at: datetime | None  # when it was applied (None when the note's time cannot be read)

    @property
    def verb(self) -> str:
        return "Rollback undone" if self.action == "undo" else "Rolled back"


def dashboard_write(metadata: Mapping[str, Any]) -> DashboardWrite | None:
    """The dashboard's note in a checkpoint's metadata (any of its writes), else None: an agent wrote it."""
    note = metadata.get(ROLLBACK_METADATA_KEY)
    if not isinstance(note, Mapping):
        return None
    try:
        at: datetime | None = datetime.fromisoformat(str(note.get("at", "")))
    except ValueError:
        at = None
    return DashboardWrite(action=str(note.get("action", "")), actor=str(note.get("actor", "")), at=at)


def head_fingerprint(*, thread_id: str, head_checkpoint_id: str | None, checkpoint_count: int) -> str:
    """A short token naming the head a preview was computed on; a write refuses if it changed."""
    text = f"{thread_id}\x00{head_checkpoint_id or ''}\x00{checkpoint_count}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class RunningStatus:
    is_running: bool
    reasons: tuple[str, ...]


def running_status(
    *,
    now: datetime,
    newest_checkpoint_at: datetime | None,
    run_events: Sequence[RunEvent] = (),
    window: timedelta = DEFAULT_RUNNING_WINDOW,
) -> RunningStatus:
    """Decide from what Mycel stores whether the thread looks busy: a fresh checkpoint or an unfinished run."""
    reasons: list[str] = []
    if newest_checkpoint_at is not None:
        age = now - newest_checkpoint_at
        if age < window:
            reasons.append(f"its newest checkpoint was written {max(age.total_seconds(), 0):.0f} s ago")
    runs = [event for event in run_events if not event.run_id.startswith("activity_")]
    if runs:
        latest_run = max(runs, key=lambda event: event.seq).run_id
        types = {event.event_type for event in runs if event.run_id == latest_run}
        if "run_start" in types and not types & _RUN_END_EVENTS:
            reasons.append(f"run {latest_run} started and has no run_done/error/cancelled event")
    return RunningStatus(is_running=bool(reasons), reasons=tuple(reasons))


@dataclass(frozen=True, slots=True)
class LeavingMessage:
    index: int
    type: MessageType
    id: str | None
    preview: str


@dataclass(frozen=True, slots=True)
class RollbackImpact:
    """Everything an operator should read before confirming a rollback (or an undo)."""

    thread_id: str
    action: str  # "rollback" or "undo"
    target_checkpoint_id: str
    head_checkpoint_id: str
    fingerprint: str
    target_messages: int
    head_messages: int
    messages_leaving: tuple[LeavingMessage, ...]
    later_checkpoints: tuple[str, ...]  # kept, not deleted
    summaries_to_deactivate: tuple[SummaryRow, ...]
    queued_items: tuple[QueueItem, ...]
    file_operations_not_reverted: tuple[FileOperation, ...]
    sandbox_note: str | None
    running: RunningStatus
    warnings: tuple[str, ...]
    refusals: tuple[str, ...]  # reasons the write will refuse (running is one unless forced)

    @property
    def can_apply(self) -> bool:
        return not self.refusals

    def can_apply_with(self, *, force: bool) -> bool:
        """Running is the only refusal an operator may override."""
        blocking = [reason for reason in self.refusals if not (force and reason.startswith("running:"))]
        return not blocking


def _preview(message: Message, limit: int = 120) -> str:
    text = " ".join(message.text.split())
    if not text and message.tool_calls:
        text = "calls " + ", ".join(call.name for call in message.tool_calls)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _leaving(target: Sequence[Message], head: Sequence[Message]) -> tuple[LeavingMessage, ...]:
    kept_ids = {message.id for message in target if message.id}
    leaving: list[LeavingMessage] = []
    for index, message in enumerate(head):
        in_target = message.id in kept_ids if message.id else index < len(target)
        if not in_target:
            leaving.append(LeavingMessage(index, message.type, message.id, _preview(message)))
    return tuple(leaving)


def _pending_tool_calls(messages: Sequence[Message]) -> list[str]:
    answered = {message.tool_call_id for message in messages if message.type is MessageType.TOOL}
    return [
        call.name or "?"
        for message in messages
        if message.type is MessageType.AI
        for call in message.tool_calls
        if call.id and call.id not in answered
    ]


def plan_rollback(
    *,
    thread_id: str,
    checkpoints: Sequence[CheckpointRow],
    target_checkpoint_id: str,
    target_messages: Sequence[Message],
    head_messages: Sequence[Message],
    summaries: Sequence[SummaryRow] = (),
    queue: Sequence[QueueItem] = (),
    file_operations: Sequence[FileOperation] = (),
    run_events: Sequence[RunEvent] = (),
    sandbox_note: str | None = None,
    now: datetime,
    action: str = "rollback",
    running_window: timedelta = DEFAULT_RUNNING_WINDOW,
) -> RollbackImpact:
    """The impact report of rolling `thread_id` back to `target_checkpoint_id` (newest checkpoint = head)."""
    if not checkpoints:
        raise ValueError(f"thread {thread_id!r} has no checkpoints")
    by_id = {row.checkpoint_id: row for row in checkpoints}
    head = max(checkpoints, key=lambda row: row.checkpoint_id)  # LangGraph: the greatest id is active
    target = by_id.get(target_checkpoint_id)
    if target is None:
        raise KeyError(target_checkpoint_id)

    refusals: list[str] = []
    warnings: list[str] = []
    if target.checkpoint_id == head.checkpoint_id:
        refusals.append("noop: this checkpoint is already the active one")
    if not target.readable:
        refusals.append(f"unreadable: the target checkpoint cannot be decoded ({target.problem})")
    # Our own rollback checkpoints are not the agent at work: undo right after a rollback must not wait.
    agent_rows = [row for row in checkpoints if ROLLBACK_METADATA_KEY not in row.metadata]
    newest_agent = max(agent_rows, key=lambda row: row.checkpoint_id) if agent_rows else None
    running = running_status(
        now=now,
        newest_checkpoint_at=newest_agent.created_at if newest_agent else None,
        run_events=run_events,
        window=running_window,
    )
    if running.is_running:
        refusals.append("running: the thread looks busy — " + "; ".join(running.reasons))

    pending = _pending_tool_calls(target_messages)
    if pending:
        warnings.append(
            "The target is in the middle of a model step: tool calls "
            + ", ".join(pending)
            + " have no results yet, so the next run resumes by executing them."
        )
    target_count = len(target_messages)
    stale = tuple(
        summary for summary in summaries if summary.is_active and summary.compact_up_to_index > target_count
    )
    if stale:
        warnings.append(
            f"{len(stale)} active summary(ies) cover messages beyond the target's {target_count}; Mycel would skip"
            " them now and wrongly apply them once the history grows past their index, so they are deactivated"
            " (undo restores them)."
        )
    later_ids = [row.checkpoint_id for row in checkpoints if row.checkpoint_id > target.checkpoint_id]
    cutoff = target.created_at
    ops_after = tuple(
        op
        for op in file_operations
        if cutoff is not None and op.timestamp is not None and op.timestamp > cutoff
    )
    if ops_after:
        warnings.append(
            f"{len(ops_after)} file operation(s) happened after the target; the files are NOT reverted."
        )
    if queue:
        warnings.append(
            f"{len(queue)} queued item(s) will still be delivered to the thread after the rollback."
        )
    return RollbackImpact(
        thread_id=thread_id,
        action=action,
        target_checkpoint_id=target.checkpoint_id,
        head_checkpoint_id=head.checkpoint_id,
        fingerprint=head_fingerprint(
            thread_id=thread_id, head_checkpoint_id=head.checkpoint_id, checkpoint_count=len(checkpoints)
        ),
        target_messages=target_count,
        head_messages=len(head_messages),
        messages_leaving=_leaving(target_messages, head_messages),
        later_checkpoints=tuple(sorted(later_ids)),
        summaries_to_deactivate=stale,
        queued_items=tuple(queue),
        file_operations_not_reverted=ops_after,
        sandbox_note=sandbox_note,
        running=running,
        warnings=tuple(warnings),
        refusals=tuple(refusals),
    )


@dataclass(frozen=True, slots=True)
class OvertakenRollback:
    """A dashboard rollback that is no longer active: the agent went on from another checkpoint."""

    rollback_checkpoint_id: str
    target: str  # the checkpoint the rollback copied ("" when the note names none of this thread's)
    at: str  # when it was applied (ISO text, as recorded)
    actor: str
    continued_from: str  # where the agent's newer checkpoints branch off (usually the replaced head)


def overtaken_rollback(checkpoints: Sequence[CheckpointRow]) -> OvertakenRollback | None:
    """The newest dashboard rollback, when the newest checkpoint does not descend from it.

    LangGraph has no compare-and-swap: a Mycel run that loaded the old head just before a rollback goes on
    from that head, and its checkpoints become the newest, so the rollback silently stops being the active
    state. An undo written after the rollback is a deliberate move away and is not flagged; nor is a
    lineage we cannot follow to the end (a row cap cut the list).
    """
    ours = [row for row in checkpoints if ROLLBACK_METADATA_KEY in row.metadata]
    if not ours:
        return None
    rollback = max(ours, key=lambda row: row.checkpoint_id)
    note = rollback.metadata[ROLLBACK_METADATA_KEY]
    if not isinstance(note, Mapping) or note.get("action") != "rollback":
        return None
    by_id = {row.checkpoint_id: row for row in checkpoints}
    node: CheckpointRow | None = max(checkpoints, key=lambda row: row.checkpoint_id)
    continued_from: str | None = None
    seen: set[str] = set()
    while node is not None and node.checkpoint_id not in seen:
        if node.checkpoint_id == rollback.checkpoint_id:
            return None  # the newest checkpoint descends from the rollback: it is active
        if continued_from is None and node.checkpoint_id < rollback.checkpoint_id:
            continued_from = node.checkpoint_id  # the first ancestor older than the rollback
        seen.add(node.checkpoint_id)
        parent = node.parent_checkpoint_id
        if parent is not None and parent not in by_id:
            return None  # the lineage leaves what was read: cannot tell
        node = by_id.get(parent) if parent is not None else None
    if continued_from is None:
        return None
    target = str(note.get("target", ""))
    return OvertakenRollback(
        rollback_checkpoint_id=rollback.checkpoint_id,
        target=target if target in by_id else "",
        at=str(note.get("at", "")),
        actor=str(note.get("actor", "")),
        continued_from=continued_from,
    )

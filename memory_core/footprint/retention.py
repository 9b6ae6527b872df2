"""A retention policy's plan: what each thread keeps (and why), what it drops, and what that frees.

Pure: threads' byte facts in, a plan out. Nothing here deletes anything; script.py turns a plan into SQL the
operator runs with Mycel stopped. Whatever the policy, a thread always keeps its head (the newest
checkpoint: deleting it would change what the agent resumes from), every fork point (the parent of two or
more checkpoints: other branches hang from it) and every checkpoint a dashboard rollback or undo points to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from memory_core.footprint.facts import CheckpointBytes, ThreadBytes
from memory_core.lineage import file_operations_by_time, run_events_by_time
from memory_core.records import CheckpointRow, FileOperation, RunEvent, SummaryRow
from memory_core.rollback import ROLLBACK_METADATA_KEY

HEAD = "head"
FORK_POINT = "fork point"
# Mycel dev stores no parent ids: its fork points are read from the checkpoints' order and message counts.
FORK_POINT_INFERRED = "fork point (inferred from checkpoint order)"
ROLLBACK_TARGET = "dashboard rollback target"
UNDO_TARGET = "undo target"
ACTIVE = "thread active within {days} days"
LAST_K = "last {k}"
ACTIVITY_UNKNOWN = "thread's last activity unknown: left to the other rules"

# Why a whole idle thread is never offered for deletion: it would drop its head.
NO_WHOLE_THREADS = (
    "Deleting a whole idle thread is not offered: it would drop its head, and Mycel would start that "
    "thread from nothing. Idle threads keep their head, fork points and rollback targets."
)
ALWAYS_KEPT = (
    "Always kept, whatever the policy: each thread's head (its newest checkpoint), every fork point (the "
    "parent of two or more checkpoints; on Mycel dev's layout, which stores no parents, inferred from the "
    "checkpoints' order and message counts) and every checkpoint a dashboard rollback or undo points to."
)


class RetentionPolicyError(ValueError):
    """A policy that cannot be planned; the message says what to fix, in one line."""


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """Which checkpoints a thread may lose. Rules combine: a checkpoint is dropped when any rule drops it."""

    keep_last: int | None = None
    heads_only: bool = False
    idle_days: int | None = None

    def __post_init__(self) -> None:
        if self.keep_last is None and not self.heads_only and self.idle_days is None:
            raise RetentionPolicyError("name a policy: --keep-last K, --heads-only and/or --idle-days D")
        if self.keep_last is not None and self.keep_last < 1:
            raise RetentionPolicyError(f"keep-last must be 1 or more (got {self.keep_last})")
        if self.idle_days is not None and self.idle_days < 0:
            raise RetentionPolicyError(f"idle-days must be 0 or more (got {self.idle_days})")

    @classmethod
    def parse(cls, *, keep_last: str | None, heads_only: bool, idle_days: str | None) -> RetentionPolicy:
        """The policy from text (flags, a query string); empty text means the rule is not used."""
        return cls(
            keep_last=_whole_number("keep-last", keep_last),
            heads_only=heads_only,
            idle_days=_whole_number("idle-days", idle_days),
        )

    @property
    def last_k_reason(self) -> str:
        return LAST_K.format(k=self.keep_last)

    def describe(self) -> str:
        parts = []
        if self.keep_last is not None:
            parts.append(f"keep the last {self.keep_last} checkpoints of each thread")
        if self.heads_only:
            parts.append("keep only heads, fork points and rollback targets")
        if self.idle_days is not None:
            parts.append(f"threads idle for {self.idle_days} days or more keep only their head")
        return "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {"keep_last": self.keep_last, "heads_only": self.heads_only, "idle_days": self.idle_days}


def _whole_number(name: str, text: str | None) -> int | None:
    if text is None or not text.strip():
        return None
    value = text.strip()
    if not value.isascii() or not value.lstrip("-").isdigit() or len(value) > 9:
        raise RetentionPolicyError(f"{name} must be a whole number (got {text[:40]!r})")
    return int(value)


@dataclass(frozen=True, slots=True)
class Unreachable:
    """What loses its checkpoint when a thread's drops are deleted (the rows themselves stay)."""

    file_operations: tuple[str, ...] = ()  # "id path" of each operation whose run keeps no checkpoint
    run_events: tuple[str, ...] = ()  # "run_id (N events)" per run that keeps no checkpoint
    summaries: tuple[str, ...] = ()  # one sentence per summary whose compaction's checkpoint is dropped
    joined_by: str = "run id"  # "run id" (main: checkpoint metadata) | "time" (dev: no run id stored)

    @property
    def count(self) -> int:
        return len(self.file_operations) + len(self.run_events) + len(self.summaries)


@dataclass(frozen=True, slots=True)
class ThreadRetention:
    """One thread under the policy: every checkpoint either kept (with its reason) or dropped."""

    thread_id: str
    store: str
    layout: str
    keeps: Mapping[str, str]  # checkpoint id -> why it stays, newest first
    drops: tuple[str, ...]  # checkpoint ids, oldest first
    frees_bytes: int
    frees_blobs: tuple[str, ...] = ()  # PostgreSQL: blob_key of every blob no kept checkpoint names
    idle: bool | None = None  # None when the policy has no idle rule or the activity is unknown
    unreachable: Unreachable = field(default_factory=Unreachable)

    @property
    def protected(self) -> dict[str, str]:
        return {cid: why for cid, why in self.keeps.items() if _is_protected(why)}


@dataclass(frozen=True, slots=True)
class RetentionPlan:
    """A policy planned over the fleet at one moment."""

    policy: RetentionPolicy
    planned_at: datetime
    threads: tuple[ThreadRetention, ...]  # every thread, largest saving first

    @property
    def frees_bytes(self) -> int:
        return sum(t.frees_bytes for t in self.threads)

    @property
    def drops(self) -> int:
        return sum(len(t.drops) for t in self.threads)

    @property
    def keeps(self) -> int:
        return sum(len(t.keeps) for t in self.threads)

    @property
    def touched(self) -> tuple[ThreadRetention, ...]:
        return tuple(t for t in self.threads if t.drops)


_PROTECTED = frozenset({HEAD, FORK_POINT, FORK_POINT_INFERRED, ROLLBACK_TARGET, UNDO_TARGET})


def _is_protected(reason: str) -> bool:
    return any(part in _PROTECTED for part in reason.split(", "))


def rollback_targets(rows: Sequence[CheckpointRow]) -> dict[str, str]:
    """Checkpoints a dashboard rollback or undo points to: what it copied and the head it replaced."""
    ids = {row.checkpoint_id for row in rows}
    found: dict[str, str] = {}
    for row in rows:
        note = row.metadata.get(ROLLBACK_METADATA_KEY)
        if not isinstance(note, Mapping):
            continue
        target = note.get("target")
        if isinstance(target, str) and target in ids:
            found[target] = _join(found.get(target), ROLLBACK_TARGET)
        previous = note.get("previous_head")
        if isinstance(previous, str) and previous in ids:
            # Undoing this rollback copies the head it replaced: that checkpoint must stay.
            found[previous] = _join(found.get(previous), UNDO_TARGET)
    return found


def _join(before: str | None, reason: str) -> str:
    if not before:
        return reason
    return before if reason in before.split(", ") else f"{before}, {reason}"


def plan_retention(
    threads: Sequence[ThreadBytes],
    policy: RetentionPolicy,
    *,
    protected: Mapping[str, Mapping[str, str]],
    last_activity: Mapping[str, datetime | None],
    now: datetime,
) -> RetentionPlan:
    """What `policy` keeps and drops in every thread, and the bytes the drops free.

    `protected` adds, per thread, checkpoints that must stay with their reason (rollback and undo targets:
    rollback_targets()); `last_activity` is each thread's newest activity for the idle rule.
    """
    planned = [
        _plan_thread(t, policy, protected.get(t.thread_id, {}), last_activity.get(t.thread_id), now)
        for t in threads
    ]
    return RetentionPlan(policy=policy, planned_at=now, threads=_largest_first(planned))


def _largest_first(threads: Sequence[ThreadRetention]) -> tuple[ThreadRetention, ...]:
    return tuple(sorted(threads, key=lambda t: (-t.frees_bytes, t.thread_id)))


def replanned(plan: RetentionPlan, threads: Sequence[ThreadRetention]) -> RetentionPlan:
    """The plan with some threads planned again (with more protection); the others as they were."""
    again = {t.thread_id: t for t in threads}
    return replace(plan, threads=_largest_first([again.get(t.thread_id, t) for t in plan.threads]))


def _plan_thread(
    thread: ThreadBytes,
    policy: RetentionPolicy,
    protected: Mapping[str, str],
    last_activity: datetime | None,
    now: datetime,
) -> ThreadRetention:
    newest_first = sorted(thread.checkpoints, key=lambda c: c.checkpoint_id, reverse=True)
    children = Counter(c.parent_id for c in thread.checkpoints if c.parent_id is not None)
    reasons: dict[str, str] = {}
    for cid, why in protected.items():
        reasons[cid] = why
    if newest_first:
        head = newest_first[0].checkpoint_id
        reasons[head] = _join(HEAD, reasons[head]) if head in reasons else HEAD
    for c in newest_first:
        if children[c.checkpoint_id] >= 2:
            reasons[c.checkpoint_id] = _join(reasons.get(c.checkpoint_id), FORK_POINT)
    if not children:
        for cid in inferred_fork_points(thread.checkpoints):
            reasons[cid] = _join(reasons.get(cid), FORK_POINT_INFERRED)
    idle = _is_idle(policy, last_activity, now)
    keeps: dict[str, str] = {}
    drops: list[str] = []
    for rank, c in enumerate(newest_first):
        kept_because = reasons.get(c.checkpoint_id) or _kept_by_rules(policy, rank, idle)
        if kept_because:
            keeps[c.checkpoint_id] = kept_because
        else:
            drops.append(c.checkpoint_id)
    drops.reverse()
    frees, blobs = _frees(thread, set(keeps), set(drops))
    return ThreadRetention(
        thread_id=thread.thread_id,
        store=thread.store,
        layout=thread.layout,
        keeps=keeps,
        drops=tuple(drops),
        frees_bytes=frees,
        frees_blobs=blobs,
        idle=idle,
    )


def inferred_fork_points(checkpoints: Sequence[CheckpointBytes]) -> set[str]:
    """Fork points of a thread whose checkpoints name no parent (Mycel dev's layout), from their order and
    message counts (`step`): where a checkpoint holds fewer messages than the one before it, the
    conversation was cut back (a rollback, an edit) and grew again from the newest earlier checkpoint
    holding at most as many — the point the abandoned branch hangs from. Inferred, and said so."""
    found: set[str] = set()
    seen: list[CheckpointBytes] = []
    for c in sorted(checkpoints, key=lambda c: c.checkpoint_id):
        previous = seen[-1].step if seen else None
        if c.step is not None and previous is not None and c.step < previous:
            base = next((s for s in reversed(seen) if s.step is not None and s.step <= c.step), None)
            if base is not None:
                found.add(base.checkpoint_id)
        seen.append(c)
    return found


def _is_idle(policy: RetentionPolicy, last_activity: datetime | None, now: datetime) -> bool | None:
    if policy.idle_days is None or last_activity is None:
        return None
    return now - last_activity >= timedelta(days=policy.idle_days)


def _kept_by_rules(policy: RetentionPolicy, rank: int, idle: bool | None) -> str | None:
    """Why a checkpoint that is not protected stays, or None when some rule drops it."""
    if policy.heads_only:
        return None
    if policy.idle_days is not None and idle:
        return None
    if policy.keep_last is not None:
        return policy.last_k_reason if rank < policy.keep_last else None
    # Only the idle rule is in force, and it spares this thread.
    return ACTIVITY_UNKNOWN if idle is None else ACTIVE.format(days=policy.idle_days)


def _frees(thread: ThreadBytes, kept: set[str], dropped: set[str]) -> tuple[int, tuple[str, ...]]:
    freed = 0
    dropped_refs: set[str] = set()
    kept_refs: set[str] = set()
    for c in thread.checkpoints:
        if c.checkpoint_id in dropped:
            freed += c.checkpoint + c.metadata + c.writes
            dropped_refs |= c.blob_refs
        elif c.checkpoint_id in kept:
            kept_refs |= c.blob_refs
    # A blob is shared by every checkpoint whose channel_versions name it: only the unnamed ones go.
    blobs = tuple(sorted(k for k in dropped_refs - kept_refs if k in thread.blob_sizes))
    return freed + sum(thread.blob_sizes[k] for k in blobs), blobs


# -- what becomes unreachable ---------------------------------------------------------------------------


def unreachable_after(
    thread: ThreadRetention,
    checkpoints: Sequence[CheckpointRow],
    *,
    file_operations: Sequence[FileOperation],
    run_events: Sequence[RunEvent],
    summaries: Sequence[SummaryRow],
) -> Unreachable:
    """File operations, run events and summaries whose checkpoint the plan drops.

    Main's checkpoints carry the run id in their metadata: a run loses its anchor when none of its
    checkpoints is kept. Dev's carry none, so each item belongs to the first checkpoint saved at or after it
    (memory_core/lineage.py). A summary belongs to the first checkpoint holding more messages than it
    compacted: the save after the call that wrote it.
    """
    dropped = set(thread.drops)
    if not dropped:
        return Unreachable()
    by_run = any(c.run_id for c in checkpoints)
    if by_run:
        kept_runs = {c.run_id for c in checkpoints if c.run_id and c.checkpoint_id not in dropped}
        lost_runs = {c.run_id for c in checkpoints if c.run_id and c.checkpoint_id in dropped} - kept_runs
        ops = [op for op in file_operations if op.run_id in lost_runs]
        events = [e for e in run_events if e.run_id in lost_runs]
    else:
        ops = [
            j.item
            for j in file_operations_by_time(checkpoints, file_operations)
            if j.checkpoint_id in dropped
        ]
        events = [j.item for j in run_events_by_time(checkpoints, run_events) if j.checkpoint_id in dropped]
    runs = Counter(e.run_id for e in events)
    return Unreachable(
        file_operations=tuple(f"{op.id} {op.file_path}" for op in ops),
        run_events=tuple(f"{run} ({n} events)" for run, n in sorted(runs.items())),
        summaries=tuple(_lost_summaries(checkpoints, summaries, dropped)),
        joined_by="run id" if by_run else "time",
    )


def _lost_summaries(
    checkpoints: Sequence[CheckpointRow], summaries: Sequence[SummaryRow], dropped: set[str]
) -> list[str]:
    oldest_first = sorted(checkpoints, key=lambda c: c.checkpoint_id)
    lost: list[str] = []
    for s in summaries:
        written_at = next(
            (c for c in oldest_first if c.messages is not None and c.messages > s.compacted_at), None
        )
        if written_at is not None and written_at.checkpoint_id in dropped:
            lost.append(
                f"summary {s.summary_id} ({'active' if s.is_active else 'inactive'}, up to message "
                f"{s.compact_up_to_index}): its row stays and still applies, because Mycel finds it by "
                f"thread and message index, not by checkpoint; only checkpoint {written_at.checkpoint_id}, "
                "where it was written, goes"
            )
    return lost


def with_unreachable(plan: RetentionPlan, found: Mapping[str, Unreachable]) -> RetentionPlan:
    """The plan with each thread's unreachable items filled in (threads not named keep theirs)."""
    threads = tuple(
        replace(t, unreachable=found[t.thread_id]) if t.thread_id in found else t for t in plan.threads
    )
    return replace(plan, threads=threads)


def plan_as_dict(plan: RetentionPlan) -> dict[str, Any]:
    """The plan as `mycel-memory retention --json` prints it and the page and audit log read it."""
    return {
        "policy": plan.policy.as_dict(),
        "policy_text": plan.policy.describe(),
        "planned_at": plan.planned_at.isoformat(),
        "always_kept": ALWAYS_KEPT,
        "whole_threads": NO_WHOLE_THREADS,
        "totals": totals_as_dict(plan),
        "threads": [
            {
                "thread_id": t.thread_id,
                "store": t.store,
                "layout": t.layout,
                "frees_bytes": t.frees_bytes,
                "keeps": [{"checkpoint_id": cid, "reason": why} for cid, why in t.keeps.items()],
                "drops": list(t.drops),
                "frees_blobs": len(t.frees_blobs),
                "idle": t.idle,
                "unreachable": {
                    "joined_by": t.unreachable.joined_by,
                    "file_operations": list(t.unreachable.file_operations),
                    "run_events": list(t.unreachable.run_events),
                    "summaries": list(t.unreachable.summaries),
                },
            }
            for t in plan.threads
        ],
    }


def totals_as_dict(plan: RetentionPlan) -> dict[str, int]:
    return {
        "frees_bytes": plan.frees_bytes,
        "threads": len(plan.threads),
        "threads_touched": len(plan.touched),
        "keeps": plan.keeps,
        "drops": plan.drops,
        "unreachable": sum(t.unreachable.count for t in plan.threads),
    }


def export_summary(plan: RetentionPlan, *, engine: str, location: str) -> dict[str, Any]:
    """What the audit log keeps of an export: the policy, the totals and each touched thread's counts."""
    return {
        "policy": plan.policy.as_dict(),
        "planned_at": plan.planned_at.isoformat(),
        "engine": engine,
        "location": location,
        "totals": totals_as_dict(plan),
        "threads": [
            {
                "thread_id": t.thread_id,
                "drops": len(t.drops),
                "keeps": len(t.keeps),
                "frees_bytes": t.frees_bytes,
            }
            for t in plan.touched
        ],
    }

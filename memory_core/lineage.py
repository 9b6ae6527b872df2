"""Which checkpoint a run event or file operation belongs to, by time (Mycel dev, reference mycel-dev §2.3).

Mycel dev's checkpoints carry no run id (metadata is only `{source, step}`), and its file operations'
`checkpoint_id` holds the web run id, so the only key between them is time: a thing that happened at t
belongs to the first checkpoint saved at or after t (the save that ended the step it happened in). Things
after the newest checkpoint belong to none yet (a run still going, or one whose save was lost).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Generic, TypeVar

from memory_core.records import CheckpointRow, FileOperation, RunEvent

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TimeJoined(Generic[T]):
    """One item and the checkpoint its time falls before; None when no checkpoint is at or after it."""

    item: T
    checkpoint_id: str | None


def _aware(value: datetime) -> datetime:
    # Dev's run and file times are UTC; a naive one is taken as UTC rather than refused.
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def join_by_time(
    checkpoints: Iterable[tuple[str, datetime | None]],
    items: Iterable[T],
    time_of: Callable[[T], datetime | None],
) -> list[TimeJoined[T]]:
    """Each item with the first checkpoint (by time) at or after its time, in the items' order.

    Checkpoints without a time are left out; an item without a time joins none.
    """
    timed = sorted((_aware(at), cid) for cid, at in checkpoints if at is not None)
    times = [at for at, _ in timed]
    out: list[TimeJoined[T]] = []
    for item in items:
        at = time_of(item)
        if at is None:
            out.append(TimeJoined(item, None))
            continue
        i = bisect_left(times, _aware(at))
        out.append(TimeJoined(item, timed[i][1] if i < len(timed) else None))
    return out


def _checkpoint_times(checkpoints: Sequence[CheckpointRow]) -> list[tuple[str, datetime | None]]:
    return [(c.checkpoint_id, c.created_at) for c in checkpoints]


def run_events_by_time(
    checkpoints: Sequence[CheckpointRow], events: Iterable[RunEvent]
) -> list[TimeJoined[RunEvent]]:
    """A dev thread's run events, each with the checkpoint that closed its step (joined by time)."""
    return join_by_time(_checkpoint_times(checkpoints), events, lambda e: e.created_at)


def file_operations_by_time(
    checkpoints: Sequence[CheckpointRow], operations: Iterable[FileOperation]
) -> list[TimeJoined[FileOperation]]:
    """A dev thread's file operations, each with the checkpoint that closed its step (joined by time)."""
    return join_by_time(_checkpoint_times(checkpoints), operations, lambda o: o.timestamp)

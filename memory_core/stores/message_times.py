"""When each message of a thread was written, from its steps' `messages` writes: the time of the checkpoint
the step that appended it made (LangGraph's uuid6 ids carry it), never the head's.

Mycel stores no time on a message (no created_at in its metadata or additional_kwargs), so the checkpoint
that first held a message is the closest record of when it was said. The writes stored under a checkpoint
are the step that made its child (message_deltas.py), so every message a step appended gets that child's
time. Only the count each step appended matters here, not the order of a step's tasks (a step of parallel
tool calls is one time). None when the writes cannot say it: an undecodable write, an item add_messages
would not append, or counts that do not add up to the head's (a rollback, a removal); the caller then
finds each message's first holder from the checkpoints' message counts (slower).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime

from memory_core.stores.backend import CheckpointSnapshot
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.series import WriteRow, appended_items

Times = tuple[datetime | None, ...]


def step_times(writes: Iterable[WriteRow], path: Sequence[str], head: str) -> Times | None:
    """The time of each message the steps stored under `path` (oldest first, each the parent of the
    next; the last one's child is `head`) appended, in order."""
    by_step: dict[str, dict[tuple[str, str], list[WriteRow]]] = defaultdict(lambda: defaultdict(list))
    for w in writes:
        by_step[w.checkpoint_id][(w.task_path, w.task_id)].append(w)
    times: list[datetime | None] = []
    children = [*path[1:], head] if path else []
    for step, child in zip(path, children, strict=True):
        added = 0
        for task in by_step.get(step, {}).values():
            items = appended_items(task, [step])
            if items is None:
                return None
            added += len(items)
        times.extend([time_of_checkpoint_id(child)] * added)
    return tuple(times)


def message_times(snapshot: CheckpointSnapshot, head: str, expected: int | None) -> Times | None:
    """The time of each of `head`'s messages, from the writes of every step since the thread's first
    checkpoint; None unless they account for exactly `expected` messages."""
    parent_of = {m.checkpoint_id: m.parent_checkpoint_id for m in snapshot.skeleton()}
    if head not in parent_of or expected is None:
        return None
    path: list[str] = []
    node = parent_of[head]
    while node is not None and len(path) < len(parent_of):  # damaged parents that loop end the walk
        path.append(node)
        node = parent_of.get(node)
    if node is not None:
        return None
    path.reverse()
    writes = snapshot.message_writes(only=path)
    if writes is None:
        return None
    times = step_times(writes, path, head)
    return times if times is not None and len(times) == expected else None

"""The histories a Mycel dev thread held before prompt-too-long recoveries rewrote it.

Dev's recovery saves [summary SystemMessage] + the kept messages as the thread's history, so the calls
made before it are only in older checkpoints. Dev stores no parent ids: checkpoints are in id order, and
a rewrite is never undone, so the checkpoints whose messages the head extends are the newest ones, the
older ones hold the history before. A binary search finds the boundary, reading O(log n) checkpoints per
recovery; a head that does not start with dev's summary message reads nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.call_record.calls import checkpoints_holding
from memory_core.call_record.dev_calls import DevHistory, Holding
from memory_core.messages import Message
from memory_core.records import CheckpointRow
from memory_core.rules.dev_recovery import extends, starts_with_recovery_summary
from memory_core.stores.reader import MycelReader


def dev_histories(
    reader: MycelReader,
    thread_id: str,
    checkpoints: Sequence[CheckpointRow],
    messages: tuple[Message, ...],
    holding: Holding,
) -> tuple[DevHistory, ...]:
    """Every history the thread held, oldest first, the head's (`messages`, `holding`) last."""
    rows = [c for c in checkpoints if c.messages]  # newest first, as listed
    read: dict[str, tuple[Message, ...] | None] = {}

    def messages_of(row: CheckpointRow) -> tuple[Message, ...] | None:
        if row.checkpoint_id not in read:
            state = reader.get_state(thread_id, row.checkpoint_id).value
            read[row.checkpoint_id] = state.messages if state is not None else None
        return read[row.checkpoint_id]

    def held_in(row: CheckpointRow, current: tuple[Message, ...]) -> bool:
        if (row.messages or 0) > len(current):
            return False
        older = messages_of(row)
        return older is not None and extends(older, current)

    found: list[DevHistory] = []
    current, start = messages, 0
    while starts_with_recovery_summary(current):
        low, high = start, len(rows)
        while low < high:  # rows[start:low] extend `current`, rows[high:] do not
            middle = (low + high) // 2
            if held_in(rows[middle], current):
                low = middle + 1
            else:
                high = middle
        if low >= len(rows):
            break
        before = messages_of(rows[low])
        if before is None:
            break
        found.append(DevHistory(current, checkpoints_holding(rows[start:low], rows[start].checkpoint_id)))
        current, start = before, low
    if not found:
        return (DevHistory(messages, holding),)
    found.append(DevHistory(current, checkpoints_holding(rows[start:], rows[start].checkpoint_id)))
    return tuple(reversed(found))

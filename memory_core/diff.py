"""What changed between two checkpoint states: messages added, removed and changed, and other channels."""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.messages import Message
from memory_core.records import CheckpointState


@dataclass(frozen=True, slots=True)
class MessageChange:
    before_index: int
    after_index: int
    before: Message
    after: Message


@dataclass(frozen=True, slots=True)
class StateDiff:
    """`a` → `b`. Indexes are positions in each state's message list."""

    added: tuple[tuple[int, Message], ...]  # (index in b, message)
    removed: tuple[tuple[int, Message], ...]  # (index in a, message)
    changed: tuple[MessageChange, ...]
    unchanged: int
    channels_changed: tuple[str, ...]  # channel names (other than messages) whose values differ

    @property
    def is_empty(self) -> bool:
        return not (self.added or self.removed or self.changed or self.channels_changed)


def _pairs(a: tuple[Message, ...], b: tuple[Message, ...]) -> dict[int, int]:
    """a-index → b-index: same id first; then, for messages without a usable id, the same position."""
    by_id = {m.id: j for j, m in enumerate(b) if m.id is not None}
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for i, m in enumerate(a):
        j = by_id.get(m.id) if m.id is not None else None
        if j is not None and j not in taken:
            pairs[i] = j
            taken.add(j)
    for i, m in enumerate(a):
        if i in pairs or i >= len(b) or i in taken:
            continue
        other = b[i]
        # Two different ids are two different messages; position only pairs when an id is missing.
        if m.id is None or other.id is None:
            pairs[i] = i
            taken.add(i)
    return pairs


def diff_states(a: CheckpointState, b: CheckpointState) -> StateDiff:
    """Messages added, removed and changed from `a` to `b` (matched by id, else by position)."""
    pairs = _pairs(a.messages, b.messages)
    matched_b = set(pairs.values())
    changed: list[MessageChange] = []
    unchanged = 0
    for i, j in sorted(pairs.items()):
        if a.messages[i] == b.messages[j]:
            unchanged += 1
        else:
            changed.append(MessageChange(i, j, a.messages[i], b.messages[j]))
    keys = sorted(set(a.channels) | set(b.channels))
    return StateDiff(
        added=tuple((j, m) for j, m in enumerate(b.messages) if j not in matched_b),
        removed=tuple((i, m) for i, m in enumerate(a.messages) if i not in pairs),
        changed=tuple(changed),
        unchanged=unchanged,
        channels_changed=tuple(k for k in keys if a.channels.get(k) != b.channels.get(k)),
    )

"""A thread's new messages read from its new steps' `messages` writes, never from the new head's payload.

A head checkpoint holds the thread's whole message list (a 200-turn thread's is megabytes), but the
writes stored under each checkpoint are the step that made its child: on the path from a checkpoint
already read (H0) to the new head (H1), the writes under H0 ... H1's parent hold exactly what was added
(writes under H1 itself are pending, not in H1's state). They are applied with series.py's add_messages
rules, and only when those rules say "appended": a message object, or a message dict or bare string
converted as convert_to_messages would (Mycel's own input is a `{"role": "user", ...}` dict). An id-less
one is a pure append (add_messages gives it a fresh uuid no write holds, so its Message has no id; the
search index's digest never reads ids). Anything else answers None, and the caller decodes the head
instead (a rollback or fork, a replacement, a removal, an Overwrite, a chunk, an unknown role, a step of
several tasks, an undecodable write, or a count that does not add up).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from memory_core.messages import Message
from memory_core.stores.backend import CheckpointSnapshot
from memory_core.stores.checkpoints import message_from_plain
from memory_core.stores.message_times import Times, step_times
from memory_core.stores.series import appended_items


@dataclass(frozen=True, slots=True)
class MessagesSince:
    """The messages of `head` past the first `known` ones, which are those of its ancestor `since`."""

    thread_id: str
    since: str
    head: str
    known: int
    expected: int  # the head's message count as the thread list read it (ThreadRow.messages)


@dataclass(frozen=True, slots=True)
class AppendedMessages:
    """`messages` sit at indexes start, start + 1, ... of `head`'s list, redacted as a head decode's."""

    thread_id: str
    head: str
    start: int
    messages: tuple[Message, ...]
    # When each was written (message_times.py): the checkpoint its step made; None when the writes' steps
    # cannot say it.
    times: Times | None = None


def messages_since(snapshot: CheckpointSnapshot, ask: MessagesSince) -> AppendedMessages | None:
    """What `ask.head` appended since `ask.since`, from the writes of the steps between them; None when
    the writes cannot say it exactly (the caller then decodes the head)."""
    metas = snapshot.skeleton()
    parent_of = {m.checkpoint_id: m.parent_checkpoint_id for m in metas}
    if ask.head not in parent_of or ask.since not in parent_of:
        return None
    children = Counter(m.parent_checkpoint_id for m in metas if m.parent_checkpoint_id is not None)
    path: list[str] = []
    node = parent_of[ask.head]
    # At most one step per checkpoint: damaged parent ids that loop must end the walk, not hang it.
    while node is not None and node != ask.since and len(path) < len(metas):
        path.append(node)
        node = parent_of.get(node)
    if node != ask.since:
        return None  # `since` is not an ancestor: a rollback, another branch, or parents that loop
    path.append(ask.since)
    path.reverse()
    # A checkpoint with two children: its writes are the step of one of them only.
    if any(children[checkpoint_id] > 1 for checkpoint_id in path):
        return None
    writes = snapshot.message_writes(only=path)
    if writes is None:
        return None
    items = appended_items(writes, path)
    # The cross-check: a replaced id from before H0, or a step whose writes are missing, shows here.
    if items is None or ask.known + len(items) != ask.expected:
        return None
    messages = tuple(message_from_plain(item) for item in items)
    times = step_times(writes, path, ask.head)
    return AppendedMessages(
        ask.thread_id, ask.head, ask.known, messages, times if times and len(times) == len(messages) else None
    )

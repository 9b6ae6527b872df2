"""Mycel dev's run loop when a run does not complete, and its prompt-too-long recovery, as pure rules
(dev bc8ab002, core/runtime/loop.py and the memory middleware's compact_messages_for_recovery).

- A run that ends without completing stores `AIMessage(content=f"Error: {error_text}")`
  (`_build_visible_terminal_error_message`): no model wrote it, so it is no call. Its text for a prompt
  the provider kept refusing is `_PROMPT_TOO_LONG_NOTICE_TEXT`: the request the model refused last had
  the messages in front of it.
- Recovery summarises the run's list and saves `[SystemMessage("[Conversation Summary]\\n...")] + kept`
  as the new history: the messages before it live only in older checkpoints, and its compaction is the
  summary at the new history's start, cut where the kept messages begin on the old list.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.compaction import SUMMARY_HEADER
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary

TERMINAL_ERROR_PREFIX = "Error: "
PROMPT_TOO_LONG_TEXT = (
    "Prompt is too long. Automatic recovery exhausted. Clear the thread or start a new one."
)


def is_terminal_error(message: Message) -> bool:
    """Dev's own AIMessage at the end of a run that did not complete: string content "Error: ...", and
    none of what a model's answer carries (tool calls, usage, model name)."""
    return (
        message.type is MessageType.AI
        and isinstance(message.content, str)
        and message.content.startswith(TERMINAL_ERROR_PREFIX)
        and not message.tool_calls
        and not message.usage_metadata
        and message.model_name is None
    )


def refused_as_too_long(message: Message) -> bool:
    """The terminal error of a run whose last request the provider refused (prompt too long)."""
    return is_terminal_error(message) and message.text.startswith(
        TERMINAL_ERROR_PREFIX + PROMPT_TOO_LONG_TEXT
    )


def starts_with_recovery_summary(messages: Sequence[Message]) -> bool:
    """A history dev rewrote after a prompt-too-long: it starts with its summary SystemMessage (no other
    path of dev stores one)."""
    return bool(messages) and _is_summary(messages[0])


def _is_summary(message: Message) -> bool:
    return (
        message.type is MessageType.SYSTEM
        and isinstance(message.content, str)
        and (message.content.startswith(SUMMARY_HEADER))
    )


def extends(older: Sequence[Message], newer: Sequence[Message]) -> bool:
    """`newer` holds `older` as its start: no rewrite in between."""
    return len(older) <= len(newer) and all(a == b for a, b in zip(older, newer, strict=False))


def carried_count(before: Sequence[Message], after: Sequence[Message]) -> int:
    """How many messages after the recovery summary (`after[1:]`) are `before`'s own kept tail."""
    rest = after[1:]
    for start in range(len(before) + 1):
        tail = before[start:]
        if len(tail) <= len(rest) and all(a == b for a, b in zip(tail, rest, strict=False)):
            return len(tail)
    return 0


def recovery_summary(before: Sequence[Message], after: Sequence[Message]) -> ActiveSummary | None:
    """The summary dev's recovery compaction cached: its text (after the header) and where the kept
    messages began on the list before recovery (dev applies it again with that index)."""
    if not starts_with_recovery_summary(after):
        return None
    head = after[0].content
    assert isinstance(head, str)
    return ActiveSummary(head.removeprefix(SUMMARY_HEADER), len(before) - carried_count(before, after))

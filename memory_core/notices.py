"""Messages Mycel dev writes into a thread's history itself, not the owner or the model.

Dev persists its compaction notices, its prompt-too-long and output-limit notes as HumanMessages, and
prompt-too-long recovery saves a `[Conversation Summary]` SystemMessage at the head of the history.
None of them is filtered out of later calls: the model gets the notices as user turns, so they count in
the estimate (reference mycel-dev.md §2.5). This module only names them; screens decide how to show them.
"""

from __future__ import annotations

from enum import StrEnum

from memory_core.messages import Message, MessageType


class NoticeKind(StrEnum):
    NONE = "none"
    COMPACT = "compact"
    COMPACT_BREAKER = "compact_breaker"
    PROMPT_TOO_LONG = "prompt_too_long"
    OUTPUT_LIMIT = "output_limit"
    RECOVERY_SUMMARY = "recovery_summary"  # the SystemMessage prompt-too-long recovery leaves at the head


# Dev's own texts (QueryLoop): the prompt-too-long notice carries only source "system"; the output-limit
# note carries no metadata at all, so its exact text is all there is to know it by.
PROMPT_TOO_LONG_START = "Prompt is too long. Automatic recovery exhausted."
OUTPUT_LIMIT_TEXT = "Output token limit hit. Resume directly with no apology or recap."
RECOVERY_SUMMARY_START = "[Conversation Summary]"

NOTICE_LABELS = {
    NoticeKind.COMPACT: "compaction notice",
    NoticeKind.COMPACT_BREAKER: "compaction breaker notice",
    NoticeKind.PROMPT_TOO_LONG: "prompt-too-long notice",
    NoticeKind.OUTPUT_LIMIT: "output-limit notice",
    NoticeKind.RECOVERY_SUMMARY: "summary written by prompt-too-long recovery",
}


def notice_kind(message: Message) -> NoticeKind:
    """Which of Mycel dev's own notices `message` is, or NoticeKind.NONE for any other message."""
    if message.type is MessageType.SYSTEM:
        return (
            NoticeKind.RECOVERY_SUMMARY
            if message.text.startswith(RECOVERY_SUMMARY_START)
            else NoticeKind.NONE
        )
    if message.type is not MessageType.HUMAN:
        return NoticeKind.NONE
    meta = message.metadata or {}
    if meta.get("source") == "system":
        kind = meta.get("notification_type")
        if kind == NoticeKind.COMPACT.value:
            return NoticeKind.COMPACT
        if kind == NoticeKind.COMPACT_BREAKER.value:
            return NoticeKind.COMPACT_BREAKER
        if kind is None and message.text.startswith(PROMPT_TOO_LONG_START):
            return NoticeKind.PROMPT_TOO_LONG
    if not meta and message.text.strip() == OUTPUT_LIMIT_TEXT:
        return NoticeKind.OUTPUT_LIMIT
    return NoticeKind.NONE


def is_notice(message: Message) -> bool:
    """True for a notice Mycel dev wrote as a user turn (not the recovery summary, which is a system turn)."""
    return notice_kind(message) not in (NoticeKind.NONE, NoticeKind.RECOVERY_SUMMARY)

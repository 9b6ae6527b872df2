"""Mycel dev's own notices are told from the owner's words: by their metadata, or by the exact text where
dev stores none. The messages are built as dev builds them (LangChain's classes), then dumped and read."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from memory_core.messages import Message, message_from_dict
from memory_core.notices import NoticeKind, is_notice, notice_kind

COMPACT = "Conversation compacted. Earlier 11 message(s) are now represented by a summary."
BREAKER = "Automatic compaction disabled for this thread after repeated failures. Clear the thread or start a new one."
TOO_LONG = "Prompt is too long. Automatic recovery exhausted. Clear the thread or start a new one."
OUTPUT_LIMIT = "Output token limit hit. Resume directly with no apology or recap."


def _read(message: BaseMessage) -> Message:
    raw: dict[str, Any] = message.model_dump()
    return message_from_dict(raw)


def _system_notice(text: str, **meta: Any) -> HumanMessage:
    # Dev passes metadata as an extra field of HumanMessage (QueryLoop._append_system_notices).
    return HumanMessage(content=text, metadata={"source": "system", **meta})  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (_system_notice(COMPACT, notification_type="compact", compact_boundary_index=11), NoticeKind.COMPACT),
        (
            _system_notice(BREAKER, notification_type="compact_breaker", compact_boundary_index=0),
            NoticeKind.COMPACT_BREAKER,
        ),
        (_system_notice(TOO_LONG), NoticeKind.PROMPT_TOO_LONG),
        (HumanMessage(content=OUTPUT_LIMIT), NoticeKind.OUTPUT_LIMIT),
        (SystemMessage(content="[Conversation Summary]\nThe user asked for …"), NoticeKind.RECOVERY_SUMMARY),
    ],
)
def test_each_dev_notice_is_named(message: BaseMessage, kind: NoticeKind) -> None:
    read = _read(message)
    assert notice_kind(read) is kind
    assert is_notice(read) is (kind is not NoticeKind.RECOVERY_SUMMARY)


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage(content=COMPACT),  # the owner typing dev's words is still the owner
        HumanMessage(content=BREAKER),
        HumanMessage(content=TOO_LONG),
        HumanMessage(content=OUTPUT_LIMIT + " please"),
        HumanMessage(content=OUTPUT_LIMIT, metadata={"source": "owner"}),  # type: ignore[call-arg]
        _system_notice("A steer from the queue", notification_type="steer"),
        AIMessage(content=OUTPUT_LIMIT),
        AIMessage(content="[Conversation Summary]\nnot a system turn"),
        SystemMessage(content="You are Mycel."),
        SystemMessage(content="<system-reminder>\n<integration_instructions_delta>{}"),
    ],
)
def test_other_messages_are_not_notices(message: BaseMessage) -> None:
    read = _read(message)
    assert notice_kind(read) is NoticeKind.NONE
    assert not is_notice(read)


def test_block_list_summary_is_recognised_by_its_text() -> None:
    message = SystemMessage(content=[{"type": "text", "text": "[Conversation Summary]\n…"}])
    assert notice_kind(_read(message)) is NoticeKind.RECOVERY_SUMMARY

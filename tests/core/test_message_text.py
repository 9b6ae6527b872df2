"""One block-text rule: Message.text and text_of (raw content, e.g. an OpenAI-style answer) agree."""

from __future__ import annotations

import pytest

from memory_core.messages import MessageType, message_from_dict, text_of

CONTENTS = (
    ("plain", "plain"),
    ([{"type": "text", "text": "a"}, "b", {"type": "image_url"}, {"text": "c"}], "abc"),
    ([{"type": "text", "text": None}, {"type": "text", "text": 5}, {"type": "text", "text": "ok"}], "ok"),
    ([], ""),
)


@pytest.mark.parametrize(("content", "expected"), CONTENTS)
def test_raw_content_and_message_text_join_the_same_blocks(content: object, expected: str):
    assert text_of(content) == expected
    message = message_from_dict({"type": "ai", "content": content})
    assert message.type is MessageType.AI
    assert message.text == expected


@pytest.mark.parametrize("content", [None, 7, {"text": "not a list"}])
def test_content_that_is_neither_text_nor_blocks_has_no_text(content: object):
    assert text_of(content) == ""

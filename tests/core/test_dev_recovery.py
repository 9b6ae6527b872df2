"""Mycel dev's terminal error and prompt-too-long recovery as pure rules (memory_core.rules.dev_recovery),
on the shapes dev bc8ab002 stores (core/runtime/loop.py, the memory middleware)."""

from __future__ import annotations

from memory_core.compaction import summary_message
from memory_core.messages import Message, MessageType, ToolCall
from memory_core.rules.dev_recovery import (
    PROMPT_TOO_LONG_TEXT,
    carried_count,
    extends,
    is_terminal_error,
    recovery_summary,
    refused_as_too_long,
    starts_with_recovery_summary,
)


def _ai(text: str, **extra: object) -> Message:
    return Message(type=MessageType.AI, content=text, **extra)  # type: ignore[arg-type]


def _h(text: str) -> Message:
    return Message(type=MessageType.HUMAN, content=text)


def test_dev_terminal_error_is_no_model_answer() -> None:
    error = _ai(f"Error: {PROMPT_TOO_LONG_TEXT}")
    assert is_terminal_error(error) and refused_as_too_long(error)
    other = _ai("Error: max_turns")
    assert is_terminal_error(other) and not refused_as_too_long(other)
    # What a model's answer carries is never dev's terminal error, whatever its text.
    assert not is_terminal_error(_ai("Error: x", usage_metadata={"input_tokens": 5}))
    assert not is_terminal_error(_ai("Error: x", model_name="gpt-4o"))
    assert not is_terminal_error(_ai("Error: x", tool_calls=(ToolCall("c1", "Read"),)))
    assert not is_terminal_error(_ai("The Error: is fine"))
    assert not is_terminal_error(Message(type=MessageType.HUMAN, content="Error: x"))


def test_recovery_summary_is_cut_where_the_kept_messages_began_on_the_old_list() -> None:
    before = [_h("1"), _ai("a"), _h("2"), _ai("b"), _h("3"), _ai("c"), _h("4")]
    after = [summary_message("S"), *before[4:], _ai("d")]
    assert starts_with_recovery_summary(after) and not starts_with_recovery_summary(before)
    assert carried_count(before, after) == 3
    summary = recovery_summary(before, after)
    assert summary is not None
    assert (summary.summary_text, summary.compact_up_to_index) == ("S", 4)
    assert recovery_summary(before, before) is None


def test_a_history_extends_the_one_before_unless_rewritten() -> None:
    older = [_h("1"), _ai("a")]
    assert extends(older, [*older, _h("2")])
    assert not extends(older, [summary_message("S"), _ai("a")])
    assert not extends([*older, _h("2")], older)

"""Sizing an unstored summary by the provider's counts (memory_core.call_record.provider_counts): the framing
fitted over the calls whose every message is held, and what it leaves at the calls with the summary in front."""

from __future__ import annotations

from fractions import Fraction

from memory_core.call_record.provider_counts import (
    Measured,
    Request,
    estimated_chars,
    fit_framing,
    tool_call_tokens,
    unknown_sizes,
)
from memory_core.compaction import SUMMARY_HEADER
from memory_core.messages import Message, MessageType, ToolCall
from memory_core.tokens import default_counter

FIXED, PER_MESSAGE = 1_234, 3  # a system prompt and tools; OpenAI's framing per message


def _provider(messages: int, counted: int) -> int:
    return FIXED + PER_MESSAGE * messages + counted


def _held(messages: int, counted: int) -> Request:
    return Request(messages, counted, _provider(messages, counted))


def _with_summary(messages: int, counted: int, summary: int, unknown: int) -> Request:
    return Request(messages, counted, _provider(messages, counted + summary), unknown)


def test_the_framing_is_fitted_exactly_over_the_calls_whose_messages_are_held() -> None:
    framing = fit_framing([_held(2, 50), _held(4, 256), _held(6, 349), _with_summary(3, 100, 146, 7)])
    assert framing is not None
    assert (framing.fixed, framing.per_message, framing.calls, framing.residual) == (FIXED, PER_MESSAGE, 3, 0)


def test_what_the_framing_leaves_at_a_call_is_its_summarys_size_one_per_compaction() -> None:
    requests = [
        _held(2, 50),
        _held(4, 256),
        _with_summary(9, 730, 146, 8),
        _with_summary(12, 840, 146, 8),
        _with_summary(14, 1_046, 151, 10),
    ]
    sizes = unknown_sizes(requests)
    assert sizes is not None
    assert dict(sizes.tokens) == {8: 146, 10: 151}
    assert sizes.spread == 0


def test_a_tokenizer_unlike_the_providers_shows_as_a_residual_and_a_spread() -> None:
    # The provider counts a few tokens more or fewer than the record on some messages.
    requests = [
        Request(2, 50, _provider(2, 50) + 1),
        Request(4, 256, _provider(4, 256) - 1),
        Request(6, 349, _provider(6, 349) + 2),
        Request(8, 500, _provider(8, 500)),
        Request(9, 730, _provider(9, 730 + 146) + 2, 8),
        Request(12, 840, _provider(12, 840 + 146) - 1, 8),
    ]
    sizes = unknown_sizes(requests)
    assert sizes is not None
    assert sizes.framing.residual >= 1
    assert sizes.spread >= 2
    assert abs(sizes.tokens[8] - 146) <= 3


def test_no_framing_without_two_message_counts_and_no_sizes_without_an_unstored_summary() -> None:
    assert fit_framing([_held(4, 100), _held(4, 120)]) is None
    assert unknown_sizes([_held(4, 100), _held(4, 120), _with_summary(5, 10, 146, 3)]) is None
    assert unknown_sizes([_held(2, 50), _held(4, 256)]) is None


def test_a_tool_calls_name_and_arguments_are_counted_as_the_provider_counts_them() -> None:
    counter = default_counter()
    call = ToolCall(id="call_1", name="Read", args={"file_path": "/notes/a.md"})
    message = Message(type=MessageType.AI, content="", tool_calls=(call,))
    assert tool_call_tokens(message, counter) == counter.count("Read") + counter.count(
        '{"file_path": "/notes/a.md"}'
    )
    assert tool_call_tokens(Message(type=MessageType.HUMAN, content="hi"), counter) == 0


def test_the_characters_are_estimated_at_the_threads_ratio_less_mycels_header() -> None:
    sizes = unknown_sizes([_held(2, 50), _held(4, 256), _with_summary(9, 730, 146, 8)])
    assert sizes is not None
    measured = Measured(sizes, {9: 8})
    assert estimated_chars(measured, Fraction(4)) == 146 * 4 - len(SUMMARY_HEADER)

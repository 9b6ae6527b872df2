"""The summariser's requests, sized from the per-message numbers (memory_core.call_record.summariser),
equal the requests built from the text of a plan computed afresh (memory_core.rules.summariser)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings

from memory_core.call_inputs import call_inputs
from memory_core.call_record.summariser import requests_at
from memory_core.compaction import plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, ToolCall
from memory_core.rules.profile import RulesProfile
from memory_core.rules.summariser import (
    DEV_MAX_TOKENS,
    DEV_SUMMARY_PROMPT,
    DEV_SYSTEM_PROMPT,
    MAIN_SUMMARY_PROMPT,
    planned_requests,
)
from tests.core.strategies import thread_settings, threads


def _assert_sizes_agree(messages: tuple[Message, ...], memory: MemorySettings, rules: RulesProfile) -> int:
    dev = rules is RulesProfile.DEV
    compared = 0
    for found in call_inputs(messages, memory):
        sized = requests_at(found, memory, dev=dev, whole=True, rules=rules)
        plan = plan_compaction(messages[: found.index], settings=memory, keep_newest=dev)
        built = planned_requests(plan, rules=rules)
        assert [r.as_json() for r in sized] == [r.as_json() for r in built], f"call at {found.index}"
        for request in built:  # each built piece of text is as long as its size says
            assert all(
                p.prompt is not None or len(p.text or "") == p.chars
                for m in request.messages
                for p in m.parts
            )
        compared += len(built)
    return compared


@hypothesis_settings(max_examples=80, deadline=None)
@given(messages=threads(), memory=thread_settings())
def test_sized_requests_equal_the_built_ones_at_every_call(
    messages: tuple[Message, ...], memory: MemorySettings
) -> None:
    for rules in RulesProfile:
        _assert_sizes_agree(messages, memory, rules)


def _long_thread(turns: int) -> tuple[Message, ...]:
    out: list[Message] = []
    for t in range(turns):
        out.append(Message(type=MessageType.HUMAN, content=f"question {t} " + "q" * 2500 * (t % 2)))
        out.append(Message(type=MessageType.AI, content="", tool_calls=(ToolCall(id=f"c{t}", name="read"),)))
        body = "y" * (1500 + 1000 * (t % 4))
        content = body if t % 3 else [{"type": "text", "text": body}]
        out.append(Message(type=MessageType.TOOL, content=content, tool_call_id=f"c{t}", name="read"))
        out.append(Message(type=MessageType.AI, content="answer " * 60))
    return tuple(out)


@pytest.mark.parametrize("rules", list(RulesProfile))
def test_long_texts_protected_results_and_split_turns_are_sized_exactly(rules: RulesProfile) -> None:
    # Texts over 2,000 characters are cut to head and tail in the summariser's text; protect_recent keeps
    # the newest results whole; a small limit splits the kept turn.
    messages = _long_thread(24)
    for memory in (
        replace(MemorySettings(), context_limit=20_000, protect_recent=2),
        replace(MemorySettings(), context_limit=3_000, keep_recent_tokens=2_500, protect_recent=0),
    ):
        assert _assert_sizes_agree(messages, memory, rules) > 10


def test_each_branch_sends_its_own_shape() -> None:
    memory = replace(MemorySettings(), context_limit=20_000)
    messages = _long_thread(12)
    plan = plan_compaction(messages, settings=memory, keep_newest=True)
    dev = planned_requests(plan, rules=RulesProfile.DEV)[0]
    main = planned_requests(plan, rules=RulesProfile.MAIN)[0]
    assert [m.role for m in dev.messages] == [m.role for m in main.messages] == ["system", "human"]
    assert dev.max_tokens == DEV_MAX_TOKENS and main.max_tokens is None
    assert (
        dev.messages[0].chars == DEV_SYSTEM_PROMPT.chars
        and main.messages[0].chars == MAIN_SUMMARY_PROMPT.chars
    )
    conversation = plan.conversation_text
    assert (
        dev.messages[1].chars
        == len("Summarize this conversation:\n\n") + len(conversation) + 2 + DEV_SUMMARY_PROMPT.chars
    )
    assert main.messages[1].chars == len("Here is the conversation to summarize:\n\n") + len(conversation)
    assert conversation in dev.messages[1].shown and "nine sections" in dev.messages[1].shown

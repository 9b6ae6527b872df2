"""Replay must agree with a plan (and the model view) computed afresh at every call."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory_core.compaction import plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, message_from_dict
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruneAction
from memory_core.replay import placeholder_summary, replay_calls
from memory_core.tokens import default_counter, estimate_tokens
from tests.core.strategies import message_lists, settings, thread_settings, threads


@hypothesis_settings(max_examples=60, deadline=None)
@given(messages=message_lists(max_size=30), memory=settings(), summary_chars=st.integers(0, 80))
def test_replay_agrees_with_plan_on_arbitrary_lists(
    messages: tuple[Message, ...], memory: MemorySettings, summary_chars: int
) -> None:
    _assert_replay_agrees(messages, memory, summary_chars)


@hypothesis_settings(max_examples=120, deadline=None)
@given(messages=threads(), memory=thread_settings(), summary_chars=st.integers(0, 80))
def test_replay_agrees_with_plan_at_every_call_of_a_conversation(
    messages: tuple[Message, ...], memory: MemorySettings, summary_chars: int
) -> None:
    _assert_replay_agrees(messages, memory, summary_chars)


def _assert_replay_agrees(messages: tuple[Message, ...], memory: MemorySettings, summary_chars: int) -> None:
    calls = replay_calls(messages, settings=memory, summary_chars=summary_chars)
    assert [c.index for c in calls] == [i for i, m in enumerate(messages) if m.type is MessageType.AI]
    previous: ActiveSummary | None = None
    placeholder = placeholder_summary(summary_chars)
    for call in calls:
        stored = messages[: call.index]
        plan = plan_compaction(stored, settings=memory, summary_placeholder=placeholder)
        assert call.stored_tokens == plan.stored_tokens
        assert call.pruned_tokens == plan.estimated_tokens
        assert call.should_compact is plan.should_compact
        assert call.compacted is plan.would_compact
        assert call.soft_trimmed == plan.pruning.count(PruneAction.SOFT_TRIMMED)
        assert call.hard_cleared == plan.pruning.count(PruneAction.HARD_CLEARED)
        if call.should_compact:
            assert (call.summarize_count, call.keep_count) == (plan.summarize_count, plan.keep_count)
            assert call.split_turn is plan.split_turn
        if call.compacted:
            assert call.summary is not None
            assert call.summary.compact_up_to_index == plan.compact_up_to_index
            assert call.sent_tokens == plan.tokens_after
            assert call.sent_messages == len(plan.messages_after)
            previous = call.summary
        elif call.should_compact:
            assert call.summary is None
            assert call.sent_tokens == plan.estimated_tokens
        else:
            view = model_view(stored, settings=memory, summary=previous)
            assert call.sent_tokens == view.estimated_tokens
            assert call.sent_messages == len(view.items)
            assert (call.summary is not None) is view.summary_applied


def test_replay_recompacts_on_every_call_above_the_trigger() -> None:
    memory = MemorySettings(context_limit=1000, keep_recent_tokens=100)
    raws = []
    for turn in range(12):
        raws.append({"type": "human", "content": "q" * 200, "id": f"h{turn}"})
        raws.append({"type": "ai", "content": "a" * 200, "id": f"a{turn}", "tool_calls": []})
    calls = replay_calls([message_from_dict(r) for r in raws], settings=memory, summary_chars=100)
    over = [c for c in calls if c.should_compact]
    assert over and all(c.compacted for c in over)  # Mycel compares the full pruned history, not the view
    assert all(c.sent_tokens < c.pruned_tokens for c in over)
    first = over[0].index
    assert all(not c.should_compact and c.summary is None for c in calls if c.index < first)


def test_replay_counts_sent_tokens_with_a_real_tokenizer_and_reports_provider_usage() -> None:
    raws = [
        {"type": "human", "content": "hello there", "id": "h"},
        {"type": "ai", "content": "hi", "id": "a", "tool_calls": [], "usage_metadata": {"input_tokens": 42}},
        {"type": "human", "content": "bye", "id": "h2"},
        {"type": "ai", "content": "ok", "id": "a2", "tool_calls": []},
    ]
    messages = tuple(message_from_dict(r) for r in raws)
    counter = default_counter()
    calls = replay_calls(messages, settings=MemorySettings(), counter=counter)
    assert [c.provider_input_tokens for c in calls] == [42, None]
    assert calls[0].tiktoken_sent == counter.count("hello there")
    assert calls[1].tiktoken_sent == sum(counter.count(m.text) for m in messages[:3])
    assert calls[1].stored_tokens == estimate_tokens(messages[:3])

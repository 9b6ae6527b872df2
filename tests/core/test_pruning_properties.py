"""Invariants Mycel's own pruning and split rules guarantee, checked on generated threads."""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory_core.compaction import plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.pruning import SOFT_TRIM_MARKER, PruneAction, protected_steps, prune_decisions
from tests.core.strategies import message_lists, settings, thread_settings, threads

FAST = hypothesis_settings(max_examples=150, deadline=None)


@FAST
@given(messages=st.one_of(message_lists(), threads()), memory=settings())
def test_only_unprotected_long_string_tool_results_change(
    messages: tuple[Message, ...], memory: MemorySettings
) -> None:
    protected = protected_steps(messages, protect_recent=memory.protect_recent)
    for decision, original in zip(
        prune_decisions(messages, settings=memory).decisions, messages, strict=True
    ):
        changed = decision.message != original
        eligible = (
            original.type is MessageType.TOOL
            and isinstance(original.content, str)
            and len(original.content) > memory.soft_trim_chars
            and not (original.tool_call_id and original.tool_call_id in protected)
        )
        assert changed is eligible
        assert decision.action.changes_content is eligible


@FAST
@given(messages=st.one_of(message_lists(), threads()), memory=settings())
def test_soft_trim_keeps_head_and_tail_and_clear_names_the_size(
    messages: tuple[Message, ...], memory: MemorySettings
) -> None:
    half = memory.soft_trim_chars // 2
    for decision, original in zip(
        prune_decisions(messages, settings=memory).decisions, messages, strict=True
    ):
        if decision.action is PruneAction.SOFT_TRIMMED:
            assert isinstance(original.content, str) and isinstance(decision.content, str)
            head, _, tail = decision.content.partition(SOFT_TRIM_MARKER)
            assert original.content.startswith(head) and len(head) == half
            assert original.content.endswith(tail)
        if decision.action is PruneAction.HARD_CLEARED:
            assert isinstance(original.content, str)
            assert decision.content == f"[Tool output cleared \u2014 {len(original.content)} chars]"
            assert len(original.content) > memory.hard_clear_threshold


@FAST
@given(messages=st.one_of(message_lists(), threads()), memory=settings())
def test_protected_means_kept_only_by_protection(
    messages: tuple[Message, ...], memory: MemorySettings
) -> None:
    for decision, original in zip(
        prune_decisions(messages, settings=memory).decisions, messages, strict=True
    ):
        if decision.action is PruneAction.PROTECTED:
            assert decision.message == original and decision.in_protected_window
            assert isinstance(original.content, str) and len(original.content) > memory.soft_trim_chars


@FAST
@given(messages=st.one_of(message_lists(), threads()), memory=st.one_of(settings(), thread_settings()))
def test_split_covers_every_message_and_kept_part_starts_with_a_human(
    messages: tuple[Message, ...], memory: MemorySettings
) -> None:
    plan = plan_compaction(messages, settings=memory)
    assert plan.summarize_count + plan.keep_count == len(messages)
    if plan.summarize_count:
        assert plan.summarize_count >= 2
        if plan.keep_count:
            assert plan.pruning.messages[plan.summarize_count].type is MessageType.HUMAN
    if plan.compact_up_to_index is not None:
        assert plan.summarize_count <= plan.compact_up_to_index <= len(messages)
        assert len(plan.messages_after) == 1 + len(messages) - plan.compact_up_to_index
    assert plan.should_compact is (plan.estimated_tokens > int(memory.context_limit * memory.threshold))

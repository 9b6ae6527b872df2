from __future__ import annotations

from dataclasses import replace

from memory_core.compaction import plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, ToolCall
from memory_core.pruning import PruneAction
from memory_core.whatif import FleetThread, fleet_whatif, thread_side, thread_whatif

DEFAULTS = MemorySettings()


def _turn(n: int, result_chars: int) -> list[Message]:
    call = f"call_{n}"
    return [
        Message(type=MessageType.HUMAN, content=f"step {n}: check the logs"),
        Message(type=MessageType.AI, content="", tool_calls=(ToolCall(id=call, name="Bash", args={"n": n}),)),
        Message(type=MessageType.TOOL, content="x" * result_chars, tool_call_id=call, name="Bash"),
        Message(type=MessageType.AI, content=f"step {n} looks fine"),
    ]


def _thread(*sizes: int) -> list[Message]:
    messages: list[Message] = []
    for n, size in enumerate(sizes):
        messages.extend(_turn(n, size))
    return messages


def test_same_settings_change_nothing():
    messages = _thread(2000, 5000, 12000, 100, 100, 100)
    whatif = thread_whatif(messages, current=DEFAULTS, proposed=DEFAULTS)
    assert whatif.badge_changes == ()
    assert not whatif.differs
    assert whatif.proposed is whatif.current


def test_lower_soft_trim_turns_an_unchanged_result_into_a_soft_trimmed_one():
    messages = _thread(2000, 100, 100, 100, 100)
    whatif = thread_whatif(messages, current=DEFAULTS, proposed=replace(DEFAULTS, soft_trim_chars=1000))
    (change,) = whatif.badge_changes
    assert (change.index, change.tool_name, change.chars) == (2, "Bash", 2000)
    assert (change.before, change.after) == (PruneAction.UNCHANGED, PruneAction.SOFT_TRIMMED)
    assert whatif.differs
    assert whatif.proposed.next_call.soft_trimmed == whatif.current.next_call.soft_trimmed + 1
    assert whatif.proposed.next_call.pruned_tokens < whatif.current.next_call.pruned_tokens
    assert whatif.proposed.sent_tokens < whatif.current.sent_tokens


def test_higher_hard_threshold_turns_a_cleared_result_into_a_trimmed_one():
    messages = _thread(12000, 100, 100, 100, 100)
    whatif = thread_whatif(messages, current=DEFAULTS, proposed=replace(DEFAULTS, hard_clear_threshold=20000))
    (change,) = whatif.badge_changes
    assert (change.before, change.after) == (PruneAction.HARD_CLEARED, PruneAction.SOFT_TRIMMED)
    assert whatif.current.next_call.hard_cleared == 1 and whatif.proposed.next_call.hard_cleared == 0


def test_more_protected_steps_keep_an_older_result_whole():
    messages = _thread(5000, 100, 100, 100)
    whatif = thread_whatif(messages, current=DEFAULTS, proposed=replace(DEFAULTS, protect_recent=4))
    (change,) = whatif.badge_changes
    assert (change.before, change.after) == (PruneAction.SOFT_TRIMMED, PruneAction.PROTECTED)
    assert whatif.proposed.next_call.protected == 1


def test_smaller_context_limit_makes_the_thread_compact():
    messages = _thread(*([2500] * 12))
    small = replace(DEFAULTS, context_limit=8000)
    whatif = thread_whatif(messages, current=DEFAULTS, proposed=small)
    assert not whatif.current.next_call.would_compact
    assert whatif.proposed.next_call.would_compact
    assert whatif.proposed.next_call.trigger_tokens == int(8000 * 0.7)
    assert whatif.current.compactions == 0 < whatif.proposed.compactions
    assert whatif.proposed.tokens_saved > whatif.current.tokens_saved


def test_next_call_agrees_with_the_compaction_plan():
    messages = _thread(2500, 7000, 15000, 300, 2500, 2500)
    for settings in (DEFAULTS, replace(DEFAULTS, context_limit=6000), replace(DEFAULTS, soft_trim_chars=500)):
        side = thread_side(messages, settings=settings)
        plan = plan_compaction(messages, settings=settings)
        assert side.next_call.pruned_tokens == plan.estimated_tokens
        assert side.next_call.stored_tokens == plan.stored_tokens
        assert side.next_call.would_compact == plan.should_compact
        assert side.next_call.soft_trimmed == plan.pruning.count(PruneAction.SOFT_TRIMMED)


def test_replayed_calls_count_every_ai_message_and_savings_are_stored_minus_sent():
    messages = _thread(5000, 12000, 100, 100, 100)
    side = thread_side(messages, settings=DEFAULTS)
    assert len(side.calls) == 10
    assert side.tokens_saved == sum(c.stored_tokens - c.sent_tokens for c in side.calls)
    assert side.tokens_saved > 0  # once out of protect_recent, both big results shrink


def test_fleet_totals_add_up_threads_and_name_the_changed_ones():
    small = replace(DEFAULTS, context_limit=8000)
    busy = _thread(*([2500] * 12))
    quiet = _thread(100, 100)
    items = [
        FleetThread("busy", thread_whatif(busy, current=DEFAULTS, proposed=small)),
        FleetThread("quiet", thread_whatif(quiet, current=DEFAULTS, proposed=small)),
    ]
    fleet = fleet_whatif(items)
    assert fleet.current.threads == fleet.proposed.threads == 2
    assert (fleet.current.would_compact, fleet.proposed.would_compact) == (0, 1)
    assert fleet.compact_delta == 1
    assert fleet.changed_threads == ("busy",)
    assert fleet.current.calls == len(items[0].whatif.current.calls) + len(items[1].whatif.current.calls)
    assert fleet.proposed.saved_per_call == fleet.proposed.tokens_saved / fleet.proposed.calls
    assert fleet.proposed.saved_per_call > fleet.current.saved_per_call


def test_empty_fleet_has_zero_savings():
    fleet = fleet_whatif([])
    assert fleet.current.saved_per_call == 0.0 and fleet.changed_threads == ()

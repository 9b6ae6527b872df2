"""Mycel dev's rules over a whole thread (engine level): the profile a layout chooses, the what-if under a
`trigger_tokens` below keep_recent_tokens, and dev's walk against main's on the same history (the sample
home, written by Mycel's own code)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory_core.app.calls import configured_for, thread_calls
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.call_inputs import call_inputs
from memory_core.call_record.dev_calls import dev_replayed
from memory_core.compaction import split_index
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.model_view import ActiveSummary as DevSummary
from memory_core.records import BreakerState
from memory_core.rules.dev import dev_trigger_tokens, next_breaker, plan_dev_call
from memory_core.rules.profile import RulesProfile, UnknownRules, parse_rules, rules_for, rules_reason
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.core.strategies import thread_settings, threads

COMPACTING_THREAD = "m_0D8EzdJXJhk9-2"  # leon:snug, 5,500 (sample README: 7 rows, 3 split turns)


def _messages(thread_id: str = COMPACTING_THREAD):
    reader = MycelReader(resolve_locations())
    row = reader.get_thread(thread_id).value
    assert row is not None
    state = reader.get_state(thread_id, row.head_checkpoint_id).value
    assert state is not None
    return reader, row, state.messages


def test_the_layout_chooses_the_rules_and_an_override_wins() -> None:
    assert rules_for("dev") is RulesProfile.DEV and rules_for("main") is RulesProfile.MAIN
    assert rules_reason(override=None, layout="dev") == (RulesProfile.DEV, "dev layout")
    assert rules_reason(override=RulesProfile.MAIN, layout="dev") == (RulesProfile.MAIN, "--rules")
    with pytest.raises(UnknownRules, match="'beta'"):
        parse_rules("beta")


def test_dev_trigger_is_absolute_when_set_else_seven_tenths_in_double_arithmetic() -> None:
    assert dev_trigger_tokens(MemorySettings(context_limit=700)) == 489  # 700 * 0.7 = 489.99999999999994
    assert dev_trigger_tokens(MemorySettings(context_limit=700, fixed_trigger_tokens=50)) == 50
    # Main's rules ignore the dev setting.
    assert MemorySettings(context_limit=700, fixed_trigger_tokens=50).trigger_tokens == 489


def test_keep_newest_moves_a_cut_that_would_keep_nothing() -> None:
    tokens, humans = [10, 10, 10, 500], [True, False, True, False]
    # The newest message alone is over the budget: main summarises all four and keeps nothing; dev keeps
    # the newest, so the boundary walk goes back to the human message before it.
    assert split_index(tokens, humans, keep_recent_tokens=100) == 4
    assert split_index(tokens, humans, keep_recent_tokens=100, keep_newest=True) == 2


def test_breaker_opens_at_the_third_failure_and_a_success_resets_the_count() -> None:
    state = BreakerState()
    for _ in range(2):
        state = next_breaker(state, succeeded=False)
    assert state == BreakerState(2, False)
    assert next_breaker(state, succeeded=True) == BreakerState(0, False)
    assert next_breaker(state, succeeded=False) == BreakerState(3, True)
    assert next_breaker(BreakerState(5, False), succeeded=False) == BreakerState(6, True)


def test_trigger_tokens_below_keep_recent_attempts_at_every_call_and_compacts_nothing(
    sample_home: Path,
) -> None:
    _, _, messages = _messages()
    # keep_recent_tokens far above the whole history: the split keeps everything, so every attempt is a
    # no-op success (no summariser call, breaker reset), and what is sent is the pruned full history.
    settings = MemorySettings(context_limit=1_000_000, keep_recent_tokens=200_000, fixed_trigger_tokens=10)
    calls = dev_replayed(messages, settings, summary_chars=100)
    assert len(calls) > 5
    attempted = [c for c in calls if c.attempted]
    assert [c.call for c in attempted] == [c.call for c in calls if c.pruned_tokens > 10]
    assert len(attempted) >= len(calls) - 1
    assert not any(c.compacted for c in calls)
    assert all(c.breaker_failures == 0 and not c.breaker_open for c in calls)
    assert all(c.sent_messages == c.index and c.summary is None for c in calls)
    assert all(c.trigger_tokens == 10 for c in calls)


def test_a_low_trigger_with_a_small_keep_compacts_once_per_crossing_not_every_call(sample_home: Path) -> None:
    _, _, messages = _messages()
    settings = MemorySettings(context_limit=1_000_000, keep_recent_tokens=500, fixed_trigger_tokens=2_000)
    calls = dev_replayed(messages, settings, summary_chars=400)
    compacted = [c for c in calls if c.compacted]
    assert compacted, "the history crosses 2,000 tokens"
    over_stored = [c for c in calls if c.pruned_tokens > 2_000]
    assert len(over_stored) > len(compacted)  # main's rules would compact at every one of these
    for call in calls:
        assert call.trigger_view_tokens is not None
        # dev compacts exactly where its estimate of the summarized view is over the trigger.
        assert call.compacted is (call.trigger_view_tokens > 2_000)
        if call.summary is not None and not call.compacted:
            assert call.trigger_view_tokens < call.pruned_tokens  # measured on the view, not the history


def test_a_main_thread_under_dev_rules_is_named_so_and_main_stays_untouched(sample_home: Path) -> None:
    reader, row, _ = _messages()
    locations = reader.locations
    today = configured_for(locations, thread_memory_settings(locations, row))
    as_main = thread_calls(reader, row, today, counter=None)
    again = thread_calls(reader, row, today, counter=None, rules=RulesProfile.MAIN)
    as_dev = thread_calls(reader, row, today, counter=None, rules=RulesProfile.DEV)
    assert (as_main.rules, as_main.rules_reason) == (RulesProfile.MAIN, "main layout")
    assert (again.rules, again.rules_reason) == (RulesProfile.MAIN, "--rules")
    assert again.calls == as_main.calls
    assert (as_dev.rules, as_dev.rules_reason) == (RulesProfile.DEV, "--rules")
    # The rows are the record under either rules: dev compacted where a row says so, each an attempt.
    rows = {r.compacted_at for r in as_main.summaries}
    assert {c.index for c in as_dev.calls if c.compacted} == rows
    assert all(c.attempted for c in as_dev.calls if c.compacted)
    assert replace(as_main.calls[0], attempted=False) == as_main.calls[0]  # main's calls keep dev's defaults


@given(messages=threads(), memory=thread_settings(), keep=st.integers(0, 400), trigger=st.integers(1, 400))
@hypothesis_settings(max_examples=30, deadline=None)
def test_the_fast_dev_split_and_the_walk_over_a_thread_equal_plan_dev_call(
    messages: list[Message], memory: MemorySettings, keep: int, trigger: int
) -> None:
    """At every call of a thread with no record (a working summariser), dev's walk agrees with dev's own
    one-call plan given the summary and breaker the walk held before that call."""
    settings = replace(memory, keep_recent_tokens=max(keep, 1), fixed_trigger_tokens=trigger)
    held: DevSummary | None = None
    for call in dev_replayed(messages, settings, summary_chars=40):
        plan = plan_dev_call(messages[: call.index], settings=settings, active_summary=held)
        splitter_cut = next(c for c in call_inputs(messages, settings) if c.index == call.index).splitter()
        assert (
            splitter_cut.cut(settings.effective_keep_recent_tokens, keep_newest=True) == plan.summarize_count
        )
        assert call.trigger_view_tokens == plan.trigger_view_tokens
        assert call.attempted is plan.attempted
        assert call.compacted is plan.compacted
        if plan.compacted:
            held = DevSummary(
                call.summary.summary_text if call.summary else "", plan.compact_up_to_index or 0
            )

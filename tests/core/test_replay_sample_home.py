"""Replay against the real sample data home: Mycel's own summary rows say where it compacted."""

from __future__ import annotations

from pathlib import Path

from memory_core.memory_settings import MemorySettings
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruneAction, prune_decisions
from memory_core.replay import replay_calls
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader

COMPACTING_THREAD = "m_0D8EzdJXJhk9-2"  # leon:snug, context_limit 5500 (sample README)
TOOL_HEAVY_THREAD = "m_npRsndIka9dx-2"


def test_replay_compacts_exactly_where_mycel_saved_summaries(sample_home: Path) -> None:
    reader = MycelReader(resolve_locations())
    state = reader.get_state(COMPACTING_THREAD).value
    assert state is not None
    rows = reader.list_summaries(COMPACTING_THREAD).value
    assert len(rows) == 7
    calls = replay_calls(state.messages, settings=MemorySettings(context_limit=5500))
    compacted = [c for c in calls if c.compacted]
    # Mycel stores compacted_at = len(messages) of the call, i.e. the index of the AI message it produced.
    by_count = {row.compacted_at: row for row in rows}
    assert [c.index for c in compacted] == sorted(by_count)
    for call in compacted:
        row = by_count[call.index]
        assert call.summary is not None
        assert call.summary.compact_up_to_index == row.compact_up_to_index
        assert call.split_turn is row.is_split_turn
    assert all(not c.should_compact for c in calls if c.index < compacted[0].index)


def test_active_summary_row_gives_the_view_of_the_last_call(sample_home: Path) -> None:
    reader = MycelReader(resolve_locations())
    state = reader.get_state(COMPACTING_THREAD).value
    assert state is not None
    active = next(row for row in reader.list_summaries(COMPACTING_THREAD).value if row.is_active)
    last_input = state.messages[: active.compacted_at]
    view = model_view(
        last_input, settings=MemorySettings(context_limit=5500), summary=ActiveSummary.from_row(active)
    )
    assert view.summary_applied
    assert view.items[0].message.text.endswith(active.summary_text)
    assert [item.origin for item in view.items[1:]] == list(
        range(active.compact_up_to_index, active.compacted_at)
    )


def test_tool_heavy_thread_has_the_trims_mycel_made(sample_home: Path) -> None:
    reader = MycelReader(resolve_locations())
    state = reader.get_state(TOOL_HEAVY_THREAD).value
    assert state is not None
    decisions = prune_decisions(state.messages, settings=MemorySettings()).decisions
    trimmed = {d.original_chars: d for d in decisions if d.action is PruneAction.SOFT_TRIMMED}
    assert 6431 in trimmed
    content = trimmed[6431].content
    assert isinstance(content, str) and len(content) == 3019
    # The 12,731-char output belongs to the third-newest tool-calling step: protect_recent=3 keeps it whole.
    protected = [d for d in decisions if d.action is PruneAction.PROTECTED]
    assert [d.original_chars for d in protected] == [12731]
    assert not any(d.action is PruneAction.HARD_CLEARED for d in decisions)
    one_step = prune_decisions(state.messages, settings=MemorySettings(protect_recent=2)).decisions
    assert [d.content for d in one_step if d.action is PruneAction.HARD_CLEARED] == [
        "[Tool output cleared \u2014 12731 chars]"
    ]

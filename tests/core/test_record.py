"""The record-first reconstruction (memory_core.call_record) against Mycel's arithmetic and Mycel's own rows.

Expected values come from outside the module under test: the summary rows Mycel itself stored (the
sample home), and plan_compaction — the one-call plan the vectors prove against Mycel's code — walked call
by call with Mycel's cache rule (reference §3.9).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from memory_core.app.calls import calls_of, configured_for, thread_calls
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.call_inputs import call_inputs
from memory_core.call_record.calls import checkpoints_holding, holder_of
from memory_core.call_record.evidence import Configured
from memory_core.call_record.intervals import UNBOUNDED, Limits, preimage
from memory_core.compaction import plan_compaction, split_index, turn_prefix_count
from memory_core.memory_settings import MemorySettings, compaction_trigger
from memory_core.messages import Message, MessageType
from memory_core.records import CheckpointRow, SummaryRow
from memory_core.replay import replay_calls
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.core.strategies import threads
from tests.support.mycel_oracle import expected_request_sizes

COMPACTING_THREAD = "m_0D8EzdJXJhk9-2"  # leon:snug, 5,500 (sample README: 7 rows, 3 split turns)


def _rows(thread_id: str, rows: list[tuple[int, int, bool]], text: str = "S" * 50) -> tuple[SummaryRow, ...]:
    """Summary rows as Mycel's store saves them: (compact_up_to_index, compacted_at, split turn)."""
    return tuple(
        SummaryRow(f"{thread_id}_{n:012x}", thread_id, text, up_to, at, split, "P" if split else None,
                   n == len(rows) - 1, None, "summary")
        for n, (up_to, at, split) in enumerate(rows)
    )  # fmt: skip


def _configured(
    settings: MemorySettings, source: str = "test", known: dict[str, int] | None = None
) -> Configured:
    return Configured(settings, source, known or {})


# -- the sample home: Mycel's own rows --------------------------------------------------------------------


def _sample(thread_id: str = COMPACTING_THREAD):
    reader = MycelReader(resolve_locations())
    row = reader.get_thread(thread_id).value
    assert row is not None
    return reader, row


def test_every_call_compacts_where_mycel_stored_a_row_and_sends_what_the_row_says(sample_home: Path) -> None:
    reader, row = _sample()
    locations = reader.locations
    record = thread_calls(
        reader, row, configured_for(locations, thread_memory_settings(locations, row)), counter=None
    )
    stored = reader.list_summaries(COMPACTING_THREAD).value
    assert len(stored) == 7
    by_count = {r.compacted_at: r for r in stored}
    assert [c.index for c in record.calls if c.compacted] == sorted(by_count) == list(range(11, 24, 2))
    for call in record.calls:
        if call.index in by_count:
            written = by_count[call.index]
            assert call.summary_id == written.summary_id and call.summary_stored
            assert call.split_turn is written.is_split_turn
            # system prompt + the summary + messages[compact_up_to_index:compacted_at]
            assert call.request_messages == 2 + written.compacted_at - written.compact_up_to_index
        else:
            assert call.request_messages == call.index + 1 and call.summary is None
    assert record.context_limit == 5500 and record.context_limit_source == "models.json"
    assert record.inference.disagreements == ()
    assert all(c.checkpoint_id for c in record.calls)


def test_a_sample_call_sends_the_real_summary_text(sample_home: Path) -> None:
    reader, row = _sample()
    record = thread_calls(reader, row, _configured(MemorySettings(context_limit=5500)), counter=None)
    active = next(r for r in reader.list_summaries(COMPACTING_THREAD).value if r.is_active)
    last = record.calls[-1]
    assert last.summary is not None and last.summary.summary_text == active.summary_text
    # Mycel's estimate of what was sent: header + summary text + the kept pruned messages, // 2
    kept = record.messages[active.compact_up_to_index : active.compacted_at]
    chars = len("[Conversation Summary]\n") + len(active.summary_text) + sum(len(m.text) for m in kept)
    assert last.sent_tokens == chars // 2


def test_a_config_that_could_not_have_written_the_rows_is_named_and_the_record_wins(
    sample_home: Path,
) -> None:
    reader, row = _sample()
    assumed = _configured(MemorySettings(context_limit=1_000_000), "assumed default")
    record = thread_calls(reader, row, assumed, counter=None)
    faithful = thread_calls(reader, row, _configured(MemorySettings(context_limit=5500)), counter=None)
    assert [(c.compacted, c.request_messages) for c in record.calls] == [
        (c.compacted, c.request_messages) for c in faithful.calls
    ]
    (segment,) = record.inference.segments
    assert 5500 in segment.limits and 1_000_000 not in segment.limits
    assert segment.settings.context_limit == 5500  # the roundest limit the rows allow
    assert segment.source == "inferred from summaries"
    (line,) = record.inference.disagreements
    assert f"need a context limit {segment.limits.words()}; today's config gives 1,000,000" in line
    named = thread_calls(
        reader,
        row,
        _configured(MemorySettings(context_limit=1_000_000), known={"leon:snug": 5500}),
        counter=None,
    )
    assert named.calls[-1].context_limit_source == "inferred from summaries (matches leon:snug)"


@pytest.mark.parametrize("dropped", range(1, 6))
def test_a_row_mycel_failed_to_save_is_a_compaction_not_stored(sample_home: Path, dropped: int) -> None:
    reader, row = _sample()
    state = reader.get_state(COMPACTING_THREAD).value
    assert state is not None
    rows = tuple(reader.list_summaries(COMPACTING_THREAD).value)
    lost = rows[dropped]
    calls, inference = calls_of(
        state.messages, rows[:dropped] + rows[dropped + 1 :], ((), ()),
        _configured(MemorySettings(context_limit=5500)), counter=None,
    )  # fmt: skip
    assert inference.not_stored == {lost.compacted_at}
    call = next(c for c in calls if c.index == lost.compacted_at)
    assert call.compacted and not call.compaction_stored and not call.summary_stored
    assert call.summary is not None and call.summary.compact_up_to_index == lost.compact_up_to_index
    assert call.request_messages == 2 + lost.compacted_at - lost.compact_up_to_index
    assert [c.index for c in calls if c.compacted] == list(range(11, 24, 2))
    assert any("no summary row is stored" in line for line in inference.disagreements)


def test_a_row_written_at_no_call_of_this_history_is_named(sample_home: Path) -> None:
    reader, _ = _sample()
    state = reader.get_state(COMPACTING_THREAD).value
    assert state is not None
    rows = tuple(reader.list_summaries(COMPACTING_THREAD).value) + _rows(COMPACTING_THREAD, [(4, 200, False)])
    _, inference = calls_of(
        state.messages, rows, ((), ()), _configured(MemorySettings(context_limit=5500)), counter=None
    )
    assert [r.compacted_at for r in inference.off_history] == [200]
    assert any("no model call on this history" in line for line in inference.disagreements)


# -- Mycel's arithmetic on generated conversations ------------------------------------------------------


def _rows_mycel_writes(messages: tuple[Message, ...], settings: MemorySettings) -> tuple[SummaryRow, ...]:
    """The rows Mycel's middleware saves on this thread under `settings` (one per compaction)."""
    found = []
    for i, m in enumerate(messages):
        if m.type is not MessageType.AI:
            continue
        plan = plan_compaction(messages[:i], settings=settings)
        if plan.would_compact:
            assert plan.compact_up_to_index is not None
            found.append((plan.compact_up_to_index, i, plan.split_turn))
    return _rows("t", found)


@hypothesis_settings(max_examples=80, deadline=None)
@given(
    messages=threads(max_turns=10),
    limit=st.integers(80, 2000),
    assumed=st.sampled_from([128_000, 1_000_000]),
)
def test_the_rows_of_any_limit_are_rebuilt_whatever_today_assumes(
    messages: tuple[Message, ...], limit: int, assumed: int
) -> None:
    truth = MemorySettings(context_limit=limit)
    rows = _rows_mycel_writes(messages, truth)
    event(f"{min(len(rows), 3)}+ rows")
    expected = expected_request_sizes(messages, lambda n: truth)
    for today in (truth, replace(truth, context_limit=assumed)):
        calls, inference = calls_of(messages, rows, ((), ()), _configured(today), counter=None)
        assert [c.request_messages for c in calls] == expected
        assert {c.index for c in calls if c.compacted} == {r.compacted_at for r in rows}
        assert inference.not_stored == frozenset()
        if rows:
            assert limit in inference.segments[0].limits  # the truth is never ruled out
    if rows:
        _, inference = calls_of(
            messages, rows, ((), ()), _configured(replace(truth, context_limit=assumed)), counter=None
        )
        assert inference.disagreements and f"today's config gives {assumed:,}" in inference.disagreements[0]


@hypothesis_settings(max_examples=60, deadline=None)
@given(messages=threads(max_turns=10), limit=st.integers(80, 2000), data=st.data())
def test_one_lost_row_under_todays_config_is_a_compaction_not_stored(messages, limit: int, data) -> None:
    truth = MemorySettings(context_limit=limit)
    rows = _rows_mycel_writes(messages, truth)
    if len(rows) < 2:
        return
    lost = data.draw(st.integers(0, len(rows) - 1))
    kept = rows[:lost] + rows[lost + 1 :]
    calls, inference = calls_of(messages, kept, ((), ()), _configured(truth), counter=None)
    assert inference.not_stored == {rows[lost].compacted_at}
    assert [c.request_messages for c in calls] == expected_request_sizes(messages, lambda n: truth)


@hypothesis_settings(max_examples=80, deadline=None)
@given(messages=threads(max_turns=10), keep=st.integers(1, 3000), limit=st.integers(50, 20_000))
def test_the_fast_splitter_is_mycels_split(messages: tuple[Message, ...], keep: int, limit: int) -> None:
    for call in call_inputs(messages, MemorySettings()):
        tokens, humans = call.split_tokens(), call.humans()
        splitter = call.splitter()
        cut = split_index(tokens, humans, keep_recent_tokens=keep)
        assert splitter.cut(keep) == cut
        assert splitter.turn_prefix(cut, limit) == turn_prefix_count(
            tokens[cut:], humans[cut:], context_limit=limit
        )


@hypothesis_settings(max_examples=30, deadline=None)
@given(messages=threads(max_turns=6))
def test_the_replay_and_the_record_measure_a_call_alike(messages: tuple[Message, ...]) -> None:
    settings = MemorySettings(context_limit=800)
    replayed = replay_calls(messages, settings=settings)
    calls, _ = calls_of(messages, (), ((), ()), _configured(settings), counter=None)
    assert [(c.stored_tokens, c.pruned_tokens, c.soft_trimmed, c.hard_cleared) for c in calls] == [
        (c.stored_tokens, c.pruned_tokens, c.soft_trimmed, c.hard_cleared) for c in replayed
    ]


# -- limits and lineage ---------------------------------------------------------------------------------


def test_limits_arithmetic() -> None:
    a = Limits.between(5285, 5562)
    assert a.roundest() == 5500 and Limits.between(5923, 6235).roundest() == 6000
    assert (a & Limits.between(5500, 9000)).spans == ((5500, 5562),)
    assert Limits.union([Limits.between(1, 5), Limits.between(6, 9), Limits.between(20, 30)]).spans == (
        (1, 9),
        (20, 30),
    )
    assert (
        a.words() == "between 5,285 and 5,562" and Limits.between(9001, UNBOUNDED).words() == "at least 9,001"
    )
    # the limits whose trigger int(0.7 × limit) is under 3,850: exactly those below 5,500
    under = preimage(compaction_trigger, 10, UNBOUNDED, at_most=3849)
    assert compaction_trigger(5500) == 3849 and under.high == 5500  # Mycel's float: int(3849.999…)


def _checkpoint(cid: str, parent: str | None, messages: int) -> CheckpointRow:
    return CheckpointRow(cid, parent, None, None, None, None, None, {}, messages, None)


def test_each_message_belongs_to_the_oldest_checkpoint_after_which_it_never_left() -> None:
    # a → b → c (4 messages) → rollback r (2 messages, a copy of b) → d (4 messages, new ones)
    rows = [_checkpoint("d", "r", 4), _checkpoint("r", "c", 2), _checkpoint("c", "b", 4),
            _checkpoint("b", "a", 2), _checkpoint("a", None, 0)]  # fmt: skip
    holding = checkpoints_holding(rows, "d")
    assert [holder_of(i, holding) for i in range(4)] == ["b", "b", "d", "d"]
    assert holder_of(7, holding) is None

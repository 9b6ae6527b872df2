"""Issue 11's evidence threads, written by the demo home, rebuilt from what was stored.

The demo records, while it writes, the settings its model node held per call segment, where it compacted
and which summaries it failed to save. The reconstruction sees none of that: only the stores. Expected
message counts per call come from plan_compaction under the recorded settings (tests/support/mycel_oracle).
"""

from __future__ import annotations

import pytest

from memory_core.app.calls import ThreadCalls, configured_for, thread_calls
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.demo import DemoManifest, write_demo_home
from memory_core.demo.home import DemoThread
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.mycel_env import point_env_at
from tests.support.mycel_oracle import expected_request_sizes

EVIDENCE = ("compaction", "standalone", "model_switch", "unsaved_summary", "large_window")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoManifest:
    return write_demo_home(tmp_path_factory.mktemp("demo") / "home", seed=7)


def _record(demo: DemoManifest, monkeypatch: pytest.MonkeyPatch, key: str) -> tuple[DemoThread, ThreadCalls]:
    point_env_at(monkeypatch, demo.folder)
    locations = resolve_locations()
    reader = MycelReader(locations)
    thread = demo.thread(key)
    row = reader.get_thread(thread.thread_id).value
    assert row is not None
    today = configured_for(locations, thread_memory_settings(locations, row))
    return thread, thread_calls(reader, row, today, counter=None)


def _settings_at(thread: DemoThread):
    segments = sorted(thread.settings_segments, key=lambda s: s.first_call)

    def at(n: int):  # n: 0-based call
        return [s for s in segments if s.first_call <= n + 1][-1].settings

    return at


@pytest.mark.parametrize("key", EVIDENCE)
def test_every_evidence_thread_is_rebuilt_as_mycel_ran_it(demo, monkeypatch, key: str) -> None:
    thread, record = _record(demo, monkeypatch, key)
    assert len(record.calls) == thread.model_calls
    assert [c.index for c in record.calls if c.compacted] == list(thread.compacted_at)
    assert [c.index for c in record.calls if c.compacted and not c.compaction_stored] == list(
        thread.summaries_not_stored
    )
    assert [c.request_messages for c in record.calls] == expected_request_sizes(
        record.messages, _settings_at(thread)
    )
    # each call runs under the limit that was in force
    at = _settings_at(thread)
    assert [c.context_limit for c in record.calls] == [at(n).context_limit for n in range(len(record.calls))]


def test_the_standalone_thread_says_todays_assumption_could_not_have_written_its_summaries(
    demo, monkeypatch
) -> None:
    thread, record = _record(demo, monkeypatch, "standalone")
    assert thread.thread_id == "interactive-chat" and thread.standalone
    assert record.configured.source == "assumed default"
    assert record.configured.settings.context_limit == 1_000_000
    (segment,) = record.inference.segments
    assert 6000 in segment.limits and segment.source == "inferred from summaries"
    (line,) = record.inference.disagreements
    assert line.startswith("The stored summaries of the thread need a context limit between")
    assert line.endswith("today's config gives 1,000,000.")
    assert all(row.store == "main" for row in record.summaries)  # a standalone's summaries sit in leon.db


def test_the_model_switch_is_two_segments_and_keep_recent_stays_lowered(demo, monkeypatch) -> None:
    thread, record = _record(demo, monkeypatch, "model_switch")
    first, second = record.inference.segments
    switch = sorted(s.first_call for s in thread.settings_segments)[1]
    assert second.first + 1 == switch
    assert (first.settings.context_limit, second.settings.context_limit) == (5500, 9000)
    assert second.kept_lowered and second.settings.effective_keep_recent_tokens == 2200
    assert any("keep_recent_tokens stayed at 2,200" in line for line in record.inference.disagreements)


def test_the_split_turns_are_the_rows(demo, monkeypatch) -> None:
    _, record = _record(demo, monkeypatch, "compaction")
    rows = {r.compacted_at: r for r in record.summaries}
    assert any(r.is_split_turn for r in rows.values())
    for call in record.calls:
        if call.compacted:
            assert call.split_turn is rows[call.index].is_split_turn


def test_the_large_window_uses_a_sliver_and_never_compacts(demo, monkeypatch) -> None:
    _, record = _record(demo, monkeypatch, "large_window")
    assert record.context_limit == 1_000_000
    assert not any(c.compacted for c in record.calls)
    assert 0.01 < max(c.fill for c in record.calls) < 0.05
    assert any(c.soft_trimmed or c.hard_cleared for c in record.calls)


def test_every_demo_thread_agrees_with_todays_config_where_nothing_changed(demo, monkeypatch) -> None:
    for key in ("lab", "chat", "steer", "glossary", "qa", "large_window", "unsaved_summary"):
        _, record = _record(demo, monkeypatch, key)
        assert all(c.context_limit == record.configured.settings.context_limit for c in record.calls), key
        assert record.inference.segments[0].source == record.configured.source, key

"""MycelReader over the real sample home (written by Mycel itself) and over a demo home."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memory_core.cli import main as cli_main
from memory_core.records import ProblemKind
from memory_core.stores.checkpoints import list_checkpoint_meta, read_payload
from memory_core.stores.reader import MycelReader
from memory_core.stores.series import naive_series
from memory_core.stores.sqlite.connect import opened
from memory_core.tokens import default_counter
from tests.core.store_builders import file_hashes, point_locations

SAMPLE_KEY = "sk-ant-FAKE-sample-key"


@pytest.fixture
def reader(sample_home: Path) -> MycelReader:
    return MycelReader(point_locations(sample_home))


def naive_points(reader: MycelReader, thread_id: str) -> dict[str, tuple[object, ...]]:
    with opened(reader.locations.main, store="main", timeout_s=10, row_cap=10**6) as db:
        metas = list_checkpoint_meta(db, thread_id)
        series = naive_series(metas, lambda c: read_payload(db, thread_id, c), count=default_counter().count)
    return {
        k: (p.messages, p.estimated_tokens, p.tiktoken_tokens, p.input_tokens, p.readable)
        for k, p in series.points.items()
    }


def fast_points(reader: MycelReader, thread_id: str) -> dict[str, tuple[object, ...]]:
    result = reader.list_checkpoints(thread_id)
    return {
        c.checkpoint_id: (c.messages, c.estimated_tokens, c.tiktoken_tokens, c.input_tokens, c.readable)
        for c in result.value
    }


def test_thread_list_has_the_six_sample_threads_with_their_counts(reader: MycelReader) -> None:
    result = reader.list_threads()
    assert result.problems == ()
    rows = {r.thread_id: r for r in result.value}
    assert set(rows) == {
        "m_npRsndIka9dx-1",
        "m_0D8EzdJXJhk9-1",
        "m_npRsndIka9dx-2",
        "m_0D8EzdJXJhk9-2",
        "m_0D8EzdJXJhk9-3",
        "m_npRsndIka9dx-3",
    }
    counts = {t: (r.messages, r.checkpoints) for t, r in rows.items()}
    assert counts["m_npRsndIka9dx-2"] == (31, 40)
    assert counts["m_0D8EzdJXJhk9-2"] == (24, 37)
    assert counts["m_0D8EzdJXJhk9-1"] == (6, 10)
    assert rows["m_0D8EzdJXJhk9-2"].summaries == 7
    assert rows["m_0D8EzdJXJhk9-2"].active_summary is True
    assert rows["m_0D8EzdJXJhk9-1"].name == "Toad"
    assert rows["m_npRsndIka9dx-2"].name == "Morel · 分身1"
    # The model actually used comes from checkpoint metadata, not the virtual name in `threads`.
    assert rows["m_0D8EzdJXJhk9-1"].model == "gpt-4o-mini"
    assert rows["m_npRsndIka9dx-2"].model == "claude-sonnet-4-5-20250929"
    assert all(r.bytes_on_disk > 0 and r.updated_at is not None for r in rows.values())
    assert rows["m_npRsndIka9dx-2"].sandbox_state == "running"


@pytest.mark.parametrize(
    "thread_id",
    ["m_npRsndIka9dx-1", "m_0D8EzdJXJhk9-1", "m_npRsndIka9dx-2", "m_0D8EzdJXJhk9-2", "m_0D8EzdJXJhk9-3"],
)
def test_series_fast_path_equals_decoding_every_checkpoint(reader: MycelReader, thread_id: str) -> None:
    assert fast_points(reader, thread_id) == naive_points(reader, thread_id)


def test_checkpoints_come_newest_first_with_parents_and_provider_tokens(reader: MycelReader) -> None:
    rows = reader.list_checkpoints("m_npRsndIka9dx-2").value
    assert rows[0].checkpoint_id == reader.head_checkpoint_id("m_npRsndIka9dx-2")
    assert [r.checkpoint_id for r in rows] == sorted((r.checkpoint_id for r in rows), reverse=True)
    assert rows[-1].parent_checkpoint_id is None and rows[-1].source == "input"
    assert rows[0].messages == 31 and rows[0].input_tokens == 7005
    assert rows[0].metadata["api_key"] == "[redacted]"


def test_state_at_head_decodes_messages_and_spill_notice(reader: MycelReader) -> None:
    state = reader.get_state("m_npRsndIka9dx-2").value
    assert state is not None and state.checkpoint.readable
    assert len(state.messages) == 31
    spilled = [m for m in state.messages if "Full output saved to:" in m.text]
    assert len(spilled) == 1 and spilled[0].name is None


def test_spill_file_is_found_under_the_copied_home(reader: MycelReader) -> None:
    result = reader.get_spill_file("m_npRsndIka9dx-2", "toolu_i2HMWbiZ2p2J7AfAvuVmbjGJ")
    assert result.value is not None
    assert result.value.size == 59_668
    assert result.value.text is not None and len(result.value.text.encode()) == 59_668


def test_summaries_queue_events_file_ops_and_sandbox(reader: MycelReader) -> None:
    summaries = reader.list_summaries("m_0D8EzdJXJhk9-2")
    assert summaries.problems == ()
    assert [s.compact_up_to_index for s in summaries.value] == [4, 4, 12, 12, 16, 16, 16]
    assert [s.is_active for s in summaries.value] == [False] * 6 + [True]
    assert sum(s.is_split_turn for s in summaries.value) == 3
    assert reader.list_queue().value == []
    events = reader.list_run_events("m_npRsndIka9dx-3").value
    assert any(e.event_type == "error" for e in events)
    ops = reader.list_file_operations("m_npRsndIka9dx-3").value
    assert ops and {o.store for o in ops} == {"file_ops"}
    sandbox = reader.get_sandbox("m_npRsndIka9dx-2").value
    assert sandbox is not None and sandbox.leases and sandbox.terminals and sandbox.volumes
    assert sandbox.state == "running"
    assert reader.get_sandbox("no-such-thread").value is None


def test_file_status_lists_every_role(reader: MycelReader) -> None:
    status = {s.role: s for s in reader.file_status()}
    assert status["main"].exists and "checkpoints" in status["main"].tables
    assert any("task_path" in note for note in status["main"].notes)
    assert status["main"].journal_mode == "wal"
    assert status["tasks"].journal_mode == "rollback"


def test_reading_everything_leaves_every_file_byte_identical(
    sample_home: Path, reader: MycelReader, capsys: pytest.CaptureFixture[str]
) -> None:
    before = file_hashes(sample_home)
    for row in reader.list_threads().value:
        reader.list_checkpoints(row.thread_id)
        reader.get_state(row.thread_id)
        reader.list_summaries(row.thread_id)
        reader.list_file_operations(row.thread_id)
        reader.list_run_events(row.thread_id)
        reader.get_sandbox(row.thread_id)
        reader.get_thread(row.thread_id)
    reader.get_spill_file("m_npRsndIka9dx-2", "toolu_i2HMWbiZ2p2J7AfAvuVmbjGJ")
    reader.file_status()
    assert cli_main(["threads", "--json"]) == 0
    assert cli_main(["thread", "m_npRsndIka9dx-2", "--json"]) == 0
    capsys.readouterr()
    assert file_hashes(sample_home) == before


def test_cli_json_has_the_issue_keys_and_no_api_key(
    sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["threads", "--json"]) == 0
    out = capsys.readouterr().out
    threads = json.loads(out)
    assert {
        "thread_id",
        "messages",
        "checkpoints",
        "head_checkpoint_id",
        "updated_at",
        "summaries",
        "active_summary",
        "queued",
    } <= set(threads[0])
    assert cli_main(["thread", "m_0D8EzdJXJhk9-2", "--json"]) == 0
    out2 = capsys.readouterr().out
    thread = json.loads(out2)
    assert {"thread_id", "head_checkpoint_id", "messages", "checkpoints", "summaries", "queue"} <= set(thread)
    assert {"index", "type", "id", "chars", "estimated_tokens", "tiktoken_tokens"} <= set(
        thread["messages"][0]
    )
    assert {"checkpoint_id", "parent_checkpoint_id", "step", "source", "messages", "estimated_tokens"} <= set(
        thread["checkpoints"][0]
    )
    assert {"summary_id", "compact_up_to_index", "is_active", "is_split_turn"} <= set(thread["summaries"][0])
    assert len(thread["messages"]) == 24 and len(thread["summaries"]) == 7
    assert SAMPLE_KEY not in out + out2


def test_cli_text_output_has_no_api_key(sample_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["threads"]) == 0
    assert cli_main(["thread", "m_npRsndIka9dx-1"]) == 0
    captured = capsys.readouterr()
    assert "m_npRsndIka9dx-1" in captured.out
    assert SAMPLE_KEY not in captured.out + captured.err


def test_cli_unknown_thread_exits_non_zero_with_one_line(
    sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["thread", "nope-123"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["mycel-memory: error: unknown thread 'nope-123': no Mycel store has it"]


def test_a_list_that_runs_past_the_time_limit_says_timeout(sample_home: Path) -> None:
    """The limit is checked every million SQLite instructions (each check takes the GIL), so the list is
    given real work: 60,000 more threads, whose aggregate alone takes about two million."""
    with closing(sqlite3.connect(sample_home / "leon.db")) as conn, conn:
        conn.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000) "
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id) SELECT 'copy-' || i, '', 'c' FROM n"
        )
    result = MycelReader(point_locations(sample_home), query_timeout_s=1e-9).list_threads()
    assert any(p.kind is ProblemKind.TIMEOUT for p in result.problems)
    assert len(MycelReader(point_locations(sample_home)).list_threads().value) == 60_006


def test_a_row_cap_becomes_a_truncated_problem(sample_home: Path) -> None:
    result = MycelReader(point_locations(sample_home), row_cap=5).list_checkpoints("m_npRsndIka9dx-2")
    assert len(result.value) == 5
    assert any(p.kind is ProblemKind.TRUNCATED for p in result.problems)


def test_a_capped_list_is_not_served_to_an_uncapped_reader_of_the_same_process(sample_home: Path) -> None:
    # A page's reader (capped) and the index builder's (no cap) share one process and one version of the
    # files: the reader's cap is part of its store version, so the builder lists every thread whichever
    # of the two read first.
    every = len(MycelReader(point_locations(sample_home)).list_threads().value)
    capped = MycelReader(point_locations(sample_home), row_cap=1).list_threads()
    assert any(p.kind is ProblemKind.TRUNCATED for p in capped.problems)
    assert len(MycelReader(point_locations(sample_home)).list_threads().value) == every > len(capped.value)


# -- a demo home, written by the demo builders (LangGraph's AsyncSqliteSaver driving a real graph) --------


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from memory_core.demo import write_demo_home

    folder = tmp_path_factory.mktemp("demo") / "home"
    write_demo_home(folder, seed=3)
    return folder


def test_demo_home_series_fast_path_equals_naive_and_hides_the_key(demo_home: Path) -> None:
    from memory_core.demo import FAKE_API_KEY

    before = file_hashes(demo_home)
    reader = MycelReader(point_locations(demo_home))
    rows = reader.list_threads().value
    assert rows
    for row in rows:
        assert fast_points(reader, row.thread_id) == naive_points(reader, row.thread_id)
        for checkpoint in reader.list_checkpoints(row.thread_id).value:
            assert FAKE_API_KEY not in repr(checkpoint)
        assert FAKE_API_KEY not in repr(reader.get_state(row.thread_id))
    forks = [r for r in rows if _has_fork(reader, r.thread_id)]
    assert forks, "the demo home has a forked thread"
    assert file_hashes(demo_home) == before


def _has_fork(reader: MycelReader, thread_id: str) -> bool:
    parents = [
        c.parent_checkpoint_id for c in reader.list_checkpoints(thread_id).value if c.parent_checkpoint_id
    ]
    return len(parents) != len(set(parents))


def test_thread_rows_keep_the_configured_model_mycel_resolves_limits_from(sample_home):
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader

    rows = {row.thread_id: row for row in MycelReader(resolve_locations()).list_threads().value}
    assert rows["m_0D8EzdJXJhk9-2"].configured_model == "leon:snug"
    assert rows["m_0D8EzdJXJhk9-2"].model == "claude-sonnet-4-5-20250929"

"""Mycel dev's other stores on PostgreSQL (reference mycel-dev §3): summaries, queue, run events, file
operations and threads in schema `agent`, written by the dev-layout demo writer (real AsyncPostgresSaver.aput
plus dev_tables.py's side tables), read back through MycelReader; the SQLite fallback on the dev sample; the
breaker at the head; the time join; and no write, with a SELECT-only role, over the side tables too."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memory_core.cli import main
from memory_core.demo.dev_layout import WrittenDevThread
from memory_core.lineage import file_operations_by_time, join_by_time, run_events_by_time
from memory_core.records import BreakerState
from tests.postgres.test_pg_reader import DATA, TRUTH, reader_for
from tests.support.postgres import write_counts

Demo = tuple[str, list[WrittenDevThread]]


def _by_id(written: list[WrittenDevThread]) -> dict[str, WrittenDevThread]:
    return {w.thread_id: w for w in written}


def test_demo_list_reads_checkpoints_and_side_facts(pg_dev_demo: Demo, tmp_path: Path) -> None:
    url, written = pg_dev_demo
    listed = reader_for(url, tmp_path).list_threads()
    assert listed.problems == ()
    rows = {r.thread_id: r for r in listed.value}
    assert set(rows) == set(_by_id(written))
    for w in written:
        row = rows[w.thread_id]
        assert row.layout == "dev"
        assert row.checkpoints == len(w.checkpoint_ids) == 2 * len(w.run_ids) - 1
        assert row.head_checkpoint_id == w.checkpoint_ids[-1]
        assert row.messages == w.head_messages
        assert row.name == w.agent_name  # identity.users.display_name of agent.threads.agent_user_id
        assert row.configured_model == w.model  # agent.threads.model
        assert row.summaries == len(w.summary_ids)
        assert row.active_summary is bool(w.summary_ids)
        assert row.queued == w.queued
        assert (row.breaker_failures, row.breaker_open) == w.breaker


def test_demo_summaries_queue_events_and_file_ops_read_back(pg_dev_demo: Demo, tmp_path: Path) -> None:
    url, written = pg_dev_demo
    reader = reader_for(url, tmp_path)
    thread = next(w for w in written if w.summary_ids)

    summaries = reader.list_summaries(thread.thread_id)
    assert summaries.problems == ()
    assert [s.summary_id for s in summaries.value] == thread.summary_ids
    assert [(s.compact_up_to_index, s.compacted_at, s.is_active) for s in summaries.value] == [
        (2, 6, False),
        (4, 9, True),
    ]
    # Dev writes naive local time: it stays naive, and file_status says so.
    assert all(s.created_at is not None and s.created_at.tzinfo is None for s in summaries.value)

    queue = reader.list_queue(thread.thread_id)
    assert queue.problems == ()
    assert [(q.content, q.sender_id, q.sender_name) for q in queue.value] == [
        ("Also list their calls.", "u_devDemoOwner", "Owner")
    ]

    events = reader.list_run_events(thread.thread_id)
    assert events.problems == ()
    assert len(events.value) == thread.event_seqs
    assert {e.run_id for e in events.value} == set(thread.run_ids)
    assert events.value[0].event_type == "run_start"
    assert events.value[0].data == {
        "run_id": thread.run_ids[0],
        "thread_id": thread.thread_id,
    }  # JSON text parsed
    assert all(e.created_at is not None and e.created_at.tzinfo is not None for e in events.value)

    ops = reader.list_file_operations(thread.thread_id)
    assert ops.problems == ()
    assert [o.id for o in ops.value] == thread.file_operation_ids
    (op,) = ops.value
    assert op.run_id == thread.run_ids[1]  # dev's checkpoint_id column holds the web run id
    assert op.file_path.endswith("notes.md") and op.after_content == "# toad notes\n"
    assert op.timestamp is not None and op.timestamp.tzinfo is not None

    status = {s.role: s for s in reader.file_status()}
    assert "table agent.summaries" in status["summary (postgresql)"].notes
    assert any("naive local time" in n for n in status["summary (postgresql)"].notes)


def test_demo_time_join_puts_each_run_at_the_checkpoint_that_closed_it(
    pg_dev_demo: Demo, tmp_path: Path
) -> None:
    url, written = pg_dev_demo
    reader = reader_for(url, tmp_path)
    for w in written:
        checkpoints = reader.list_checkpoints(w.thread_id).value
        joined = run_events_by_time(checkpoints, reader.list_run_events(w.thread_id).value)
        assert joined and all(j.checkpoint_id == w.run_end_checkpoint[j.item.run_id] for j in joined)
        ops = file_operations_by_time(checkpoints, reader.list_file_operations(w.thread_id).value)
        assert all(j.checkpoint_id == w.run_end_checkpoint[j.item.run_id] for j in ops)
    assert any(w.file_operation_ids for w in written)


def test_join_by_time_takes_the_first_checkpoint_at_or_after() -> None:
    t0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)
    checkpoints = [("b", t0 + timedelta(seconds=10)), ("a", t0), ("none", None)]
    items = [t0 - timedelta(seconds=1), t0, t0 + timedelta(seconds=5), t0 + timedelta(seconds=11), None]
    got = [j.checkpoint_id for j in join_by_time(checkpoints, items, lambda t: t)]
    assert got == ["a", "a", "b", None, None]
    # A naive time is taken as UTC.
    naive = [(t0 + timedelta(seconds=3)).replace(tzinfo=None)]
    assert [j.checkpoint_id for j in join_by_time(checkpoints, naive, lambda t: t)] == ["b"]


def test_demo_breaker_and_recovered_head(pg_dev_demo: Demo, tmp_path: Path) -> None:
    url, written = pg_dev_demo
    reader = reader_for(url, tmp_path)
    by_id = _by_id(written)
    assert reader.breaker("m_devDemo0001-2").value == BreakerState(3, True)
    assert reader.breaker("m_devDemo0001-1").value == BreakerState(0, False)
    recovered = reader.get_state("m_devDemo0002-1").value
    assert recovered is not None
    assert recovered.messages[0].type.value == "system" == by_id["m_devDemo0002-1"].head_first_type
    assert str(recovered.messages[0].content).startswith("[Conversation Summary]\n")
    notices = reader.get_state("m_devDemo0001-2").value
    assert notices is not None
    last = notices.messages[-1]
    assert last.type.value == "human" and last.metadata.get("notification_type") == "compact_breaker"


def test_dev_sample_breaker_on_list_reader_and_cli(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reader = reader_for(pg_dev_sample, tmp_path)
    rows = {r.thread_id: r for r in reader.list_threads().value}
    for truth in TRUTH["threads"]:
        expected = (truth["breaker"]["failure_count"], truth["breaker"]["breaker_open"])
        assert (rows[truth["thread_id"]].breaker_failures, rows[truth["thread_id"]].breaker_open) == expected
        assert reader.breaker(truth["thread_id"]).value == BreakerState(*expected)
    assert rows["m_sK5yDq1FvT7a-2"].breaker_open is True

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    assert main(["threads", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {r["layout"] for r in listed} == {"dev"}
    assert main(["thread", "m_sK5yDq1FvT7a-2", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert one["layout"] == "dev"
    assert one["breaker"] == {"failure_count": 3, "open": True}
    assert main(["thread", "m_sK5yDq1FvT7a-1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["breaker"] == {"failure_count": 0, "open": False}


def test_main_layout_has_no_breaker(pg_main_db: tuple[str, list[Any]], tmp_path: Path) -> None:
    url, built = pg_main_db
    reader = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase")
    row = next(r for r in reader.list_threads().value if r.thread_id == built[0].thread_id)
    assert row.layout == "main" and row.breaker_failures is None and row.breaker_open is False
    assert reader.breaker(built[0].thread_id).value is None


def test_dev_sample_summaries_come_from_leon_db_only_when_named(pg_dev_sample: str, tmp_path: Path) -> None:
    # The sample has no agent.summaries: dev wrote them to LEON_DB_PATH's SQLite file (its README).
    leon = tmp_path / "data" / "leon.db"
    leon.parent.mkdir()
    shutil.copy(DATA / "leon.db", leon)
    thread = "m_rE2uGx6NbP9w-1"
    named = reader_for(pg_dev_sample, tmp_path, LEON_DB_PATH=str(leon))
    got = named.list_summaries(thread)
    assert [(s.compact_up_to_index, s.compacted_at) for s in got.value] == [(4, 11), (8, 16), (12, 19)]
    assert {r.thread_id: r.summaries for r in named.list_threads().value}[thread] == 3
    # The same file at the default ~/.leon path is not one of dev's stores (dev has no defaults).
    home_leon = tmp_path / "home" / ".leon" / "leon.db"
    home_leon.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(DATA / "leon.db", home_leon)
    unnamed = reader_for(pg_dev_sample, tmp_path)
    assert unnamed.list_summaries(thread).value == []
    assert {r.thread_id: r.summaries for r in unnamed.list_threads().value}[thread] == 0
    status = {s.role: s for s in unnamed.file_status()}
    assert any("LEON_DB_PATH is not set" in n for n in status["summary (postgresql)"].notes)
    assert any("no agent.run_events table" in n for n in status["events (postgresql)"].notes)


def test_missing_column_and_refused_select_are_problems_and_the_rest_reads(
    pg_dev_demo: Demo, tmp_path: Path
) -> None:
    url, written = pg_dev_demo
    thread = next(w for w in written if w.summary_ids)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE agent.message_queue RENAME COLUMN sender_user_id TO sender_id")
    reader = reader_for(url, tmp_path)
    queue = reader.list_queue(thread.thread_id)
    assert queue.value == []
    assert [p.kind.value for p in queue.problems] == ["unknown_schema"]
    assert "agent.message_queue lacks sender_user_id" in queue.problems[0].message
    listed = reader.list_threads()
    assert len(listed.value) == len(written)
    assert any("lacks sender_user_id" in p.message for p in listed.problems)
    assert reader.list_summaries(thread.thread_id).value  # the other side tables still read

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS mycel_dev_side_ro")
        conn.execute("CREATE ROLE mycel_dev_side_ro LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA agent, identity TO mycel_dev_side_ro")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA agent, identity TO mycel_dev_side_ro")
        conn.execute("REVOKE SELECT ON agent.run_events FROM mycel_dev_side_ro")
    limited = reader_for(url.replace("postgresql://mycel@", "postgresql://mycel_dev_side_ro@", 1), tmp_path)
    events = limited.list_run_events(thread.thread_id)
    assert events.value == []
    assert [p.kind.value for p in events.problems] == ["denied"]
    assert "may not SELECT from agent.run_events" in events.problems[0].message
    assert len(limited.list_file_operations(thread.thread_id).value) == 1


def test_side_reads_write_nothing_and_a_select_only_role_reads_them(
    pg_dev_demo: Demo, tmp_path: Path
) -> None:
    url, written = pg_dev_demo
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS mycel_dev_stores_ro")
        conn.execute("CREATE ROLE mycel_dev_stores_ro LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA agent, identity TO mycel_dev_stores_ro")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA agent, identity TO mycel_dev_stores_ro")
    before = write_counts(url)
    assert {name for _schema, name, *_ in before} >= {
        "summaries",
        "message_queue",
        "run_events",
        "file_operations",
        "threads",
        "users",
    }
    reader = reader_for(url.replace("postgresql://mycel@", "postgresql://mycel_dev_stores_ro@", 1), tmp_path)
    listed = reader.list_threads()
    assert listed.problems == ()
    for w in written:
        for result in (
            reader.list_summaries(w.thread_id),
            reader.list_queue(w.thread_id),
            reader.list_run_events(w.thread_id),
            reader.list_file_operations(w.thread_id),
            reader.breaker(w.thread_id),
        ):
            assert result.problems == ()
        assert len(reader.list_run_events(w.thread_id).value) == w.event_seqs
    reader.file_status()
    assert write_counts(url) == before


def test_dev_sandbox_db_counts_only_where_its_variable_names_it(pg_dev_sample: str, tmp_path: Path) -> None:
    from memory_core.demo.tables import SandboxRecord, write_sandbox

    thread = TRUTH["threads"][0]["thread_id"]
    record = SandboxRecord(thread, "vol-1", "/volumes/v", "lease-1", "inst-1", "term-1", "/workspace", "sess-1",
                           "rt-1", "evt-1", "2026-01-01T00:00:00", "2026-01-01T00:00:00", "2026-01-01T00:00:00Z")  # fmt: skip
    named_db = tmp_path / "data" / "sandbox.db"
    write_sandbox(named_db, [record])
    write_sandbox(tmp_path / "home" / ".leon" / "sandbox.db", [record])  # main's default path
    named = reader_for(pg_dev_sample, tmp_path, LEON_SANDBOX_DB_PATH=str(named_db)).get_sandbox(thread)
    assert named.value is not None and [t.terminal_id for t in named.value.terminals] == ["term-1"]
    assert reader_for(pg_dev_sample, tmp_path).get_sandbox(thread).value is None


def test_a_thread_only_dev_tables_know_is_listed_as_a_dev_thread(pg_dev_demo: Demo, tmp_path: Path) -> None:
    url, written = pg_dev_demo
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO agent.threads (id, agent_user_id, model, is_main, branch_index) "
            "VALUES ('m_devDemo0001-9', 'm_devDemo0001', 'leon:tiny', 0, 8)"
        )
        conn.execute("INSERT INTO agent.message_queue (thread_id, content) VALUES ('m_devDemo0001-9', 'hi')")
    rows = {r.thread_id: r for r in reader_for(url, tmp_path).list_threads().value}
    assert len(rows) == len(written) + 1
    fresh = rows["m_devDemo0001-9"]
    assert (fresh.layout, fresh.checkpoints, fresh.queued, fresh.name) == ("dev", 0, 1, "Toad")


def test_heads_decoded_a_chunk_at_a_time_list_the_same_rows(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first list of a big fleet decodes its heads HEAD_CHUNK at a time (it held every head's blobs at once:
    # ~3 GB at 100,000 threads); chunks of one thread give the very rows one read of every head does.
    from memory_core import memo
    from memory_core.stores.postgres import backend

    whole = reader_for(pg_dev_sample, tmp_path / "whole").list_threads()
    memo.reset()  # nothing derived: every head is decoded again
    monkeypatch.setattr(backend, "HEAD_CHUNK", 1)
    reads: list[int] = []
    payloads = backend.pg.payloads

    def counted(read: Any, layout: Any, pairs: Any) -> Any:
        reads.append(len(pairs))
        return payloads(read, layout, pairs)

    monkeypatch.setattr(backend.pg, "payloads", counted)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "no-facts-yet"))
    chunked = reader_for(pg_dev_sample, tmp_path / "chunked").list_threads()
    assert chunked.problems == whole.problems == ()
    assert len(whole.value) > 1 and chunked.value == whole.value
    assert reads and set(reads) == {1}, reads  # every head decoded again, one a read
    assert any(r.breaker_open is not None for r in whole.value)  # dev's breaker is read per chunk too

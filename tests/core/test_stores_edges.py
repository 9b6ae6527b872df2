"""MycelReader over hand-built edge cases, written with LangGraph's real SqliteSaver and Mycel's DDL."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import ormsgpack
import pytest

from memory_core.cli import main as cli_main
from memory_core.records import ProblemKind
from memory_core.stores.checkpoints import list_checkpoint_meta, read_payload
from memory_core.stores.reader import MycelReader
from memory_core.stores.series import naive_series
from memory_core.stores.sqlite import connect as sqlite_module
from memory_core.stores.sqlite.connect import StoreError, opened
from memory_core.tokens import default_counter
from tests.core.store_builders import (
    PLANTED_SECRETS,
    QUEUE_BOTH_SENDERS_DDL,
    add_summary,
    build_thread,
    file_hashes,
    point_locations,
)
from tests.support.folders import unwritable_folder
from tests.support.mycel_env import point_env_at


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    return folder


def reader_for(home: Path, **options: float) -> MycelReader:
    return MycelReader(point_locations(home), **options)  # type: ignore[arg-type]


def series_pairs(reader: MycelReader, thread_id: str) -> tuple[dict[str, object], dict[str, object]]:
    fast = {
        c.checkpoint_id: (c.messages, c.estimated_tokens, c.tiktoken_tokens, c.input_tokens, c.readable)
        for c in reader.list_checkpoints(thread_id).value
    }
    with opened(reader.locations.main, store="main", timeout_s=10, row_cap=10**6) as db:
        metas = list_checkpoint_meta(db, thread_id)
        naive = naive_series(metas, lambda c: read_payload(db, thread_id, c), count=default_counter().count)
    slow = {
        k: (p.messages, p.estimated_tokens, p.tiktoken_tokens, p.input_tokens, p.readable)
        for k, p in naive.points.items()
    }
    return fast, slow


def last_series_stats(reader: MycelReader, thread_id: str) -> tuple[int, int, int]:
    series = reader.checkpoint_series(thread_id)
    assert series is not None
    return series.decoded, series.rebuilt, series.fallbacks


# -- the series fast path ------------------------------------------------------------------------------


def test_old_writes_layout_series_matches_naive_decoding_only_root_and_head(home: Path) -> None:
    build_thread(home / "leon.db", "t-old", turns=4, parallel=3)
    reader = reader_for(home)
    fast, slow = series_pairs(reader, "t-old")
    assert fast == slow and len(fast) > 10
    decoded, rebuilt, fallbacks = last_series_stats(reader, "t-old")
    assert (decoded, fallbacks) == (2, 0) and rebuilt == len(fast) - 1


def test_new_writes_layout_with_task_path_matches_naive(home: Path) -> None:
    build_thread(home / "leon.db", "t-new", turns=3, parallel=2, task_path_layout=True)
    reader = reader_for(home)
    assert "task_path" in {s.role: s for s in reader.file_status()}["main"].notes[0]
    fast, slow = series_pairs(reader, "t-new")
    assert fast == slow
    assert last_series_stats(reader, "t-new")[2] == 0


def test_fork_branches_have_their_own_parents_and_series(home: Path) -> None:
    build_thread(home / "leon.db", "t-fork", turns=3, fork_after_turn=1)
    reader = reader_for(home)
    rows = reader.list_checkpoints("t-fork").value
    parents = [r.parent_checkpoint_id for r in rows if r.parent_checkpoint_id]
    assert len(parents) != len(set(parents)), "one checkpoint has two children"
    fast, slow = series_pairs(reader, "t-fork")
    assert fast == slow
    # The head is the newest checkpoint, on the fork branch.
    assert rows[0].checkpoint_id == reader.head_checkpoint_id("t-fork")
    assert rows[0].messages is not None and rows[0].messages < max(r.messages or 0 for r in rows)


def test_removed_message_is_applied_in_the_series(home: Path) -> None:
    build_thread(home / "leon.db", "t-rm", turns=2, remove_first_tool_result=True)
    reader = reader_for(home)
    fast, slow = series_pairs(reader, "t-rm")
    assert fast == slow
    counts = [r.messages for r in reversed(reader.list_checkpoints("t-rm").value)]
    assert any(b is not None and a is not None and b < a for a, b in zip(counts, counts[1:], strict=False))


# -- damaged and unusual payloads ---------------------------------------------------------------------


def _checkpoint_ids(db: Path, thread_id: str) -> list[str]:
    with closing(sqlite3.connect(db)) as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
                (thread_id,),
            )
        ]


def _set_blob(db: Path, checkpoint_id: str, type_: str, blob: bytes) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "UPDATE checkpoints SET type = ?, checkpoint = ? WHERE checkpoint_id = ?",
            (type_, blob, checkpoint_id),
        )
        conn.commit()


def test_corrupted_head_is_marked_unreadable_and_the_rest_still_shows(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=2)
    ids = _checkpoint_ids(home / "leon.db", "t")
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        blob = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?", (ids[-1],)
        ).fetchone()[0]
    _set_blob(home / "leon.db", ids[-1], "msgpack", blob[: len(blob) // 2])
    reader = reader_for(home)
    result = reader.list_checkpoints("t")
    head = result.value[0]
    assert head.checkpoint_id == ids[-1] and not head.readable and head.messages is None and head.problem
    assert all(r.readable and r.messages is not None for r in result.value[1:])
    assert any(p.kind is ProblemKind.UNREADABLE_CHECKPOINT for p in result.problems)
    state = reader.get_state("t").value
    assert state is not None and not state.checkpoint.readable and state.messages == ()
    assert reader.get_thread("t").value is not None


def test_corrupted_middle_checkpoint_fails_alone_in_get_state(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=2)
    ids = _checkpoint_ids(home / "leon.db", "t")
    _set_blob(home / "leon.db", ids[3], "msgpack", b"\xc1\xc1 not msgpack")
    reader = reader_for(home)
    assert not reader.get_state("t", ids[3]).value.checkpoint.readable  # type: ignore[union-attr]
    assert reader.get_state("t", ids[4]).value.checkpoint.readable  # type: ignore[union-attr]
    rows = reader.list_checkpoints("t").value
    assert len(rows) == len(ids) and rows[0].readable


def test_unknown_ext_type_is_tolerated_as_plain_data(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    ids = _checkpoint_ids(home / "leon.db", "t")
    payload = {
        "v": 4,
        "id": ids[-1],
        "ts": "2026-11-30T10:00:00+00:00",
        "channel_values": {
            "messages": [{"type": "human", "content": "hello", "id": "h1"}],
            "odd": ormsgpack.Ext(42, b"\x93\x01\x02\x03"),
            "opaque": ormsgpack.Ext(77, b"\xc1"),
        },
    }
    _set_blob(home / "leon.db", ids[-1], "msgpack", ormsgpack.packb(payload))
    state = reader_for(home).get_state("t").value
    assert state is not None and state.checkpoint.readable
    assert [m.text for m in state.messages] == ["hello"]
    assert state.channels["odd"] == {"__ext__": 42, "payload": [1, 2, 3]}
    assert state.channels["opaque"] == {"__ext__": 77, "bytes": 1}


def test_pickle_payload_is_refused_not_unpickled(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    ids = _checkpoint_ids(home / "leon.db", "t")
    marker = home / "pwned"
    payload = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."
    _set_blob(home / "leon.db", ids[-1], "pickle", payload)
    state = reader_for(home).get_state("t").value
    assert state is not None and not state.checkpoint.readable
    assert "pickle payloads are refused: unpickling untrusted data can run arbitrary code" in (
        state.checkpoint.problem or ""
    )
    assert not marker.exists()


def test_not_sqlite_truncated_and_empty_files_are_problems(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    (home / "queue.db").write_bytes(b"this is not a database at all" * 10)
    data = (home / "leon.db").read_bytes()
    (home / "summary.db").write_bytes(data[:200])
    (home / "events.db").write_bytes(b"")
    reader = reader_for(home)
    threads = reader.list_threads()
    assert [r.thread_id for r in threads.value] == ["t"]
    kinds = {(p.store, p.kind) for p in threads.problems}
    assert ("queue", ProblemKind.CORRUPT) in kinds
    assert ("summary", ProblemKind.CORRUPT) in kinds
    assert reader.list_run_events("t").problems[0].kind is ProblemKind.CORRUPT


def test_postgres_style_layout_is_a_clear_problem(home: Path) -> None:
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.executescript(
            "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
            "parent_checkpoint_id TEXT, checkpoint TEXT, metadata TEXT);"
            "CREATE TABLE checkpoint_blobs (thread_id TEXT, checkpoint_ns TEXT, channel TEXT, version TEXT, "
            "type TEXT, blob BLOB);"
            "INSERT INTO checkpoints VALUES ('pg', '', 'c1', NULL, '{}', '{}');"
        )
    reader = reader_for(home)
    result = reader.list_checkpoints("pg")
    assert result.value == []
    assert any(p.kind is ProblemKind.UNKNOWN_SCHEMA and "Postgres" in p.message for p in result.problems)
    assert {s.role: s for s in reader.file_status()}["main"].problem is not None


# -- the other stores ---------------------------------------------------------------------------------


def test_missing_queue_db_is_reported_not_raised(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    reader = reader_for(home)
    result = reader.list_queue("t")
    assert result.value == []
    assert [(p.store, p.kind) for p in result.problems] == [("queue", ProblemKind.MISSING_FILE)]
    assert reader.list_threads().value[0].queued == 0


def test_summaries_are_found_in_either_file(home: Path) -> None:
    build_thread(home / "leon.db", "web", turns=1)
    build_thread(home / "leon.db", "sub", turns=1)
    add_summary(home / "summary.db", "web", "web_1", up_to=2, active=False, at="2026-11-30T09:00:00.000001")
    add_summary(home / "summary.db", "web", "web_2", up_to=4, active=True, at="2026-11-30T09:05:00.000001")
    add_summary(home / "leon.db", "sub", "sub_1", up_to=3, active=True, at="2026-11-30T09:01:00.000001")
    reader = reader_for(home)
    web = reader.list_summaries("web")
    sub = reader.list_summaries("sub")
    assert [(s.summary_id, s.store, s.is_active) for s in web.value] == [
        ("web_1", "summary", False),
        ("web_2", "summary", True),
    ]
    assert [(s.summary_id, s.store) for s in sub.value] == [("sub_1", "main")]
    assert web.problems == () and sub.problems == ()
    rows = {r.thread_id: r for r in reader.list_threads().value}
    assert (rows["web"].summaries, rows["web"].active_summary) == (2, True)
    assert (rows["sub"].summaries, rows["sub"].active_summary) == (1, True)


def test_queue_with_both_sender_columns_and_queue_only_threads(home: Path) -> None:
    with closing(sqlite3.connect(home / "queue.db")) as conn:
        conn.executescript(QUEUE_BOTH_SENDERS_DDL)
        conn.execute(
            "INSERT INTO message_queue (thread_id, content, sender_entity_id) VALUES ('q', 'old row', 'ent-1')"
        )
        conn.execute(
            "INSERT INTO message_queue (thread_id, content, sender_id, source) VALUES ('q', 'new', 'm-2', 'owner')"
        )
        conn.commit()
    reader = reader_for(home)
    items = reader.list_queue("q").value
    assert [(i.content, i.sender_id) for i in items] == [("old row", "ent-1"), ("new", "m-2")]
    rows = reader.list_threads().value
    assert [(r.thread_id, r.messages, r.checkpoints, r.queued) for r in rows] == [("q", 0, 0, 2)]
    assert any("sender_entity_id" in n for n in {s.role: s for s in reader.file_status()}["queue"].notes)


# -- spill files --------------------------------------------------------------------------------------


def _threads_table(db: Path, thread_id: str, cwd: str) -> None:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS threads (id TEXT PRIMARY KEY, member_id TEXT NOT NULL, sandbox_type TEXT "
            "DEFAULT 'local', model TEXT, cwd TEXT, observation_provider TEXT, agent TEXT, is_main INTEGER NOT NULL "
            "DEFAULT 0, branch_index INTEGER NOT NULL, created_at REAL NOT NULL)"
        )
        conn.execute(
            "INSERT INTO threads VALUES (?, 'm_x', 'local', NULL, ?, NULL, NULL, 1, 0, 1.0)", (thread_id, cwd)
        )
        conn.commit()


def test_spill_file_is_read_from_the_workspace_tool_results_folder(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    workspace = home / "ws"
    (workspace / ".leon" / "tool-results").mkdir(parents=True)
    (workspace / ".leon" / "tool-results" / "call_1_0.txt").write_text("full output")
    _threads_table(home / "leon.db", "t", str(workspace))
    result = reader_for(home).get_spill_file("t", "call_1_0")
    assert result.value is not None and result.value.text == "full output"


@pytest.mark.parametrize("tool_call_id", ["a/b", ".hidden", "call 1?#%", "工具调用-1", "toolu_" + "x" * 240])
def test_any_id_mycel_could_name_a_file_after_is_read_inside_tool_results(
    home: Path, tool_call_id: str
) -> None:
    # Mycel writes os.path.join(workspace, ".leon/tool-results", f"{id}.txt"): "/" makes a subfolder there.
    build_thread(home / "leon.db", "t", turns=1)
    spill = home / "ws" / ".leon" / "tool-results" / f"{tool_call_id}.txt"
    spill.parent.mkdir(parents=True)
    spill.write_text(f"full output of {tool_call_id}")
    _threads_table(home / "leon.db", "t", str(home / "ws"))
    result = reader_for(home).get_spill_file("t", tool_call_id)
    assert result.value is not None and result.value.text == f"full output of {tool_call_id}"


@pytest.mark.parametrize(
    "tool_call_id",
    ["x/y/../../../secret", "../../secret", "/etc/passwd", "..", "a//b", "x\x00y", "", "é" * 200],
)
def test_spill_ids_that_try_to_escape_are_refused(home: Path, tool_call_id: str) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    result = reader_for(home).get_spill_file("t", tool_call_id)
    assert result.value is None
    assert result.problems[0].kind is ProblemKind.REFUSED


def test_spill_folder_symlinked_elsewhere_is_not_followed(home: Path, tmp_path: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "call_1_0.txt").write_text("secret elsewhere")
    workspace = home / "ws"
    (workspace / ".leon").mkdir(parents=True)
    os.symlink(outside, workspace / ".leon" / "tool-results")
    _threads_table(home / "leon.db", "t", str(workspace))
    result = reader_for(home).get_spill_file("t", "call_1_0")
    assert result.value is None


def test_spill_file_symlinked_to_another_file_is_not_followed(home: Path, tmp_path: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    secret = tmp_path / "secret.txt"
    secret.write_text("not a spill")
    folder = home / "ws" / ".leon" / "tool-results"
    folder.mkdir(parents=True)
    os.symlink(secret, folder / "call_1_0.txt")
    _threads_table(home / "leon.db", "t", str(home / "ws"))
    assert reader_for(home).get_spill_file("t", "call_1_0").value is None


# -- locks, concurrency, immutability ------------------------------------------------------------------


def test_a_long_query_is_stopped_at_the_time_limit(home: Path) -> None:
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("CREATE TABLE t (x)")
    with opened(home / "leon.db", store="main", timeout_s=0.05, row_cap=10) as db:
        started = time.monotonic()
        with pytest.raises(StoreError) as caught:
            # A billion steps would take minutes unchecked.
            db.rows(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1e9) SELECT COUNT(*) FROM n"
            )
        assert caught.value.problem.kind is ProblemKind.TIMEOUT
        assert time.monotonic() - started < 2
        assert db.rows("SELECT COUNT(*) FROM t") == [(0,)], "the connection still answers afterwards"


def test_locked_database_becomes_a_problem_within_the_time_limit(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # in WAL mode an exclusive writer does not block readers
    holder = sqlite3.connect(home / "leon.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        reader = reader_for(home, query_timeout_s=0.2)
        result = reader.list_threads()
        assert result.value == ()
        assert any(p.kind is ProblemKind.LOCKED for p in result.problems)
        assert reader.list_checkpoints("t").problems[0].kind is ProblemKind.LOCKED
        assert reader.get_state("t").value is None
        assert reader.head_checkpoint_id("t") is None
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert reader_for(home).list_threads().value[0].thread_id == "t"


def test_reads_stay_consistent_while_a_writer_commits(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        assert conn.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            turn = 0
            while not stop.is_set() and turn < 40:
                turn += 1
                build_thread(home / "leon.db", f"w{turn}", turns=1)
                build_thread(home / "leon.db", "t", turns=1)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    reader = reader_for(home, query_timeout_s=5)
    try:
        for _ in range(25):
            rows = reader.list_checkpoints("t")
            assert not [p for p in rows.problems if p.kind is not ProblemKind.TRUNCATED]
            counts = [r.messages for r in reversed(rows.value)]
            assert all(c is not None for c in counts)
            # One snapshot: the head row and the parents it lists are all present.
            ids = {r.checkpoint_id for r in rows.value}
            assert all(r.parent_checkpoint_id in ids for r in rows.value if r.parent_checkpoint_id)
            assert not [p for p in reader.list_threads().problems if p.kind is ProblemKind.LOCKED]
    finally:
        stop.set()
        thread.join()
    assert errors == []


def test_readonly_folder_without_wal_files_uses_immutable_and_reads(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in ("leon.db-wal", "leon.db-shm"):
        (home / side).unlink(missing_ok=True)
    before = file_hashes(home)
    with unwritable_folder(home):
        result = reader_for(home).list_checkpoints("t")
        assert result.problems == () and result.value
    assert file_hashes(home) == before
    assert not (home / "leon.db-shm").exists()


def test_wal_file_without_shm_in_a_readonly_folder(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for side in ("leon.db-wal", "leon.db-shm"):
        (home / side).unlink(missing_ok=True)
    monkeypatch.setattr(sqlite_module.os, "access", lambda path, mode: False)
    header = sqlite_module.file_header(home / "leon.db")
    assert "immutable=1" in sqlite_module._uri_for(home / "leon.db", header)
    assert reader_for(home).list_checkpoints("t").value
    (home / "leon.db-wal").write_bytes(b"")
    with pytest.raises(sqlite_module.StoreError):
        sqlite_module._uri_for(home / "leon.db", header)
    result = reader_for(home).list_checkpoints("t")
    assert result.value == [] and result.problems[0].kind is ProblemKind.LOCKED


# -- secrets ------------------------------------------------------------------------------------------


@pytest.fixture
def planted(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    build_thread(home / "leon.db", "sec", turns=2, configurable=PLANTED_SECRETS)
    point_env_at(monkeypatch, home)
    yield home


def test_no_planted_secret_reaches_any_output(planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = file_hashes(planted)
    reader = reader_for(planted)
    outputs = [
        repr(reader.list_threads()),
        repr(reader.get_thread("sec")),
        repr(reader.list_checkpoints("sec")),
        repr(reader.get_state("sec")),
        repr([reader.get_state("sec", c.checkpoint_id) for c in reader.list_checkpoints("sec").value]),
    ]
    for args in (["threads", "--json"], ["threads"], ["thread", "sec", "--json"], ["thread", "sec"]):
        assert cli_main(args) == 0
        captured = capsys.readouterr()
        outputs.append(captured.out + captured.err)
    text = "\n".join(outputs)
    assert "[redacted]" in text
    for value in PLANTED_SECRETS.values():
        assert value not in text
        assert value not in json.dumps(text)
    assert file_hashes(planted) == before


def test_threads_without_checkpoints_are_listed_with_zero_counts(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _threads_table(home / "leon.db", "fresh", "/nowhere")
    add_summary(home / "summary.db", "summarised-only", "s_1", up_to=2, active=True, at="2026-11-30T09:00:00")
    reader = reader_for(home)
    rows = {r.thread_id: r for r in reader.list_threads().value}
    assert (rows["fresh"].messages, rows["fresh"].checkpoints, rows["fresh"].head_checkpoint_id) == (
        0,
        0,
        None,
    )
    assert (rows["summarised-only"].summaries, rows["summarised-only"].checkpoints) == (1, 0)
    found = reader.get_thread("fresh").value
    assert found is not None and found.updated_at is not None
    assert reader.list_checkpoints("fresh").value == []
    assert reader.get_state("fresh").value is None
    point_env_at(monkeypatch, home)
    assert cli_main(["thread", "fresh", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["head_checkpoint_id"] is None and data["messages"] == [] and data["checkpoints"] == []


def test_a_snapshot_does_not_see_a_commit_made_during_the_read(home: Path) -> None:
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    with opened(home / "leon.db", store="main", timeout_s=5, row_cap=1000) as db:
        with db.snapshot():
            before = list_checkpoint_meta(db, "t")
            build_thread(home / "leon.db", "t", turns=1)  # Mycel commits while we read
            during = list_checkpoint_meta(db, "t")
        after = list_checkpoint_meta(db, "t")
    assert [m.checkpoint_id for m in during] == [m.checkpoint_id for m in before]
    assert len(after) > len(before)


_MYCEL_WRITES_ONCE = (
    "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('INSERT INTO t VALUES (1)'); "
    "c.commit(); c.close()"
)


def test_our_open_reads_keep_their_lock_so_mycel_cannot_drop_the_wal_under_them(home: Path) -> None:
    # Regression: file_header() opened and closed the database file itself. Closing ANY descriptor of a
    # file drops every POSIX lock this process holds on it (sqlite.org/howtocorrupt.html §2.2), so when
    # Mycel's last connection closed it checkpointed and deleted -wal/-shm under a read still open on
    # another thread: "disk I/O error" for the dashboard and for Mycel's own next write.
    import subprocess
    import sys

    db = home / "leon.db"
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE t (x)")
    mycel = [sys.executable, "-c", _MYCEL_WRITES_ONCE, str(db)]
    subprocess.run(mycel, check=True)
    with opened(db, store="main", timeout_s=5, row_cap=10) as ours, ours.snapshot():
        assert ours.one("SELECT count(*) FROM t") == (1,)
        # Other requests of the same process look at the file meanwhile.
        reader = reader_for(home)
        assert [s.journal_mode for s in reader.file_status() if s.role == "main"] == ["wal"]
        assert reader.list_checkpoints("t").value == []
        assert reader.list_threads().value == ()
        subprocess.run(mycel, check=True)  # Mycel's only connection closes
        assert Path(f"{db}-wal").exists(), "Mycel removed the WAL under an open read"
        assert ours.one("SELECT count(*) FROM t") == (1,)
    with opened(db, store="main", timeout_s=5, row_cap=10) as fresh:
        assert fresh.one("SELECT count(*) FROM t") == (2,)


def test_text_that_is_not_utf8_is_shown_replaced_and_said_and_the_rest_still_reads(home: Path) -> None:
    from memory_core.demo.tables import MEMBERS_DDL, THREADS_DDL

    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn, conn:
        conn.executescript(THREADS_DDL + MEMBERS_DDL)
        conn.execute(
            "INSERT INTO members (id, name, type, created_at) VALUES ('m', 'Toad', 'mycel_agent', 0)"
        )
        # Raw bytes in a TEXT column, as a tool that wrote a path in Latin-1 would leave them.
        conn.execute(
            "INSERT INTO threads (id, member_id, cwd, is_main, branch_index, created_at) "
            "VALUES ('t', 'm', CAST(x'2f686f6d652f636166e92f' AS TEXT), 1, 0, 1796033530)"
        )
    result = reader_for(home).list_threads()
    [row] = result.value
    assert row.cwd == "/home/caf\ufffd/" and row.name == "Toad" and row.messages > 0
    assert any("not UTF-8" in p.message and p.kind is ProblemKind.CORRUPT for p in result.problems)

"""The stores' byte facts on SQLite (stores/storage_facts.py, msgpack_spans.py) through MycelReader, on data
written by LangGraph's real SqliteSaver: the sample home, hand-built threads, a real sub-graph."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any, TypedDict

import ormsgpack
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, StateGraph

from memory_core import memo
from memory_core.records import ProblemKind
from memory_core.stores import table_measures
from memory_core.stores.msgpack_spans import SpanError, channel_value_spans
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite import storage_facts
from memory_core.stores.sqlite.connect import ReadOnlyDB, StoreError
from tests.core.store_builders import build_thread, file_hashes, point_locations


def reader_for(home: Path, **options: Any) -> MycelReader:
    return MycelReader(point_locations(home), **options)


def _stats(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Size, mtime and hash of every file but SQLite's -wal/-shm (a WAL reader maps the -shm index)."""
    hashes = file_hashes(folder)
    return {name: (*_size_and_time(folder / name), digest) for name, digest in hashes.items()}


def _size_and_time(path: Path) -> tuple[int, int]:
    return path.stat().st_size, path.stat().st_mtime_ns


def _independent_totals(db: Path) -> dict[str, int]:
    """Per thread, length() of every checkpoint's columns and every write's value, in any namespace."""
    totals: dict[str, int] = {}
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        for thread, size in conn.execute(
            "SELECT thread_id, SUM(COALESCE(length(checkpoint), 0) + COALESCE(length(metadata), 0)) "
            "FROM checkpoints GROUP BY thread_id"
        ):
            totals[thread] = totals.get(thread, 0) + size
        for thread, size in conn.execute(
            "SELECT thread_id, SUM(COALESCE(length(value), 0)) FROM writes GROUP BY thread_id"
        ):
            totals[thread] = totals.get(thread, 0) + size
    return totals


# -- bytes per thread and per checkpoint ------------------------------------------------------------------


def test_sample_home_bytes_equal_length_and_the_thread_list(sample_home: Path) -> None:
    before = _stats(sample_home)
    reader = reader_for(sample_home)
    fleet = reader.fleet_bytes()
    assert fleet.problems == ()
    by_id = {t.thread_id: t for t in fleet.value}
    assert by_id and all(t.store == "leon.db" and t.layout == "main" for t in fleet.value)
    assert {t: b.total for t, b in by_id.items()} == _independent_totals(sample_home / "leon.db")
    # One truth with the Threads list: every listed thread's bytes_on_disk is its ThreadBytes.total.
    listed = reader.list_threads().value
    assert listed
    for row in listed:
        assert row.bytes_on_disk == (by_id[row.thread_id].total if row.thread_id in by_id else 0)
    with closing(sqlite3.connect(f"file:{sample_home / 'leon.db'}?mode=ro", uri=True)) as conn:
        for thread in fleet.value:
            rows = conn.execute(
                "SELECT checkpoint_id, parent_checkpoint_id, length(checkpoint), length(metadata), "
                "json_extract(metadata, '$.source') FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
                (thread.thread_id,),
            ).fetchall()
            assert [
                (c.checkpoint_id, c.parent_id, c.checkpoint, c.metadata, c.source) for c in thread.checkpoints
            ] == rows
            for c in thread.checkpoints:
                (writes,) = conn.execute(
                    "SELECT COALESCE(SUM(length(value)), 0) FROM writes WHERE thread_id = ? "
                    "AND checkpoint_ns = '' AND checkpoint_id = ?",
                    (thread.thread_id, c.checkpoint_id),
                ).fetchone()
                assert c.writes == writes and c.blobs == 0 and c.blob_refs == frozenset()
            assert thread.checkpoints[0].source == "input"
    assert _stats(sample_home) == before, "reading wrote nothing"


def test_one_thread_agrees_with_the_fleet(sample_home: Path) -> None:
    reader = reader_for(sample_home)
    fleet = reader.fleet_bytes().value
    from memory_core import memo

    memo.reset()  # not taken from the fleet's memo: read for the one thread
    for thread in fleet:
        assert reader_for(sample_home).thread_bytes(thread.thread_id).value == thread
    assert reader.thread_bytes("no-such-thread").value is None
    # Warm: the very same tuple while nothing changed.
    assert reader.fleet_bytes().value is reader.fleet_bytes().value


def _varint_len(n: int) -> int:
    size = 1
    while n > 0x7F:
        n >>= 7
        size += 1
    return size


def _serial(kind: str, length: int, value: Any) -> tuple[int, int]:
    """(serial type, body bytes) of one value in an SQLite record (sqlite.org/fileformat2.html#record_format)."""
    if kind == "null":
        return 0, 0
    if kind == "text":
        return 2 * length + 13, length
    if kind == "blob":
        return 2 * length + 12, length
    if kind == "real":
        return 7, 8
    if value in (0, 1):
        return 8 + value, 0
    for serial, (size, limit) in enumerate(
        [(1, 1 << 7), (2, 1 << 15), (3, 1 << 23), (4, 1 << 31), (6, 1 << 47)], 1
    ):
        if -limit <= value < limit:
            return (serial if size != 6 else 5), size
    return 6, 8


def _record_bytes(conn: sqlite3.Connection, table: str) -> tuple[int, int]:
    """(record headers, values) of every row of a rowid table: dbstat's payload is their sum."""
    columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
    parts = ", ".join(f"typeof({c}), length(CAST({c} AS BLOB)), {c}" for c in columns)
    headers = values = 0
    for row in conn.execute(f"SELECT {parts} FROM {table}"):  # noqa: S608 - the saver's own table names
        serials = [_serial(row[i], row[i + 1] or 0, row[i + 2]) for i in range(0, len(row), 3)]
        header = sum(_varint_len(s) for s, _ in serials)
        header += _varint_len(header + _varint_len(header))
        headers += header
        values += sum(n for _, n in serials)
    return headers, values


def test_dbstat_payload_is_every_record_and_checkpoint_bytes_are_its_value_part(tmp_path: Path) -> None:
    home = tmp_path / "home-x"
    home.mkdir()
    build_thread(home / "leon.db", "a", turns=3, tool_chars=6000)
    build_thread(home / "leon.db", "b", turns=2)
    reader = reader_for(home)
    spaces = {s.store: s for s in reader.store_space().value}
    leon = spaces["leon.db"]
    assert leon.measured_by == "dbstat" and leon.estimated == ()
    tables = {t.name: t for t in leon.tables}
    fleet = reader.fleet_bytes().value
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        # dbstat's payload of a table is the sum of its records: each a header plus every column's value.
        # Our per-checkpoint bytes are the checkpoint and metadata values of those records, so the rest of
        # the payload is exactly the ids, namespace, type and the record headers.
        for table in ("checkpoints", "writes"):
            assert tables[table].payload == sum(_record_bytes(conn, table))
        headers, _ = _record_bytes(conn, "checkpoints")
        (keys,) = conn.execute(
            "SELECT SUM(length(thread_id) + length(checkpoint_ns) + length(checkpoint_id) "
            "+ COALESCE(length(parent_checkpoint_id), 0) + COALESCE(length(type), 0)) FROM checkpoints"
        ).fetchone()
    ours = sum(c.checkpoint + c.metadata for t in fleet for c in t.checkpoints)
    assert tables["checkpoints"].payload == ours + keys + headers
    # Every page is in one b-tree or on the free list: the file is their sum.
    assert sum(t.bytes for t in leon.tables) + (leon.free_bytes or 0) == leon.file_bytes
    assert {t.kind for t in leon.tables} == {"table", "index"}


def test_dbstat_unavailable_falls_back_and_says_what_is_estimated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-y"
    home.mkdir()
    build_thread(home / "leon.db", "a", turns=2)
    real_rows = ReadOnlyDB.rows

    def no_dbstat(self: ReadOnlyDB, sql: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        if "dbstat" in sql:  # as a build without SQLITE_ENABLE_DBSTAT_VTAB answers
            with closing(sqlite3.connect(":memory:")) as conn:
                try:
                    conn.execute("SELECT * FROM no_such_dbstat")
                except sqlite3.OperationalError as exc:
                    from memory_core.stores.sqlite.connect import problem_from_error

                    raise StoreError(problem_from_error(exc, store=self.store, path=self.path)) from exc
        return real_rows(self, sql, *args, **kwargs)

    monkeypatch.setattr(ReadOnlyDB, "rows", no_dbstat)
    leon = next(s for s in reader_for(home).store_space().value if s.store == "leon.db")
    assert leon.measured_by == "page counts"
    assert any("indexes" in e for e in leon.estimated) and any("dbstat" in e for e in leon.estimated)
    tables = {t.name: t for t in leon.tables}
    ours = sum(c.checkpoint + c.metadata for t in reader_for(home).fleet_bytes().value for c in t.checkpoints)
    assert tables["checkpoints"].payload is not None and tables["checkpoints"].payload > ours
    assert all(t.kind == "table" for t in leon.tables)


def _home_of_small_threads(home: Path, count: int) -> Path:
    home.mkdir()
    for n in range(count):
        build_thread(home / "leon.db", f"t{n}", turns=2, tool_chars=3000)
    return home


def _count_measures(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The page counts of every dbstat measure taken from now on (one entry each)."""
    measured: list[int] = []
    real = storage_facts._measure_tables

    def counted(*args: Any) -> Any:
        found = real(*args)
        measured.append(found.pages)
        return found

    monkeypatch.setattr(storage_facts, "_measure_tables", counted)
    return measured


def test_a_small_commit_reuses_the_tables_measured_and_a_big_one_measures_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # dbstat visits every page of the file: after a commit that moved its pages by 1 % or less, the space
    # is the file's size, WAL and free pages read afresh beside the tables as measured, and says so.
    home = _home_of_small_threads(tmp_path / "home-m", 60)
    measured = _count_measures(monkeypatch)

    def leon() -> Any:
        return next(s for s in reader_for(home).store_space().value if s.store == "leon.db")

    first = leon()
    assert len(measured) == 1 and first.estimated == ()
    with closing(sqlite3.connect(home / "leon.db")) as conn, conn:  # one small row: no new page
        conn.execute("CREATE TABLE IF NOT EXISTS probe (x)")
    small = leon()
    assert len(measured) == 1 and small.tables == first.tables
    assert small.file_bytes == (home / "leon.db").stat().st_size
    assert any("as measured when the file had" in e for e in small.estimated)
    build_thread(home / "leon.db", "big", turns=8, tool_chars=200_000)  # far more than 1 % of the pages
    grown = leon()
    assert len(measured) == 2 and grown.estimated == () and grown.file_bytes > first.file_bytes
    assert sum(t.bytes for t in grown.tables) + (grown.free_bytes or 0) == grown.file_bytes


def test_a_new_process_reuses_the_measure_kept_in_the_facts_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A gunicorn worker or a CLI run starts with nothing in memory: under the facts folder it reuses the
    # tables the last process measured (exact under the same file content) instead of dbstat again.
    home = _home_of_small_threads(tmp_path / "home-w", 30)
    folder = tmp_path / "facts"
    measured = _count_measures(monkeypatch)

    def leon() -> Any:
        memo.reset()  # as a new process starts
        return next(
            s for s in reader_for(home, facts_folder=folder).store_space().value if s.store == "leon.db"
        )

    first = leon()
    assert len(measured) == 1 and (folder / table_measures.FILE_NAME).exists()
    again = leon()
    assert len(measured) == 1 and again == first and again.estimated == ()  # the same content: exact
    with closing(sqlite3.connect(home / "leon.db")) as conn, conn:  # one small row: within the drift
        conn.execute("CREATE TABLE IF NOT EXISTS probe (x)")
    small = leon()
    assert len(measured) == 1 and small.tables == first.tables
    assert any("as measured when the file had" in e for e in small.estimated)
    build_thread(home / "leon.db", "big", turns=8, tool_chars=200_000)  # far more than 1 % of the pages
    grown = leon()
    assert len(measured) == 2 and grown.estimated == ()
    assert leon() == grown and len(measured) == 2  # the new measure is the one kept
    # A facts file that cannot be read is set aside: the tables are measured again, no error.
    (folder / table_measures.FILE_NAME).write_bytes(b"not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{folder / table_measures.FILE_NAME}{suffix}").unlink(missing_ok=True)
    assert leon().tables == grown.tables and len(measured) == 3


# -- namespaces other than the root, and writes whose checkpoint is gone ------------------------------


class _Inner(TypedDict):
    notes: list[str]


def _subgraph_thread(db: Path, thread_id: str) -> None:
    """A real sub-graph under LangGraph's SqliteSaver: its checkpoints land in namespace 'inner:<task>'."""

    def step(state: _Inner) -> dict[str, Any]:
        return {"notes": [*state["notes"], "x" * 500]}

    inner = StateGraph(_Inner)
    inner.add_node("step", step)
    inner.add_edge(START, "step")
    outer = StateGraph(_Inner)
    outer.add_node("inner", inner.compile())
    outer.add_edge(START, "inner")
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        graph = outer.compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"notes": ["start"]}, {"configurable": {"thread_id": thread_id}})


def test_other_namespaces_and_orphan_writes_count_in_other_bytes_and_in_the_list(tmp_path: Path) -> None:
    home = tmp_path / "home-z"
    home.mkdir()
    db = home / "leon.db"
    build_thread(db, "plain", turns=1)
    _subgraph_thread(db, "nested")
    with closing(sqlite3.connect(db)) as conn:
        (sub,) = conn.execute(
            "SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'nested' AND checkpoint_ns != ''"
        ).fetchone()
        assert sub > 0, "the sub-graph checkpointed in its own namespace"
        (sub_bytes,) = conn.execute(
            "SELECT SUM(length(checkpoint) + length(metadata)) FROM checkpoints "
            "WHERE thread_id = 'nested' AND checkpoint_ns != ''"
        ).fetchone()
        (sub_writes,) = conn.execute(
            "SELECT COALESCE(SUM(length(value)), 0) FROM writes WHERE thread_id = 'nested' AND checkpoint_ns != ''"
        ).fetchone()
        # A write whose checkpoint no longer exists (a crash between put_writes and put, or a hand delete).
        conn.execute(
            "INSERT INTO writes VALUES ('plain', '', 'gone-checkpoint', 'task', 0, 'messages', 'msgpack', ?)",
            (b"\x90" * 37,),
        )
        conn.commit()
    reader = reader_for(home)
    by_id = {t.thread_id: t for t in reader.fleet_bytes().value}
    assert by_id["nested"].other_bytes == sub_bytes + sub_writes
    assert by_id["plain"].other_bytes == 37
    assert {t: b.total for t, b in by_id.items()} == _independent_totals(db)
    for row in reader.list_threads().value:
        assert row.bytes_on_disk == by_id[row.thread_id].total


# -- per channel -------------------------------------------------------------------------------------------


def _ext(code: int, data: bytes) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, data)


def test_channel_bytes_are_the_checkpoint_less_its_msgpack_framing(tmp_path: Path) -> None:
    home = tmp_path / "home-c"
    home.mkdir()
    build_thread(home / "leon.db", "t", turns=3, tool_chars=2000)
    reader = reader_for(home)
    thread = reader.thread_bytes("t").value
    assert thread is not None
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        for c in (
            thread.checkpoints[0],
            thread.checkpoints[len(thread.checkpoints) // 2],
            thread.checkpoints[-1],
        ):
            measured = reader.channel_bytes("t", c.checkpoint_id)
            assert measured.problems == ()
            checkpoint_id, channels = measured.value
            assert checkpoint_id == c.checkpoint_id
            (blob,) = conn.execute(
                "SELECT checkpoint FROM checkpoints WHERE thread_id = 't' AND checkpoint_id = ?",
                (c.checkpoint_id,),
            ).fetchone()
            # Independently: the test decodes the checkpoint (ext types kept as opaque Ext) and re-encodes
            # it with ormsgpack, the serde LangGraph wrote it with. Each channel's bytes are its value
            # re-encoded; the framing is the checkpoint with every channel value replaced by nil (1 byte).
            decoded = ormsgpack.unpackb(blob, ext_hook=_ext)
            values = decoded["channel_values"]
            inline = {ch.channel: ch.inline for ch in channels if ch.inline}
            assert inline == {k: len(ormsgpack.packb(v)) for k, v in values.items()}
            framing = len(ormsgpack.packb({**decoded, "channel_values": dict.fromkeys(values)})) - len(values)
            assert sum(inline.values()) + framing == c.checkpoint == len(blob)
            (writes,) = conn.execute(
                "SELECT COALESCE(SUM(length(value)), 0) FROM writes WHERE thread_id = 't' AND checkpoint_id = ?",
                (c.checkpoint_id,),
            ).fetchone()
            assert sum(ch.writes for ch in channels) == c.writes == writes
            assert all(ch.blob == 0 for ch in channels)
    head = reader.channel_bytes("t")
    assert head.value[0] == thread.checkpoints[-1].checkpoint_id
    assert reader.channel_bytes("t", "no-such-checkpoint").value == (None, ())


def test_a_pickled_or_damaged_checkpoint_is_not_measured_and_says_so(tmp_path: Path) -> None:
    home = tmp_path / "home-p"
    home.mkdir()
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        head, first = conn.execute(
            "SELECT MAX(checkpoint_id), MIN(checkpoint_id) FROM checkpoints"
        ).fetchone()
        conn.execute("UPDATE checkpoints SET type = 'pickle' WHERE checkpoint_id = ?", (head,))
        conn.execute("UPDATE checkpoints SET checkpoint = X'87A176' WHERE checkpoint_id = ?", (first,))
        conn.commit()
    reader = reader_for(home)
    pickled = reader.channel_bytes("t")
    assert pickled.value[0] == head
    assert [p.kind for p in pickled.problems] == [ProblemKind.UNREADABLE_CHECKPOINT]
    assert "pickle" in pickled.problems[0].message and "not measured" in pickled.problems[0].message
    damaged = reader.channel_bytes("t", first)
    assert "damaged msgpack" in damaged.problems[0].message
    # The thread's bytes do not need to decode anything: still measured.
    assert reader.fleet_bytes().problems == ()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x81",
        b"\x81\xaechannel_values\x82\xa1a",
        b"\x81\xaechannel_values\xc1",
        b"\xdf\xff\xff\xff\xff",
    ],
)
def test_span_walker_refuses_truncated_or_unknown_bytes(data: bytes) -> None:
    with pytest.raises(SpanError):
        channel_value_spans(data)


def test_span_walker_refuses_hostile_nesting() -> None:
    deep = b"\x81\xaechannel_values\x81\xa1a" + b"\x91" * 5000 + b"\xc0"
    with pytest.raises(SpanError):
        channel_value_spans(deep)


# -- bad files -------------------------------------------------------------------------------------------


def test_missing_leon_db_gives_a_problem(tmp_path: Path) -> None:
    home = tmp_path / "empty"
    home.mkdir()
    reader = reader_for(home)
    fleet = reader.fleet_bytes()
    assert fleet.value == () and [p.kind for p in fleet.problems] == [ProblemKind.MISSING_FILE]
    assert reader.store_space().value == ()
    assert reader.thread_bytes("t").value is None
    assert reader.channel_bytes("t").value == (None, ())


def test_damaged_files_give_problems_and_the_others_are_still_measured(tmp_path: Path) -> None:
    home = tmp_path / "home-d"
    home.mkdir()
    build_thread(home / "leon.db", "t", turns=1)
    (home / "summary.db").write_bytes(b"not a database at all" * 10)
    reader = reader_for(home)
    spaces = reader.store_space()
    assert [s.store for s in spaces.value] == ["leon.db"]
    assert any(p.kind is ProblemKind.CORRUPT and p.store == "summary" for p in spaces.problems)
    (home / "leon.db").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    fleet = reader_for(home).fleet_bytes()
    assert fleet.value == () and fleet.problems and fleet.problems[0].kind is ProblemKind.CORRUPT


def test_locked_file_gives_a_problem_and_is_read_again_once_free(tmp_path: Path) -> None:
    home = tmp_path / "home-l"
    home.mkdir()
    build_thread(home / "leon.db", "t", turns=1)
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # in WAL mode an exclusive writer does not block readers
    holder = sqlite3.connect(home / "leon.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        reader = reader_for(home, query_timeout_s=0.2)
        fleet = reader.fleet_bytes()
        assert fleet.value == () and any(p.kind is ProblemKind.LOCKED for p in fleet.problems)
        assert any(p.kind is ProblemKind.LOCKED for p in reader.store_space().problems)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # A locked read is not kept: the next call reads again.
    assert [t.thread_id for t in reader_for(home).fleet_bytes().value] == ["t"]


def test_list_thread_bytes_filters_one_thread(tmp_path: Path) -> None:
    home = tmp_path / "home-f"
    home.mkdir()
    build_thread(home / "leon.db", "a", turns=1)
    build_thread(home / "leon.db", "b", turns=2)
    from memory_core.stores.sqlite.connect import opened

    with opened(home / "leon.db", store="main", timeout_s=5, row_cap=10) as db:
        assert [t.thread_id for t in storage_facts.list_thread_bytes(db, ["b"], store="leon.db")] == ["b"]
        assert sorted(t.thread_id for t in storage_facts.list_thread_bytes(db, store="leon.db")) == ["a", "b"]


def test_after_a_commit_only_the_moved_threads_are_read_again(tmp_path: Path) -> None:
    home = tmp_path / "home-i"
    home.mkdir()
    for name in ("a", "b", "c"):
        build_thread(home / "leon.db", name, turns=1)
    before = {t.thread_id: t for t in reader_for(home).fleet_bytes().value}
    build_thread(home / "leon.db", "b", turns=1)  # a new turn on b
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        # A pending write on c's head: no checkpoint moves, its bytes do.
        (head,) = conn.execute("SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = 'c'").fetchone()
        conn.execute(
            "INSERT INTO writes VALUES ('c', '', ?, 'pending', 0, 'messages', 'msgpack', ?)",
            (head, b"\x90" * 11),
        )
        conn.commit()
    after = {t.thread_id: t for t in reader_for(home).fleet_bytes().value}
    assert after["a"] is before["a"], "an unmoved thread is reused, not read again"
    assert after["b"] is not before["b"] and len(after["b"].checkpoints) > len(before["b"].checkpoints)
    assert after["c"].total == before["c"].total + 11 and after["c"].checkpoints[-1].writes >= 11
    from memory_core import memo

    memo.reset()
    assert {t.thread_id: t for t in reader_for(home).fleet_bytes().value} == after, "as a fresh read"


def test_a_moved_thread_reads_only_its_new_checkpoints_and_a_deletion_reads_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core import memo

    read_rows: list[int] = []  # how many checkpoint rows each thread's facts were built from
    real_thread = storage_facts._thread

    def counting(thread: str, items: list[list[Any]], *args: Any) -> Any:
        read_rows.append(len(items))
        return real_thread(thread, items, *args)

    monkeypatch.setattr(storage_facts, "_thread", counting)

    home = tmp_path / "home-n"
    home.mkdir()
    build_thread(home / "leon.db", "a", turns=2)
    build_thread(home / "leon.db", "b", turns=1)
    before = reader_for(home).thread_bytes("a").value
    assert before is not None
    build_thread(home / "leon.db", "a", turns=1)  # a new turn: new checkpoints, new writes
    read_rows.clear()
    grown = reader_for(home).thread_bytes("a").value
    assert grown is not None and len(grown.checkpoints) > len(before.checkpoints)
    old = len(before.checkpoints)
    assert read_rows == [len(grown.checkpoints) - old], "only the new checkpoints were read"
    # The checkpoints read before are the very same facts (only their writes are summed afresh)...
    assert all(
        g.checkpoint_id == b.checkpoint_id and g.checkpoint == b.checkpoint
        for g, b in zip(grown.checkpoints[:old], before.checkpoints, strict=True)
    )
    memo.reset()
    fresh = reader_for(home).thread_bytes("a").value
    assert grown == fresh, "...and the whole equals a fresh read"
    assert fresh is not None and old < len(fresh.checkpoints)
    # A retention script deletes old rows: the count disagrees, so the thread is read whole again.
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = 'a' AND checkpoint_id = ?",
            (fresh.checkpoints[1].checkpoint_id,),
        )
        conn.commit()
    build_thread(home / "leon.db", "a", turns=1)
    after = reader_for(home).fleet_bytes().value
    memo.reset()
    assert after == reader_for(home).fleet_bytes().value
    assert fresh.checkpoints[1].checkpoint_id not in {c.checkpoint_id for t in after for c in t.checkpoints}


# -- no row cap decides what the fleet's report holds ----------------------------------------------------


def test_the_storage_report_holds_every_thread_whatever_the_row_cap(mycel_store: Any) -> None:
    # Each read of the fleet's bytes answers one row per thread: a row cap there dropped threads (past
    # 100,000 threads under the default cap), so a reader whose cap is one row still sizes every thread.
    # (The threads' names still come from the capped thread list: docs/known-limits.md.)
    from memory_core.app.storage import storage_report
    from memory_core.stores.locations import resolve_locations

    threads = set(mycel_store.heads())
    assert len(threads) > 1
    capped = storage_report(MycelReader(resolve_locations(), row_cap=1)).value
    whole = storage_report(MycelReader(resolve_locations())).value
    assert {t.thread_id for t in capped.threads} >= threads
    assert [(t.thread_id, t.bytes) for t in capped.threads] == [(t.thread_id, t.bytes) for t in whole.threads]

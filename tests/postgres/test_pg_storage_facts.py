"""The stores' byte facts on PostgreSQL (stores/postgres/storage_facts.py) through MycelReader, on a real
server: main's layout written by LangGraph's AsyncPostgresSaver through the demo graph, Mycel dev's own
database and dev's demo layout. Every figure is checked against independent pg_column_size queries."""

# ruff: noqa: S608 - the only names put into SQL here are the saver's schemas and tables, fixed in the test

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg

from memory_core.footprint.facts import blob_key
from memory_core.records import ProblemKind
from memory_core.stores.locations import resolve_locations
from memory_core.stores.postgres.connect import mask_url
from memory_core.stores.reader import MycelReader
from tests.support.postgres import write_counts

_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def reader_for(url: str, tmp_path: Path) -> MycelReader:
    environ = {"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url}
    return MycelReader(resolve_locations(environ), query_timeout_s=5.0)


def _rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()  # type: ignore[arg-type]


def _independent_totals(url: str, schema: str) -> dict[str, int]:
    """Per thread: pg_column_size of every checkpoint, metadata, blob and write, in any namespace."""
    totals: dict[str, int] = {}
    for sql in (
        f"SELECT thread_id, sum(pg_column_size(checkpoint) + pg_column_size(metadata)) FROM {schema}.checkpoints GROUP BY 1",
        f"SELECT thread_id, sum(COALESCE(pg_column_size(blob), 0)) FROM {schema}.checkpoint_blobs GROUP BY 1",
        f"SELECT thread_id, sum(COALESCE(pg_column_size(blob), 0)) FROM {schema}.checkpoint_writes GROUP BY 1",
    ):
        for thread, size in _rows(url, sql):
            totals[thread] = totals.get(thread, 0) + int(size)
    return totals


def _check_layout(url: str, tmp_path: Path, schema: str, layout: str) -> None:
    reader = reader_for(url, tmp_path)
    fleet = reader.fleet_bytes()
    assert fleet.problems == ()
    by_id = {t.thread_id: t for t in fleet.value}
    assert by_id and {(t.store, t.layout) for t in fleet.value} == {(f"postgresql {schema}", layout)}
    assert {t: b.total for t, b in by_id.items()} == _independent_totals(url, schema)
    # One truth with the Threads list.
    listed = reader.list_threads().value
    assert listed
    for row in listed:
        assert row.bytes_on_disk == (by_id[row.thread_id].total if row.thread_id in by_id else 0)
    for thread in fleet.value:
        rows = _rows(
            url,
            f"SELECT checkpoint_id, parent_checkpoint_id, pg_column_size(checkpoint), pg_column_size(metadata), "
            f"metadata ->> 'source', (metadata ->> 'step')::int FROM {schema}.checkpoints "
            "WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id",
            (thread.thread_id,),
        )
        assert [
            (c.checkpoint_id, c.parent_id, c.checkpoint, c.metadata, c.source, c.step)
            for c in thread.checkpoints
        ] == rows
        # Each blob is counted once, at the smallest root checkpoint id naming it.
        first = {
            blob_key(channel, version): (checkpoint_id, int(size))
            for channel, version, checkpoint_id, size in _rows(
                url,
                f"SELECT b.channel, b.version, min(c.checkpoint_id), min(COALESCE(pg_column_size(b.blob), 0)) "
                f"FROM {schema}.checkpoint_blobs b JOIN {schema}.checkpoints c ON c.thread_id = b.thread_id "
                "AND c.checkpoint_ns = b.checkpoint_ns AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version "
                "WHERE b.thread_id = %s AND b.checkpoint_ns = '' GROUP BY b.channel, b.version",
                (thread.thread_id,),
            )
        }
        assert dict(thread.blob_sizes) == {key: size for key, (_, size) in first.items()}
        for c in thread.checkpoints:
            counted_here = sum(size for key, (cid, size) in first.items() if cid == c.checkpoint_id)
            assert c.blobs == counted_here
            assert c.blob_refs <= thread.blob_sizes.keys()
            (writes,) = _rows(
                url,
                f"SELECT COALESCE(sum(pg_column_size(blob)), 0) FROM {schema}.checkpoint_writes "
                "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s",
                (thread.thread_id, c.checkpoint_id),
            )[0]
            assert c.writes == writes
        assert sum(c.blobs for c in thread.checkpoints) == sum(thread.blob_sizes.values())


def test_main_layout_bytes_equal_pg_column_size_and_the_thread_list(pg_main_db: Any, tmp_path: Path) -> None:
    url, _built = pg_main_db
    before = write_counts(url)
    _check_layout(url, tmp_path, "public", "main")
    reader = reader_for(url, tmp_path)
    # A blob shared by several checkpoints (a channel no step rewrote) is counted once.
    shared = [
        (t, key)
        for t in reader.fleet_bytes().value
        for key in t.blob_sizes
        if sum(key in c.blob_refs for c in t.checkpoints) >= 2
    ]
    assert shared, "main's graph leaves channel versions that several checkpoints name"
    thread, key = shared[0]
    named = sum(thread.blob_sizes[k] for c in thread.checkpoints for k in c.blob_refs)
    assert named > sum(c.blobs for c in thread.checkpoints), "counted once, though named many times"
    assert before and write_counts(url) == before


def test_dev_sample_bytes_equal_pg_column_size_and_the_thread_list(
    pg_dev_sample: str, tmp_path: Path
) -> None:
    before = write_counts(pg_dev_sample)
    _check_layout(pg_dev_sample, tmp_path, "agent", "dev")
    assert write_counts(pg_dev_sample) == before


def test_dev_demo_bytes_equal_pg_column_size_and_the_thread_list(pg_dev_demo: Any, tmp_path: Path) -> None:
    url, _built = pg_dev_demo
    _check_layout(url, tmp_path, "agent", "dev")


def test_channel_bytes_agree_with_the_checkpoint_and_its_blobs(pg_main_db: Any, tmp_path: Path) -> None:
    url, _built = pg_main_db
    reader = reader_for(url, tmp_path)
    for thread in reader.fleet_bytes().value:
        for c in (thread.checkpoints[0], thread.checkpoints[-1]):
            measured = reader.channel_bytes(thread.thread_id, c.checkpoint_id)
            assert measured.problems == ()
            checkpoint_id, channels = measured.value
            assert checkpoint_id == c.checkpoint_id
            # Blob bytes per channel: exactly the blobs this checkpoint names, as the fleet counted them.
            assert sum(ch.blob for ch in channels) == sum(thread.blob_sizes[k] for k in c.blob_refs)
            assert sum(ch.writes for ch in channels) == c.writes
            inline = dict(
                _rows(
                    url,
                    "SELECT v.key, pg_column_size(v.value) FROM public.checkpoints c, "
                    "jsonb_each(c.checkpoint -> 'channel_values') v "
                    "WHERE c.thread_id = %s AND c.checkpoint_ns = '' AND c.checkpoint_id = %s",
                    (thread.thread_id, c.checkpoint_id),
                )
            )
            assert {ch.channel: ch.inline for ch in channels if ch.channel in inline} == inline
        head = reader.channel_bytes(thread.thread_id)
        assert head.value[0] == thread.checkpoints[-1].checkpoint_id
    assert reader.channel_bytes("no-such-thread").value == (None, ())


def test_dev_channels_live_in_blobs(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = reader_for(pg_dev_sample, tmp_path)
    thread = max(reader.fleet_bytes().value, key=lambda t: t.total)
    checkpoint_id, channels = reader.channel_bytes(thread.thread_id).value
    assert checkpoint_id == thread.checkpoints[-1].checkpoint_id
    by_name = {ch.channel: ch for ch in channels}
    assert by_name["messages"].blob > 0, "dev keeps every channel in checkpoint_blobs"
    assert sum(ch.blob for ch in channels) == sum(
        thread.blob_sizes[k] for k in thread.checkpoints[-1].blob_refs
    )


def test_both_layouts_are_each_measured_and_the_list_takes_devs(pg_dev_sample: str, tmp_path: Path) -> None:
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        for table in _TABLES:
            conn.execute(f"CREATE TABLE public.{table} (LIKE agent.{table} INCLUDING ALL)")
            conn.execute(f"INSERT INTO public.{table} SELECT * FROM agent.{table}")
        # One thread held by both (a migration in progress); the others renamed in main's copy.
        kept = conn.execute("SELECT min(thread_id) FROM agent.checkpoints").fetchone()[0]  # type: ignore[index]
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(
                f"UPDATE public.{table} SET thread_id = 'main-' || thread_id WHERE thread_id != %s", (kept,)
            )
    reader = reader_for(pg_dev_sample, tmp_path)
    fleet = reader.fleet_bytes()
    assert fleet.problems == ()
    stores = {t.store for t in fleet.value}
    assert stores == {"postgresql agent", "postgresql public"}
    both = [t for t in fleet.value if t.thread_id == kept]
    assert [t.store for t in both] == ["postgresql agent", "postgresql public"]
    row = next(r for r in reader.list_threads().value if r.thread_id == kept)
    assert row.layout == "dev" and row.bytes_on_disk == both[0].total
    assert reader.thread_bytes(kept).value == both[0]
    for r in reader.list_threads().value:
        if r.thread_id.startswith("main-"):
            assert r.bytes_on_disk == reader.thread_bytes(r.thread_id).value.total  # type: ignore[union-attr]
    spaces = {s.store: s for s in reader.store_space().value}
    assert {"postgresql agent", "postgresql public"} <= spaces.keys()
    assert {t.name for t in spaces["postgresql public"].tables if t.kind == "table"} == set(_TABLES)


def test_store_space_sums_each_schemas_relations(pg_dev_sample: str, tmp_path: Path) -> None:
    before = write_counts(pg_dev_sample)
    reader = reader_for(pg_dev_sample, tmp_path)
    spaces = reader.store_space()
    assert spaces.problems == ()
    (agent,) = [s for s in spaces.value if s.engine == "postgresql"]
    assert agent.store == "postgresql agent" and agent.measured_by == "pg_total_relation_size"
    assert agent.location == mask_url(pg_dev_sample) and agent.wal_bytes is None
    expected = _rows(
        pg_dev_sample,
        "SELECT c.relname, pg_table_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid) "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'agent' AND c.relkind = 'r'",
    )
    tables = {t.name: t.bytes for t in agent.tables if t.kind == "table"}
    assert tables == {name: size for name, size, _, _ in expected}
    assert sum(t.bytes for t in agent.tables if t.kind == "index") == sum(i for _, _, i, _ in expected)
    assert agent.file_bytes == sum(total for *_, total in expected) == sum(t.bytes for t in agent.tables)
    assert set(_TABLES) <= tables.keys()
    assert write_counts(pg_dev_sample) == before


def test_an_unreachable_server_gives_a_problem_not_an_exception(tmp_path: Path) -> None:
    reader = reader_for("postgresql://nobody:secret@127.0.0.1:9/none", tmp_path)
    for result in (
        reader.fleet_bytes(),
        reader.store_space(),
        reader.thread_bytes("t"),
        reader.channel_bytes("t"),
    ):
        assert result.problems and result.problems[0].kind is ProblemKind.UNREACHABLE
        assert "secret" not in repr(result)
    assert reader.fleet_bytes().value == () and reader.thread_bytes("t").value is None


def test_after_a_commit_only_the_moved_threads_are_read_again(pg_main_db: Any, tmp_path: Path) -> None:
    from memory_core import memo
    from tests.core.store_builders import build_thread

    url, _built = pg_main_db
    before = {t.thread_id: t for t in reader_for(url, tmp_path).fleet_bytes().value}
    moved, still = sorted(before)
    with psycopg.connect(url, autocommit=True) as conn:
        # A pending write on one head (no checkpoint moves, its bytes do), and a new thread beside.
        conn.execute(
            "INSERT INTO public.checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) "
            "SELECT thread_id, '', max(checkpoint_id), 'pending', 0, 'messages', 'msgpack', '\\x90909090'::bytea "
            "FROM public.checkpoints WHERE thread_id = %s GROUP BY thread_id",
            (moved,),
        )
    build_thread(url, "pg-new", turns=1)
    after = {t.thread_id: t for t in reader_for(url, tmp_path).fleet_bytes().value}
    assert after[still] is before[still], "an unmoved thread is reused, not read again"
    assert after[moved].total == before[moved].total + len(b"\x90" * 4) + 1  # bytea's 1-byte short header
    assert "pg-new" in after
    memo.reset()
    assert {t.thread_id: t for t in reader_for(url, tmp_path).fleet_bytes().value} == after, "as a fresh read"
    for row in reader_for(url, tmp_path).list_threads().value:
        assert row.bytes_on_disk == after[row.thread_id].total


def test_on_dev_only_a_sqlite_file_is_measured_only_where_its_variable_names_it(
    pg_dev_sample: str, tmp_path: Path
) -> None:
    from tests.core.store_builders import build_thread

    default = tmp_path / "home" / ".leon"
    default.mkdir(parents=True, exist_ok=True)
    build_thread(default / "leon.db", "left-over", turns=1)  # a ~/.leon file dev never reads
    spaces = reader_for(pg_dev_sample, tmp_path).store_space().value
    assert [s.store for s in spaces] == ["postgresql agent"]
    environ = {
        "HOME": str(tmp_path / "home"),
        "LEON_POSTGRES_URL": pg_dev_sample,
        "LEON_DB_PATH": str(default / "leon.db"),
    }
    named = MycelReader(resolve_locations(environ)).store_space().value
    assert [s.store for s in named] == ["postgresql agent", "leon.db"]
    assert named[1].engine == "sqlite" and named[1].measured_by == "dbstat"

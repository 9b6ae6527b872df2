"""The Postgres backend against a real server: Mycel dev's own database (tests/data/mycel-pg-dev, written
by dev's QueryLoop) and main's layout written by LangGraph's real AsyncPostgresSaver through the demo graph.
Everything read through MycelReader, as every screen reads; never through the saver's get_tuple/list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memory_core.demo.graph import FAKE_API_KEY
from memory_core.stores.locations import resolve_locations
from memory_core.stores.postgres.backend import PostgresBackend
from memory_core.stores.reader import MycelReader
from memory_core.tokens import content_chars
from tests.support.postgres import write_counts

DATA = Path(__file__).resolve().parents[1] / "data" / "mycel-pg-dev"
TRUTH = json.loads((DATA / "truth.json").read_text())


def reader_for(url: str, tmp_path: Path, **env: str) -> MycelReader:
    """A reader configured as Mycel is: LEON_POSTGRES_URL, and a data home with no SQLite file."""
    environ = {"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url, **env}
    return MycelReader(resolve_locations(environ), query_timeout_s=5.0)


def test_dev_sample_list_thread_and_checkpoints_match_truth(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = reader_for(pg_dev_sample, tmp_path)
    listed = reader.list_threads()
    assert listed.problems == ()
    by_id = {row.thread_id: row for row in listed.value}
    assert set(by_id) == {t["thread_id"] for t in TRUTH["threads"]}
    for truth in TRUTH["threads"]:
        row = by_id[truth["thread_id"]]
        assert row.checkpoints == truth["checkpoint_count"]
        assert row.head_checkpoint_id == truth["newest_checkpoint_id"]
        assert row.messages == truth["head_message_count"]
        assert row.layout == "dev"

        state = reader.get_state(truth["thread_id"])
        assert state.problems == ()
        assert state.value is not None
        got = [(m.type.value, m.id, content_chars(m.content)) for m in state.value.messages]
        assert got == [(m["type"], m["id"], m["chars"]) for m in truth["head_messages"]]
        breaker = state.value.channels["memory_compaction_state"]
        assert breaker == truth["breaker"]

        checkpoints = reader.list_checkpoints(truth["thread_id"])
        assert checkpoints.problems == ()
        # Newest first, as the saver lists them; dev stores no parent ids.
        expected = list(reversed(truth["checkpoints"]))
        assert [c.checkpoint_id for c in checkpoints.value] == [c["checkpoint_id"] for c in expected]
        assert [c.messages for c in checkpoints.value] == [c["messages"] for c in expected]
        assert [(c.source, c.step) for c in checkpoints.value] == [(c["source"], c["step"]) for c in expected]
        assert all(c.parent_checkpoint_id is None for c in checkpoints.value)


def test_dev_sample_layout_is_labelled(pg_dev_sample: str, tmp_path: Path) -> None:
    backend = reader_for(pg_dev_sample, tmp_path).backend
    assert isinstance(backend, PostgresBackend)
    layouts, problems = backend.layouts()
    assert problems == []
    assert [(la.schema, la.layout, la.migration) for la in layouts] == [("agent", "dev", 9)]


def test_main_layout_reads_what_the_saver_wrote_and_redacts_api_key(
    pg_main_db: tuple[str, list[Any]], tmp_path: Path
) -> None:
    url, built = pg_main_db
    reader = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase")
    layouts, _ = reader.backend.layouts()  # type: ignore[attr-defined]
    assert [(la.schema, la.layout) for la in layouts] == [("public", "main")]
    listed = reader.list_threads()
    assert listed.problems == ()
    by_id = {row.thread_id: row for row in listed.value}
    assert set(by_id) == {b.thread_id for b in built}
    with psycopg.connect(url) as conn:
        counts = dict(
            conn.execute(
                "SELECT thread_id, count(*) FROM checkpoints WHERE checkpoint_ns = '' GROUP BY 1"
            ).fetchall()
        )
    for thread in built:
        row = by_id[thread.thread_id]
        assert row.checkpoints == counts[thread.thread_id]
        state = reader.get_state(thread.thread_id)
        assert state.value is not None and state.problems == ()
        assert len(state.value.messages) == thread.head_message_count == row.messages
        checkpoints = reader.list_checkpoints(thread.thread_id)
        assert checkpoints.problems == ()
        assert len(checkpoints.value) == counts[thread.thread_id]
        # Main's graph keeps parent ids: every checkpoint but the first names one.
        assert sum(c.parent_checkpoint_id is None for c in checkpoints.value) == 1
        assert checkpoints.value[0].messages == thread.head_message_count
        text = repr(checkpoints.value) + repr(state.value)
        assert "api_key" in text  # the key is there, its value is not
        assert FAKE_API_KEY not in text


def test_a_database_holding_both_layouts_shows_both(pg_dev_sample: str, tmp_path: Path) -> None:
    # A migration in progress: main's tables in public beside dev's schema agent.
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"):
            conn.execute(f"CREATE TABLE public.{table} (LIKE agent.{table} INCLUDING ALL)")
            conn.execute(f"INSERT INTO public.{table} SELECT * FROM agent.{table}")  # noqa: S608 - fixed names
        conn.execute("UPDATE public.checkpoints SET thread_id = 'main-' || thread_id")
        conn.execute("UPDATE public.checkpoint_blobs SET thread_id = 'main-' || thread_id")
    reader = reader_for(pg_dev_sample, tmp_path)
    layouts, problems = reader.backend.layouts()  # type: ignore[attr-defined]
    assert problems == []
    assert [(la.schema, la.layout) for la in layouts] == [("agent", "dev"), ("public", "main")]
    listed = reader.list_threads()
    assert len(listed.value) == 2 * len(TRUTH["threads"])
    # Each thread is labelled with the layout that holds it.
    assert {row.thread_id.startswith("main-") for row in listed.value if row.layout == "main"} == {True}
    assert sum(row.layout == "dev" for row in listed.value) == len(TRUTH["threads"])
    copy = TRUTH["threads"][0]
    state = reader.get_state("main-" + copy["thread_id"])
    assert state.value is not None and len(state.value.messages) == copy["head_message_count"]


def test_no_read_writes_anything(pg_dev_sample: str, tmp_path: Path) -> None:
    before = write_counts(pg_dev_sample)
    reader = reader_for(pg_dev_sample, tmp_path)
    reader.file_status()
    for row in reader.list_threads().value:
        reader.get_thread(row.thread_id)
        reader.get_state(row.thread_id)
        reader.list_checkpoints(row.thread_id)
    assert before and write_counts(pg_dev_sample) == before


def test_every_read_is_read_only_on_the_server(pg_dev_sample: str, tmp_path: Path) -> None:
    # The transaction itself refuses writes: even a bug could not change Mycel's data.
    from memory_core.stores.postgres.connect import PgError, read_only

    # And one snapshot holds for every statement of a read, not only for the first.
    with read_only(pg_dev_sample, "main", timeout_s=5.0, row_cap=10) as read:
        assert read.one("SHOW transaction_isolation") == ("repeatable read",)
        assert read.one("SHOW transaction_read_only") == ("on",)
    with (
        pytest.raises(PgError) as refused,
        read_only(pg_dev_sample, "main", timeout_s=5.0, row_cap=10) as read,
    ):
        read.one("DELETE FROM agent.checkpoints RETURNING 1")
    assert refused.value.problem.kind.value == "refused"
    with psycopg.connect(pg_dev_sample) as conn:
        assert conn.execute("SELECT count(*) FROM agent.checkpoints").fetchone() == (65,)


def test_rollback_with_a_select_only_role_is_refused_and_writes_nothing(
    pg_dev_sample: str, tmp_path: Path
) -> None:
    # Rollback on Postgres applies (tests/postgres/test_pg_rollback.py); the README's read-only role may
    # preview it but not write it: one clear message, nothing half-written on the server or on disk.
    from memory_core.app.rollback import apply_rollback, preview_rollback
    from memory_core.rollback import RollbackRefused

    # A role of its own: roles are cluster-wide, and the test below drops and recreates its one.
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'mycel_rollback_ro'").fetchone() is None:
            conn.execute("CREATE ROLE mycel_rollback_ro LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA agent TO mycel_rollback_ro")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA agent TO mycel_rollback_ro")
    url = pg_dev_sample.replace("postgresql://mycel@", "postgresql://mycel_rollback_ro@", 1)
    assert url != pg_dev_sample
    reader = reader_for(url, tmp_path)
    truth = TRUTH["threads"][0]
    impact = preview_rollback(reader, truth["thread_id"], truth["checkpoints"][0]["checkpoint_id"])
    assert impact.head_checkpoint_id == truth["newest_checkpoint_id"]
    assert impact.refusals == ()
    before = write_counts(pg_dev_sample)
    with pytest.raises(RollbackRefused, match="may not write Mycel's checkpoints .*permission denied"):
        apply_rollback(reader.locations, impact, actor="test", reader=reader)
    assert write_counts(pg_dev_sample) == before
    after = reader_for(pg_dev_sample, tmp_path).list_checkpoints(truth["thread_id"]).value
    assert len(after) == truth["checkpoint_count"]
    assert max(row.checkpoint_id for row in after) == truth["newest_checkpoint_id"]
    assert not reader.locations.main.exists()


def test_a_select_only_role_reads_everything(pg_dev_sample: str, tmp_path: Path) -> None:
    # The README's role: USAGE on the schema and SELECT on its tables, nothing more.
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS mycel_dashboard_ro")
        conn.execute("CREATE ROLE mycel_dashboard_ro LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA agent TO mycel_dashboard_ro")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA agent TO mycel_dashboard_ro")
    url = pg_dev_sample.replace("postgresql://mycel@", "postgresql://mycel_dashboard_ro@", 1)
    assert url != pg_dev_sample
    reader = reader_for(url, tmp_path)
    listed = reader.list_threads()
    assert listed.problems == ()
    assert len(listed.value) == len(TRUTH["threads"])
    heavy = max(TRUTH["threads"], key=lambda t: t["checkpoint_count"])
    assert len(reader.list_checkpoints(heavy["thread_id"]).value) == heavy["checkpoint_count"]
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        conn.execute("REVOKE SELECT ON agent.checkpoint_blobs FROM mycel_dashboard_ro")
    denied = reader_for(url, tmp_path).get_state(heavy["thread_id"])
    assert denied.value is None
    assert [p.kind.value for p in denied.problems] == ["denied"]
    assert "may not SELECT from agent.checkpoint_blobs" in denied.problems[0].message


def test_main_series_rebuilt_from_writes_equals_decoding_every_checkpoint(
    pg_main_db: tuple[str, list[Any]], tmp_path: Path
) -> None:
    from memory_core.stores.series import build_series
    from memory_core.tokens import default_counter

    url, built = pg_main_db
    reader = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase")
    for thread in built:
        series = reader.checkpoint_series(thread.thread_id)
        assert series is not None and series.rebuilt > 0  # main's writes were used
        with reader.backend.checkpoints(thread.thread_id, []) as snapshot:
            assert snapshot is not None
            metas = snapshot.skeleton()
            decoded = build_series(metas, None, snapshot.payload, count=default_counter().count)
        assert decoded.decoded == len(metas)
        assert dict(series.points) == dict(decoded.points)


def test_two_databases_never_share_a_memo_key(pg_server, pg_dev_sample: str, tmp_path) -> None:
    """Every screen's memos key on the reader's store: on Postgres the database, not a leon.db path that
    is the same for any database read under one HOME."""
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader

    other = pg_server.create_database("another_home", template="mycel_dev_sample")
    env = {"HOME": str(tmp_path), "LEON_DB_PATH": str(tmp_path / "leon.db")}
    first = MycelReader(resolve_locations({**env, "LEON_POSTGRES_URL": pg_dev_sample}))
    second = MycelReader(resolve_locations({**env, "LEON_POSTGRES_URL": other}))
    assert first.locations.main == second.locations.main
    assert first.store_key != second.store_key

"""Search with the index in the dashboard's own PostgreSQL database (DATABASE_URL): the same searches as
the SQLite index give the same hits, no planted secret reaches the table, and Mycel's database is left
alone."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from memory_core import memo
from memory_core.app.search import day_after, day_start, default_index, search
from memory_core.stores.locations import resolve_locations
from memory_core.stores.postgres.search_index import PgSearchIndex
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite import search_index
from memory_core.stores.sqlite.search_index import SearchIndex, SearchIndexError
from tests.core.store_builders import point_locations
from tests.core.test_search import (
    HOSTILE_QUERIES,
    SECRET_NEEDLES,
    SECRET_PROBES,
    _plant_fleet,
    _texts,
    plant_secret_thread,
)
from tests.dashboard.planting import plant_thread


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "mycel"
    folder.mkdir()
    memo.reset()
    return folder


@pytest.fixture
def dashboard_db(pg_server) -> str:
    """The dashboard's own database: empty, the search tables made by our code on first use."""
    from tests.support.postgres import database_name

    return pg_server.create_database(database_name("dashboard"))


def _reader(home: Path) -> MycelReader:
    return MycelReader(point_locations(home), facts_folder=home / "cache")


def _hits(results) -> list[tuple[object, ...]]:
    return [(h.thread_id, h.index, h.kind, h.tool, h.snippet, h.marks, h.rank) for h in results.hits]


today = datetime.now(UTC).date()
SEARCHES: list[tuple[str, dict[str, object]]] = [
    ("restart the deploy server", {}),
    ('"deploy server"', {}),
    ('"server deploy"', {}),
    ('"rm -rf"', {}),
    ("build", {}),
    ("build", {"tool": "read"}),
    ("server", {"thread": "t-scattered"}),
    ("server", {"thread": "no-such-thread"}),
    ("server", {"since": day_start(today), "until": day_after(today)}),
    ("server", {"since": day_start(today + timedelta(days=1))}),
    ("deploy*", {}),
    ("deploy AND NOT server", {}),
    ("nothing", {}),
]


def test_the_same_searches_give_the_same_hits(home: Path, dashboard_db: str):
    _plant_fleet(home)
    plant_thread(home / "leon.db", "t-accents", _texts("Café DÉPLOY naïve", "ok"))
    sqlite_index = SearchIndex(home / "cache" / "index.sqlite3")
    pg_index = PgSearchIndex(dashboard_db, "the fleet")
    for query, filters in [*SEARCHES, ("cafe deploy", {}), ("NAIVE", {})]:
        expected = search(_reader(home), query, index=sqlite_index, **filters)
        got = search(_reader(home), query, index=pg_index, **filters)
        assert _hits(got) == _hits(expected), (query, filters)
    assert pg_index.document_count() == sqlite_index.document_count() > 0


def test_a_very_common_word_is_ranked_among_the_newest_matches(
    home: Path, dashboard_db: str, monkeypatch: pytest.MonkeyPatch
):
    db = home / "leon.db"
    plant_thread(db, "oldest", _texts("common", "x"))
    for n in range(4):
        plant_thread(db, f"newer{n}", _texts(f"common word among many other words number {n}", "x"))
    index = PgSearchIndex(dashboard_db, "the fleet")
    assert search(_reader(home), "common", index=index).hits[0].thread_id == "oldest"
    monkeypatch.setattr(search_index, "COMMON_MATCHES", 3)
    bounded = search(_reader(home), "common", index=index)
    assert bounded.newest_only == 3
    assert {h.thread_id for h in bounded.hits} == {"newer1", "newer2", "newer3"}


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_a_hostile_query_never_errors(home: Path, dashboard_db: str, query: str):
    _plant_fleet(home)
    index = PgSearchIndex(dashboard_db, "the fleet")
    assert isinstance(search(_reader(home), query, index=index).hits, tuple)
    assert index.document_count() > 0


def test_database_url_puts_the_index_in_the_dashboards_database(home: Path, dashboard_db: str):
    _plant_fleet(home)
    index = default_index(_reader(home), {"DATABASE_URL": dashboard_db})
    assert isinstance(index, PgSearchIndex)
    assert [h.thread_id for h in search(_reader(home), '"deploy server"', index=index).hits] == ["t-phrase"]
    assert not list((home / "cache").glob("search-index-*"))  # no SQLite index beside it
    # A second host (another process, the same database) finds the index already built.
    memo.reset()
    again = search(
        _reader(home), '"deploy server"', index=PgSearchIndex(dashboard_db, str(point_locations(home).main))
    )
    assert again.refresh.documents_added == 0 and [h.thread_id for h in again.hits] == ["t-phrase"]


def test_no_planted_secret_reaches_the_table(home: Path, dashboard_db: str):
    plant_secret_thread(home)
    index = PgSearchIndex(dashboard_db, "the fleet")
    assert search(_reader(home), "https", index=index).hits  # the rest of the call is indexed
    for probe in SECRET_PROBES:
        assert search(_reader(home), probe, index=index).hits == (), probe
    dump = [
        "SELECT thread_id, kind, tool, body, tsv::text FROM mycel_search_docs",
        "SELECT * FROM mycel_search_threads",
        "SELECT * FROM mycel_search_meta",
    ]
    with psycopg.connect(dashboard_db) as db:
        dumped = "\n".join(str(row) for sql in dump for row in db.execute(sql))
    assert "https" in dumped
    for needle in SECRET_NEEDLES:
        assert needle not in dumped and needle.lower() not in dumped, needle


def test_a_table_filled_under_an_older_redaction_rule_is_filled_again(
    home: Path, dashboard_db: str, monkeypatch: pytest.MonkeyPatch
):
    from langchain_core.messages import HumanMessage

    from memory_core.app import search as engine
    from memory_core.search import documents
    from memory_core.stores import checkpoints

    nested = "nested0leak0value"
    plant_thread(home / "leon.db", "t-nested", [HumanMessage(content=f"env: X_API_KEY={nested} ok", id="h")])
    other = PgSearchIndex(dashboard_db, "another store")  # the same tables, another fleet: left as it is
    other_home = home.parent / "other"
    other_home.mkdir()
    _plant_fleet(other_home)
    search(_reader(other_home), "deploy", index=other)
    with monkeypatch.context() as older:
        older.setattr(engine, "INDEXING_RULES", "1")
        older.setattr(documents, "clean_text", lambda t: t)  # the older rule, as far as this text goes
        older.setattr(checkpoints, "masked_texts", lambda v: v)  # and no mask at the border yet
        assert search(_reader(home), nested, index=PgSearchIndex(dashboard_db, "the fleet")).hits
    memo.reset()
    index = PgSearchIndex(dashboard_db, "the fleet")
    assert search(_reader(home), "ok", index=index).refresh.threads_updated == 1  # filled again
    with psycopg.connect(dashboard_db) as db:
        bodies = "\n".join(str(row) for row in db.execute("SELECT body, tsv::text FROM mycel_search_docs"))
    assert nested not in bodies and "X_API_KEY=" + "*" * len(nested) in bodies  # masked at the border
    assert search(_reader(other_home), '"deploy server"', index=other).refresh.documents_added == 0


def test_mycels_database_is_left_alone(pg_main_db, dashboard_db: str, tmp_path: Path):
    url, _built = pg_main_db
    environ = {"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url}
    reader = MycelReader(resolve_locations(environ), query_timeout_s=5.0, facts_folder=tmp_path / "cache")
    index = default_index(reader, {**environ, "DATABASE_URL": dashboard_db})
    found = search(reader, "lease terminal", index=index)
    assert {h.thread_id for h in found.hits} >= {"m_pgMain0001-1"}
    tables = "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'mycel_search%'"
    with psycopg.connect(url) as mycel, psycopg.connect(dashboard_db) as ours:
        assert mycel.execute(tables).fetchall() == []
        assert len(ours.execute(tables).fetchall()) == 3


def test_an_unreachable_database_is_one_clear_error(home: Path, tmp_path: Path):
    _plant_fleet(home)
    url = f"postgresql://mycel:s3cretpass@/nowhere?host={tmp_path / 'no-socket'}"
    with pytest.raises(SearchIndexError) as raised:
        search(_reader(home), "deploy", index=PgSearchIndex(url, "the fleet", timeout_s=2))
    message = str(raised.value)
    assert message.startswith("the search index in postgresql://mycel:***@") and "\n" not in message
    assert "s3cretpass" not in message


def test_a_common_query_still_ranks_its_phrase_matches_first(
    home: Path, dashboard_db: str, monkeypatch: pytest.MonkeyPatch
):
    db = home / "leon.db"
    plant_thread(db, "scattered-old", _texts("beta x alpha", "x"))
    plant_thread(db, "phrase", _texts("alpha beta gamma delta epsilon zeta", "x"))
    plant_thread(db, "scattered-new", _texts("beta alpha", "x"))
    monkeypatch.setattr(search_index, "COMMON_MATCHES", 2)
    found = search(_reader(home), "alpha beta", index=PgSearchIndex(dashboard_db, "the fleet"))
    assert found.newest_only == 2
    assert [h.thread_id for h in found.hits] == ["phrase", "scattered-new"]


def test_a_bulk_first_load_gives_the_same_hits_and_builds_its_indexes(
    home: Path, dashboard_db: str, monkeypatch: pytest.MonkeyPatch
):
    from memory_core.stores.postgres import search_index as search_index_pg

    _plant_fleet(home)
    # A tiny buffer: the fleet's first load goes the bulk way (indexes dropped, COPY, built at the end).
    monkeypatch.setattr(search_index_pg, "FLUSH_ROWS", 2)
    sqlite_index = SearchIndex(home / "cache" / "index.sqlite3")
    pg_index = PgSearchIndex(dashboard_db, "the fleet")
    for query, filters in SEARCHES:
        expected = search(_reader(home), query, index=sqlite_index, **filters)
        assert _hits(search(_reader(home), query, index=pg_index, **filters)) == _hits(expected), query
    with psycopg.connect(dashboard_db) as db:
        indexes = db.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'mycel_search_docs'")
        assert {row[0] for row in indexes} >= {"mycel_search_docs_tsv", "mycel_search_docs_thread"}
        ids = db.execute("SELECT thread_id FROM mycel_search_docs WHERE kind <> 'queue' ORDER BY id")
        order = list(dict.fromkeys(row[0] for row in ids))
    # Ids follow the threads' times, oldest first, as in the SQLite file.
    with closing(sqlite3.connect(home / "cache" / "index.sqlite3")) as sqlite_db:
        rows = sqlite_db.execute("SELECT thread_id FROM entries WHERE kind <> 'queue' ORDER BY id")
        assert order == list(dict.fromkeys(row[0] for row in rows))
    assert pg_index.document_count() == sqlite_index.document_count()

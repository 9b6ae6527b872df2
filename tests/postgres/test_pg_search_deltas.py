"""The search index grows from new steps' writes on PostgreSQL too: Mycel main's layout (LangGraph's real
PostgresSaver keeps `checkpoint_writes`), written in Mycel's shape (id-less input dicts and answers), is
read from its writes without a head decode; Mycel dev's layout keeps no writes and no parents, so its
moved heads are decoded, and both indexes equal a rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from memory_core import memo
from memory_core.app.search import rebuild_index, search
from memory_core.stores.locations import resolve_locations
from memory_core.stores.message_deltas import MessagesSince
from memory_core.stores.postgres.search_index import PgSearchIndex
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list import listing
from tests.core.test_search_deltas import _agent_graph


@pytest.fixture
def head_decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    real = listing.decode_checkpoint

    def counting(kind: Any, blob: Any, **kw: Any) -> Any:
        seen.append(kind)
        return real(kind, blob, **kw)

    monkeypatch.setattr(listing, "decode_checkpoint", counting)
    return seen


def _reader(url: str, tmp_path: Path, **env: str) -> MycelReader:
    return MycelReader(resolve_locations({"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url, **env}))


def _play(url: str, thread_id: str, turns: range) -> None:
    """Turns as Mycel main writes them: the owner's input a raw role dict, no message with an id."""
    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
        graph = _agent_graph(parallel=1, body=None).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": thread_id}}
        for turn in turns:
            message = {"role": "user", "content": f"turn {turn} asks about walrus{turn}"}
            graph.invoke({"messages": [message]}, config)


def _contents(url: str) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every document (thread, index, kind, tool, text) and every thread's kept state, sorted."""
    with psycopg.connect(url) as conn:
        docs = conn.execute("SELECT thread_id, idx, kind, tool, body FROM mycel_search_docs").fetchall()
        threads = conn.execute(
            "SELECT thread_id, head, messages, ids_digest, summaries FROM mycel_search_threads"
        ).fetchall()
    return sorted(docs), sorted(threads)


def test_main_layout_grows_from_its_writes(pg_server, tmp_path: Path, head_decodes: list[str]) -> None:
    from tests.support.postgres import database_name

    memo.reset()
    mycel = pg_server.create_database(database_name("main_deltas"))
    _play(mycel, "pg-long", range(1, 3))
    index = PgSearchIndex(pg_server.create_database(database_name("dashboard")), "grown")
    env = {"LEON_STORAGE_STRATEGY": "supabase"}
    first = search(_reader(mycel, tmp_path, **env), "walrus1", index=index).refresh
    assert first.threads_updated == 1 and first.threads_from_deltas == 0
    head_decodes.clear()

    _play(mycel, "pg-long", range(3, 5))
    grown = search(_reader(mycel, tmp_path, **env), "walrus4", index=index)
    assert grown.refresh.threads_from_deltas == 1 and grown.refresh.threads_reindexed == 0
    assert head_decodes == []
    assert [h.thread_id for h in grown.hits] == ["pg-long"]

    fresh_db = pg_server.create_database(database_name("dashboard"))
    rebuild_index(_reader(mycel, tmp_path, **env), PgSearchIndex(fresh_db, "grown"))
    assert _contents(index.url) == _contents(fresh_db)


def test_dev_layout_without_writes_decodes_its_moved_heads(pg_dev_demo, tmp_path: Path) -> None:
    memo.reset()
    url, built = pg_dev_demo
    reader = _reader(url, tmp_path)
    rows = {r.thread_id: r for r in reader.list_threads().value if r.head_checkpoint_id}
    assert rows
    asks = []
    for row in rows.values():
        with reader.backend.checkpoints(row.thread_id, []) as snapshot:
            assert snapshot is not None
            metas = snapshot.skeleton()
            assert snapshot.message_writes() is None  # dev keeps no writes
        if len(metas) > 1:
            asks.append(
                MessagesSince(row.thread_id, metas[0].checkpoint_id, metas[-1].checkpoint_id, 0, row.messages)
            )
    assert asks
    found = reader.messages_since(asks)
    assert found.problems == () and set(found.value.values()) == {None}  # every one falls back

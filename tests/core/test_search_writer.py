"""The SQLite index's writer: inserts run on a background thread while the refresh decodes; what it
writes, and how its failure surfaces (one SearchIndexError, the transaction rolled back)."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory_core import memo
from memory_core.app.search import default_index, search
from memory_core.search.documents import DocumentKind, SearchDocument
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite import search_index
from memory_core.stores.sqlite.search_index import IndexedThread, SearchIndex, SearchIndexError
from tests.core.store_builders import point_locations
from tests.dashboard.planting import plant_thread


def _reader(home: Path) -> MycelReader:
    return MycelReader(point_locations(home), facts_folder=home / "cache")


def _contents(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with closing(sqlite3.connect(path)) as db:
        return {
            "entries": db.execute("SELECT * FROM entries ORDER BY id").fetchall(),
            "docs": db.execute("SELECT rowid, text FROM docs ORDER BY rowid").fetchall(),
            "threads": db.execute("SELECT * FROM threads ORDER BY thread_id").fetchall(),
            "meta": db.execute("SELECT * FROM meta ORDER BY key").fetchall(),
        }


def _inserters() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "search-index-inserter"]


def test_a_failed_background_insert_is_one_error_and_leaves_the_index_as_it_was(tmp_path: Path) -> None:
    home = tmp_path / "mycel"
    home.mkdir()
    memo.reset()
    db = home / "leon.db"
    for n in range(3):
        plant_thread(
            db, f"t-{n}", [HumanMessage(content=f"walrus {n}", id="h"), AIMessage(content="ok", id="a")]
        )
    assert len(search(_reader(home), "walrus").hits) == 3
    path = Path(default_index(_reader(home)).path)
    before = _contents(path)

    plant_thread(db, "poison", [HumanMessage(content="walrus poison", id="h")])
    plant_thread(db, "t-1", [HumanMessage(content="walrus 1 again", id="h2")])
    with closing(sqlite3.connect(path)) as index:  # a real failure inside SQLite, in the inserter's thread
        index.execute(
            "CREATE TRIGGER planted BEFORE INSERT ON entries WHEN NEW.thread_id = 'poison' "
            "BEGIN SELECT RAISE(ABORT, 'planted failure'); END"
        )
    memo.reset()
    with pytest.raises(SearchIndexError, match="planted failure") as raised:
        search(_reader(home), "walrus")
    assert str(raised.value).startswith(f"the search index {path} cannot be used")
    assert _contents(path) == before  # rolled back: not even t-1's new head was kept
    assert _inserters() == []  # the thread ended with the transaction

    with closing(sqlite3.connect(path)) as index:
        index.execute("DROP TRIGGER planted")
    memo.reset()
    assert {h.thread_id for h in search(_reader(home), "walrus").hits} == {"t-0", "t-1", "t-2", "poison"}


def test_rows_reach_the_index_as_given_in_the_order_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "_BATCH", 3)  # several hand-offs from a few documents
    at = datetime(2026, 5, 1, 12, 30, 15, 123456, tzinfo=UTC)

    def doc(thread: str, index: int, text: str, tool: str | None = None) -> SearchDocument:
        return SearchDocument(thread, index, DocumentKind.TOOL, tool, text, at if index % 2 else None)

    index = SearchIndex(tmp_path / "index.sqlite3")
    with index.writing() as writer:
        assert writer.add(doc("a", i, f"text {i}") for i in range(3)) == 3
        writer.keep_thread("a", IndexedThread("h1", 3, "d1", ""))
        assert writer.add([doc("b", 0, "nul in the tool", tool="Ba\x00sh"), doc("b", 1, "x")]) == 2
        writer.remove("a", ["tool"])  # waits for the inserts before it: a's documents are gone
        writer.keep_thread("a", IndexedThread("h2", 0, "d2", "s"))
        assert writer.threads() == {"a": IndexedThread("h2", 0, "d2", "s")}
        assert writer.add([doc("c", 0, "after the removal")]) == 1
    got = _contents(index.path)
    epoch = at.timestamp()
    assert got["entries"] == [  # ids after the removal counted again from what is left
        (4, "b", 0, "tool", "Ba\x00sh", None),
        (5, "b", 1, "tool", None, epoch),
        (6, "c", 0, "tool", None, None),
    ]
    assert got["docs"] == [(4, "nul in the tool"), (5, "x"), (6, "after the removal")]
    assert got["threads"] == [("a", "h2", 0, "d2", "s")]
    assert _inserters() == []


def test_the_odd_texts_are_stored_unchanged(tmp_path: Path) -> None:
    texts = ['quote " back \\ slash \\u0000 \n', "émoji 😀 \u202e", "\x01marks\x02", "a\x00b"]
    index = SearchIndex(tmp_path / "index.sqlite3")
    with index.writing() as writer:
        writer.add(
            SearchDocument("t", i, DocumentKind.HUMAN, None, text, None) for i, text in enumerate(texts)
        )
    assert [text for _, text in _contents(index.path)["docs"]] == texts

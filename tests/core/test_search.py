"""Search over every thread: the query language, ranking, filters, a hostile query, no secret in the index,
and the index growing from new checkpoints (written by LangGraph's real SqliteSaver) without re-reading
the others."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core import memo
from memory_core.app.search import day_after, day_start, default_index, search
from memory_core.demo.tables import QUEUE_DDL
from memory_core.search.query import QueryError, fts_match, parse_query
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite import search_index
from tests.core.store_builders import add_summary, build_thread, point_locations
from tests.dashboard.planting import plant_thread

SECRET = "sk-proj-PLANTED0secret0KEY0abcdef123456"


def _reader(home: Path) -> MycelReader:
    return MycelReader(point_locations(home), facts_folder=home / "cache")


def _texts(*contents: str) -> list[HumanMessage | AIMessage]:
    out: list[HumanMessage | AIMessage] = []
    for i, content in enumerate(contents):
        cls = HumanMessage if i % 2 == 0 else AIMessage
        out.append(cls(content=content, id=f"m{i}"))
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "mycel"
    folder.mkdir()
    memo.reset()
    return folder


def _plant_fleet(home: Path) -> None:
    db = home / "leon.db"
    plant_thread(db, "t-phrase", _texts("please restart the deploy server now", "done"))
    plant_thread(db, "t-scattered", _texts("the server is fine; deploy later and restart nothing", "ok"))
    plant_thread(
        db,
        "t-tools",
        [
            HumanMessage(content="clean up", id="h1"),
            AIMessage(
                content="",
                id="a1",
                tool_calls=[{"id": "c1", "name": "Bash", "args": {"command": "rm -rf /tmp/build"}}],
            ),
            ToolMessage(content="removed 12 files from build", tool_call_id="c1", name="Bash", id="t1"),
            AIMessage(
                content="",
                id="a2",
                tool_calls=[{"id": "c2", "name": "Read", "args": {"file_path": "/tmp/build/notes.txt"}}],
            ),
            ToolMessage(content="build notes: nothing", tool_call_id="c2", name="Read", id="t2"),
        ],
    )


# -- the query language ----------------------------------------------------------------------------------


def test_words_and_phrases_are_quoted_tokens():
    parsed = parse_query('deploy "exact  phrase" NEAR(x y) col:val *')
    assert parsed.terms == (("deploy",), ("exact", "phrase"), ("NEAR",), ("x",), ("y",), ("col",), ("val",))
    assert fts_match(parsed) == '"deploy" AND "exact phrase" AND "NEAR" AND "x" AND "y" AND "col" AND "val"'


def test_unclosed_quote_runs_to_the_end():
    assert parse_query('a "b c').terms == (("a",), ("b", "c"))


@pytest.mark.parametrize("query", ["", "   ", '""', "* ^ - :", "\x00\x01"])
def test_a_query_without_words_is_refused(query: str):
    with pytest.raises(QueryError):
        parse_query(query)


# -- ranking, phrases, filters ---------------------------------------------------------------------------


def test_a_phrase_match_outranks_scattered_words(home: Path):
    _plant_fleet(home)
    results = search(_reader(home), "restart the deploy server")
    assert [h.thread_id for h in results.hits] == ["t-phrase", "t-scattered"]
    assert [h.rank for h in results.hits] == [1, 2]
    best = results.hits[0]
    assert best.index == 0 and best.kind == "human"
    marked = [best.snippet[a:b] for a, b in best.marks]
    assert marked == ["restart the deploy server"]  # the phrase is marked as one
    scattered = results.hits[1]
    assert sorted(scattered.snippet[a:b] for a, b in scattered.marks) == [
        "deploy",
        "restart",
        "server",
        "the",
    ]


def test_an_exact_phrase_finds_only_the_adjacent_words(home: Path):
    _plant_fleet(home)
    results = search(_reader(home), '"deploy server"')
    assert [h.thread_id for h in results.hits] == ["t-phrase"]
    assert search(_reader(home), '"server deploy"').hits == ()


def test_tool_arguments_and_outputs_are_found_with_their_tool(home: Path):
    _plant_fleet(home)
    found = search(_reader(home), '"rm -rf"')
    assert [(h.thread_id, h.index, h.kind, h.tool) for h in found.hits] == [
        ("t-tools", 1, "tool-args", "Bash")
    ]
    assert "rm -rf /tmp/build" in found.hits[0].snippet
    build = search(_reader(home), "build")
    assert {(h.kind, h.tool) for h in build.hits} == {
        ("tool-args", "Bash"),
        ("tool", "Bash"),
        ("tool-args", "Read"),
        ("tool", "Read"),
    }
    only_read = search(_reader(home), "build", tool="read")
    assert {(h.index, h.tool) for h in only_read.hits} == {(3, "Read"), (4, "Read")}


def test_thread_filter(home: Path):
    _plant_fleet(home)
    assert {h.thread_id for h in search(_reader(home), "server").hits} == {"t-phrase", "t-scattered"}
    assert [h.thread_id for h in search(_reader(home), "server", thread="t-scattered").hits] == [
        "t-scattered"
    ]
    assert search(_reader(home), "server", thread="no-such-thread").hits == ()


def test_time_filter_uses_the_checkpoints_time(home: Path):
    _plant_fleet(home)
    reader = _reader(home)
    today = datetime.now(UTC).date()
    assert len(search(reader, "server", since=day_start(today), until=day_after(today)).hits) == 2
    assert search(reader, "server", since=day_start(today + timedelta(days=1))).hits == ()
    assert search(reader, "server", until=day_start(today)).hits == ()
    assert all(h.at is not None and h.at.date() == today for h in search(reader, "server").hits)


def test_limit_says_there_is_more(home: Path):
    db = home / "leon.db"
    for n in range(5):
        plant_thread(db, f"t{n}", _texts(f"needle number {n}", "ok"))
    results = search(_reader(home), "needle", limit=3)
    assert len(results.hits) == 3 and results.more
    assert not search(_reader(home), "needle", limit=5).more


def test_a_very_common_word_is_ranked_among_the_newest_matches(home: Path, monkeypatch: pytest.MonkeyPatch):
    db = home / "leon.db"
    # The oldest thread holds the best bm25 match (the word alone); four newer ones dilute it.
    plant_thread(db, "oldest", _texts("common", "x"))
    for n in range(4):
        plant_thread(db, f"newer{n}", _texts(f"common word among many other words number {n}", "x"))
    everything = search(_reader(home), "common")
    assert everything.hits[0].thread_id == "oldest" and everything.newest_only is None
    assert everything.notice is None

    monkeypatch.setattr(search_index, "COMMON_MATCHES", 3)
    memo.reset()
    bounded = search(_reader(home), "common")
    assert bounded.newest_only == 3
    assert {h.thread_id for h in bounded.hits} == {"newer1", "newer2", "newer3"}
    assert bounded.notice is not None and "newest 3" in bounded.notice
    # A filter that leaves few matches ranks them all again.
    alone = search(_reader(home), "common", thread="oldest")
    assert [h.thread_id for h in alone.hits] == ["oldest"] and alone.newest_only is None
    # Both passes (the whole query as a phrase, then its words) follow the rule: 4 documents match.
    monkeypatch.setattr(search_index, "COMMON_MATCHES", 4)
    phrase = search(_reader(home), "common word")
    assert phrase.newest_only is None and len(phrase.hits) == 4
    monkeypatch.setattr(search_index, "COMMON_MATCHES", 2)
    bounded_phrase = search(_reader(home), "common word")
    assert bounded_phrase.newest_only == 2
    assert {h.thread_id for h in bounded_phrase.hits} == {"newer2", "newer3"}


def test_ties_are_newest_first(home: Path):
    db = home / "leon.db"
    plant_thread(db, "older", _texts("same words here", "x"))
    plant_thread(db, "newer", _texts("same words here", "x"))
    assert [h.thread_id for h in search(_reader(home), "same words").hits] == ["newer", "older"]


def test_summaries_and_queued_items_are_found(home: Path):
    db = home / "leon.db"
    plant_thread(db, "t-sum", _texts("hello", "hi", "more", "sure"))
    add_summary(home / "summary.db", "t-sum", "s1", up_to=2, active=True, at="2026-01-02T03:04:05")
    with closing(sqlite3.connect(home / "queue.db")) as q:
        q.executescript(QUEUE_DDL)
        q.execute(
            "INSERT INTO message_queue (thread_id, content) VALUES ('t-sum', 'please also check zebra')"
        )
        q.commit()
    reader = _reader(home)
    summary = search(reader, "summary s1")
    assert [(h.thread_id, h.index, h.kind) for h in summary.hits] == [("t-sum", 2, "summary")]
    queued = search(reader, "zebra")
    assert [(h.thread_id, h.index, h.kind) for h in queued.hits] == [("t-sum", 4, "queue")]


# -- hostile queries -------------------------------------------------------------------------------------

HOSTILE_QUERIES = [
    'deploy" OR "x',
    '"unclosed',
    "NEAR(deploy server, 2)",
    "deploy*",
    "* OR *",
    "text:deploy",
    "-deploy",
    "^deploy",
    "{text} : deploy",
    "deploy AND NOT server",
    "deploy\x00server\x1b[31m",
    "deploy \ud800 server",
    "); DROP TABLE docs; --",
    "deploy " * 2_000,
    "x" * 10_000,
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES, ids=range(len(HOSTILE_QUERIES)))
def test_a_hostile_query_never_errors(home: Path, query: str):
    _plant_fleet(home)
    results = search(_reader(home), query)
    assert isinstance(results.hits, tuple)
    assert default_index(_reader(home)).document_count() > 0  # the index is still there


def test_hostile_query_words_are_searched_as_words(home: Path):
    _plant_fleet(home)
    assert [h.thread_id for h in search(_reader(home), "deploy*").hits] == ["t-phrase", "t-scattered"]
    assert search(_reader(home), "deploy AND NOT server").hits == ()  # "NOT" is a word no message has


# -- secrets ---------------------------------------------------------------------------------------------


def plant_secret_thread(home: Path) -> None:
    """A thread whose message, tool arguments and tool output carry planted secrets."""
    db = home / "leon.db"
    plant_thread(
        db,
        "t-secret",
        [
            HumanMessage(content=f"my key is {SECRET}, and password=hunter2hunter", id="h"),
            AIMessage(
                content="",
                id="a",
                tool_calls=[
                    {
                        "id": "c",
                        "name": "Http",
                        "args": {"url": "https://x.example", "api_key": "leak-arg-0001"},
                    }
                ],
            ),
            ToolMessage(
                content=f'{{"Authorization": "Bearer leak-bearer-0002", "token": "{SECRET}"}}',
                tool_call_id="c",
                name="Http",
                id="t",
            ),
        ],
    )


SECRET_NEEDLES = (SECRET, "PLANTED0secret0KEY", "hunter2hunter", "leak-arg-0001", "leak-bearer-0002")
SECRET_PROBES = (SECRET, "PLANTED0secret0KEY0abcdef123456", "hunter2hunter", "leak-arg-0001", "0001", "0002")


def test_no_planted_secret_reaches_the_index(home: Path):
    plant_secret_thread(home)
    reader = _reader(home)
    assert search(reader, "https").hits  # the rest of the call is indexed
    for probe in SECRET_PROBES:
        assert search(reader, probe).hits == (), probe
    index = default_index(reader)
    data = b"".join(p.read_bytes() for p in index.path.parent.glob(index.path.name + "*"))
    for needle in SECRET_NEEDLES:
        assert needle.encode() not in data, needle
        assert needle.lower().encode() not in data, needle


def test_an_index_made_under_an_older_redaction_rule_is_built_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
):
    from memory_core.app import search as engine
    from memory_core.search import documents
    from memory_core.stores import checkpoints

    nested = "nested0leak0value"  # a named secret inside another name's value: rule 1 let it through
    text = f'run it with {{"env": "X_API_KEY={nested}"}} please'
    plant_thread(home / "leon.db", "t-nested", [HumanMessage(content=text, id="h1")])
    with monkeypatch.context() as older:
        older.setattr(engine, "INDEXING_RULES", "1")
        older.setattr(documents, "clean_text", lambda t: t)  # the older rule, as far as this text goes
        older.setattr(checkpoints, "masked_texts", lambda v: v)  # and no mask at the border yet
        assert search(_reader(home), nested).hits  # the leak this fix is about
    index = default_index(_reader(home))
    assert nested.encode() in b"".join(p.read_bytes() for p in index.path.parent.glob(index.path.name + "*"))

    memo.reset()
    again = search(_reader(home), "please")
    assert again.hits and again.refresh.threads_updated == 1  # emptied, then built again
    assert search(_reader(home), nested).hits == ()
    data = b"".join(p.read_bytes() for p in index.path.parent.glob(index.path.name + "*"))
    assert nested.encode() not in data
    memo.reset()
    assert search(_reader(home), "please").refresh.threads_updated == 0  # once: the rule is now recorded


# -- incremental -----------------------------------------------------------------------------------------


def test_a_new_checkpoint_is_indexed_alone(home: Path):
    db = home / "leon.db"
    for n in range(4):
        build_thread(db, f"graph-{n}", turns=2)
    first = search(_reader(home), "turn")
    assert first.refresh.threads_updated == 4 and first.refresh.documents_added > 0
    assert search(_reader(home), "turn 3").hits == ()
    again = search(_reader(home), "turn")
    assert again.refresh.threads_updated == 0  # nothing moved: nothing read
    before = default_index(_reader(home)).document_count()

    build_thread(db, "graph-2", turns=1)  # the real graph: one more owner turn, its own checkpoints
    after = search(_reader(home), '"turn 1 please"', thread="graph-2")
    assert after.refresh.threads_updated == 1 and after.refresh.threads_reindexed == 0
    added = default_index(_reader(home)).document_count() - before
    assert added == after.refresh.documents_added
    # Only the new turn's messages: the owner message, the AI's calls and results, the answer.
    state = _reader(home).get_state("graph-2").value
    assert state is not None
    assert 0 < added < len(state.messages)
    new_indexes = {h.index for h in after.hits}
    assert max(new_indexes) >= len(state.messages) - added  # the new owner turn, at its index


def test_a_rollback_indexes_the_thread_again(home: Path):
    db = home / "leon.db"
    plant_thread(db, "t-roll", _texts("alpha first", "beta second", "gamma third", "delta fourth"))
    plant_thread(db, "t-other", _texts("alpha elsewhere", "fine"))
    reader = _reader(home)
    assert {h.thread_id for h in search(reader, "gamma").hits} == {"t-roll"}
    # A checkpoint holding only the first two messages and a different third: the head no longer holds
    # what was indexed.
    plant_thread(
        db,
        "t-roll",
        [*_texts("alpha first", "beta second"), HumanMessage(content="epsilon instead", id="new")],
    )
    rolled = search(_reader(home), "gamma")
    assert rolled.hits == ()
    assert rolled.refresh.threads_reindexed == 1 and rolled.refresh.threads_updated == 1
    assert [(h.thread_id, h.index) for h in search(_reader(home), "epsilon").hits] == [("t-roll", 2)]
    assert {h.thread_id for h in search(_reader(home), "alpha").hits} == {"t-roll", "t-other"}


def test_a_thread_gone_from_the_store_leaves_the_index(home: Path):
    db = home / "leon.db"
    plant_thread(db, "t-gone", _texts("walrus", "x"))
    assert search(_reader(home), "walrus").hits
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DELETE FROM checkpoints WHERE thread_id = 't-gone'")
        conn.execute("DELETE FROM writes WHERE thread_id = 't-gone'")
        conn.commit()
    gone = search(_reader(home), "walrus")
    assert gone.hits == () and gone.refresh.threads_removed == 1


def test_the_index_lives_outside_mycels_files(home: Path):
    _plant_fleet(home)
    reader = _reader(home)
    search(reader, "server")
    path = default_index(reader).path
    assert path.parent == home / "cache" and path.exists()
    with closing(sqlite3.connect(home / "leon.db")) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    assert not any("docs" in t or "search" in t for t in tables)


def test_an_unreadable_store_keeps_the_index_and_says_why(home: Path):
    db = home / "leon.db"
    plant_thread(db, "t-kept", _texts("narwhal", "x"))
    assert search(_reader(home), "narwhal").hits
    for side in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        side.unlink(missing_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    memo.reset()
    damaged = search(_reader(home), "narwhal")
    assert [h.thread_id for h in damaged.hits] == ["t-kept"]  # what was indexed is still found
    assert damaged.problems and damaged.refresh.threads_removed == 0


def test_a_rollback_indexes_the_summaries_again(home: Path):
    db = home / "leon.db"
    plant_thread(db, "t-s", _texts("one", "two", "three", "four"))
    add_summary(home / "summary.db", "t-s", "s9", up_to=2, active=True, at="2026-01-02T03:04:05")
    assert [h.kind for h in search(_reader(home), "s9").hits] == ["summary"]
    plant_thread(db, "t-s", _texts("one"))  # fewer messages: not a descendant of what was indexed
    again = search(_reader(home), "s9")
    assert again.refresh.threads_reindexed == 1
    assert [h.kind for h in again.hits] == ["summary"]  # indexed again, once


def test_a_common_query_still_ranks_its_phrase_matches_first(home: Path, monkeypatch: pytest.MonkeyPatch):
    db = home / "leon.db"
    plant_thread(db, "scattered-old", _texts("beta x alpha", "x"))
    plant_thread(db, "phrase", _texts("alpha beta gamma delta epsilon zeta", "x"))
    plant_thread(db, "scattered-new", _texts("beta alpha", "x"))  # the better bm25: short
    monkeypatch.setattr(search_index, "COMMON_MATCHES", 2)
    found = search(_reader(home), "alpha beta")
    assert found.newest_only == 2
    assert [h.thread_id for h in found.hits] == ["phrase", "scattered-new"]

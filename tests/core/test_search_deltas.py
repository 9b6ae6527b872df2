"""The search index grows from new checkpoints' `messages` writes (message_deltas.py) without decoding the
new head, and falls back to the head decode whenever the writes cannot say it exactly; either way the
index equals one rebuilt from scratch. Threads are played by LangGraph's real graph and SqliteSaver."""

from __future__ import annotations

import itertools
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send

from memory_core import memo
from memory_core.app.search import default_index, rebuild_index, search
from memory_core.messages import Message
from memory_core.stores.checkpoints import decode_checkpoint
from memory_core.stores.decode import decode_metadata
from memory_core.stores.message_deltas import MessagesSince, messages_since
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite.search_index import SearchIndex
from memory_core.stores.thread_list import listing
from tests.core.store_builders import point_locations
from tests.core.test_search import SECRET

LEAKS = (SECRET, "PLANTED0secret0KEY", "hunter2hunter", "leak-bearer-0002")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "mycel"
    folder.mkdir()
    memo.reset()
    return folder


def _reader(home: Path) -> MycelReader:
    return MycelReader(point_locations(home), facts_folder=home / "cache")


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _agent_graph(*, parallel: int, body: Callable[[str], str] | None, ids: bool = False) -> Any:
    """An agent that calls Bash `parallel` times per owner turn, then answers. As Mycel does, its AI
    answers and ToolMessages carry no id (add_messages gives each a uuid, which its write may or may not
    hold); with `ids` every message carries one."""

    def mark(made: str) -> str | None:
        return made if ids else None

    def agent(state: _State) -> dict[str, Any]:
        turn = sum(1 for m in state["messages"] if m.type == "human")
        tag = f"{len(state['messages'])}-{turn}"
        if state["messages"][-1].type == "human":
            calls = [
                {
                    "name": "Bash",
                    "args": {"command": f"echo {turn}-{k}"},
                    "id": f"call_{tag}_{k}",
                    "type": "tool_call",
                }
                for k in range(parallel)
            ]
            return {
                "messages": [AIMessage(content=f"running {parallel}", tool_calls=calls, id=mark(f"ai-{tag}"))]
            }
        return {"messages": [AIMessage(content=f"done with turn {turn}", id=mark(f"ai-{tag}"))]}

    def route(state: _State) -> Any:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return [Send("tool", {"call": call}) for call in last.tool_calls]
        return END

    def tool(payload: dict[str, Any]) -> dict[str, Any]:
        call = payload["call"]
        text = body(call["id"]) if body else f"{call['id']} output line"
        return {
            "messages": [
                ToolMessage(content=text, tool_call_id=call["id"], name="Bash", id=mark(f"t-{call['id']}"))
            ]
        }

    builder = StateGraph(_State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder


@contextmanager
def _graph_on(
    home: Path,
    thread_id: str,
    *,
    parallel: int = 1,
    body: Callable[[str], str] | None = None,
    ids: bool = False,
) -> Iterator[tuple[Any, Any]]:
    with closing(sqlite3.connect(home / "leon.db", check_same_thread=False)) as conn:
        graph = _agent_graph(parallel=parallel, body=body, ids=ids).compile(checkpointer=SqliteSaver(conn))
        yield graph, {"configurable": {"thread_id": thread_id}}


def _play(home: Path, thread_id: str, turns: range, *, ids: bool = False, parallel: int = 1) -> None:
    """Owner turns through the real graph, written as Mycel main writes them: the owner's input a raw
    `{"role": "user"}` dict and no message with an id (add_messages gives each a fresh uuid that no write
    need hold); with `ids` every message, the owner's too, carries its id."""
    with _graph_on(home, thread_id, parallel=parallel, ids=ids) as (graph, config):
        for turn in turns:
            text = f"turn {turn} asks about walrus{turn}"
            message: Any = (
                HumanMessage(content=text, id=f"{thread_id}-h{turn}")
                if ids
                else {"role": "user", "content": text}
            )
            graph.invoke({"messages": [message]}, config)


@pytest.fixture
def head_decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every head payload the refresh decodes (the head path's one decoder)."""
    seen: list[str] = []
    real = listing.decode_checkpoint

    def counting(kind: Any, blob: Any, **kw: Any) -> Any:
        seen.append(kind)
        return real(kind, blob, **kw)

    monkeypatch.setattr(listing, "decode_checkpoint", counting)
    return seen


def _contents(index: SearchIndex) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Every document (thread, index, kind, tool, text) and every thread's kept state, sorted."""
    with closing(sqlite3.connect(index.path)) as db:
        docs = db.execute(
            "SELECT e.thread_id, e.idx, e.kind, e.tool, d.text FROM entries e JOIN docs d ON d.rowid = e.id"
        ).fetchall()
        threads = db.execute(
            "SELECT thread_id, head, messages, ids_digest, summaries FROM threads"
        ).fetchall()
    return sorted(docs), sorted(threads)


def _assert_equals_rebuild(home: Path) -> None:
    grown = default_index(_reader(home))
    assert isinstance(grown, SearchIndex)
    fresh = SearchIndex(home / "rebuilt.sqlite3")
    rebuild_index(_reader(home), fresh)
    assert _contents(grown) == _contents(fresh)


def _index_now(home: Path, query: str = "walrus1") -> Any:
    return search(_reader(home), query).refresh


def test_new_turns_with_ids_are_indexed_from_their_writes_alone(home: Path, head_decodes: list[str]):
    _play(home, "long", range(1, 3), ids=True)
    _play(home, "other", range(1, 2), ids=True)
    first = _index_now(home)
    assert first.threads_updated == 2 and first.threads_from_deltas == 0  # new threads: heads decoded
    assert len(head_decodes) == 2
    head_decodes.clear()

    indexed = _contents(default_index(_reader(home)))[1]
    h0, n = next((head, count) for thread, head, count, *_ in indexed if thread == "long")
    _play(home, "long", range(3, 6), ids=True)  # three more turns: many checkpoints, each step's writes
    state = _reader(home).get_state("long").value
    assert state is not None
    h1 = state.checkpoint.checkpoint_id
    appended = _reader(home).messages_since([MessagesSince("long", h0, h1, n, len(state.messages))])
    found = appended.value["long"]
    assert found is not None and found.start == n
    assert found.messages == state.messages[n:]  # the very Messages a head decode gives, redacted alike
    head_decodes.clear()
    grown = _index_now(home, "walrus5")
    assert grown.threads_updated == 1 and grown.threads_from_deltas == 1 and grown.threads_reindexed == 0
    assert head_decodes == []  # the new head's payload was never decoded
    hits = search(_reader(home), "walrus5").hits
    assert [(h.thread_id, h.index) for h in hits] == [
        ("long", next(i for i, m in enumerate(state.messages) if "walrus5" in m.text))
    ]
    _assert_equals_rebuild(home)
    # Then a turn in Mycel's shape (no ids) extends the same chain.
    _play(home, "long", range(6, 7))
    head_decodes.clear()  # the rebuild above decoded every head
    again = _index_now(home, "walrus6")
    assert again.threads_from_deltas == 1 and again.threads_reindexed == 0 and again.threads_updated == 1
    assert head_decodes == []
    _assert_equals_rebuild(home)


def _without_ids(messages: Any) -> list[Message]:
    return [replace(m, id=None) for m in messages]


def test_mycel_shaped_turns_grow_from_their_writes_with_no_head_decoded(home: Path, head_decodes: list[str]):
    """The owner's input a raw role dict, AI answers and ToolMessages without ids: each new turn is read
    from its writes, gives the head's very Messages but their ids, and the index equals a rebuild."""
    _play(home, "t", range(1, 2))
    assert _index_now(home).threads_from_deltas == 0  # new to the index: its head decoded once
    for turn in range(2, 5):
        indexed = _contents(default_index(_reader(home)))[1]
        h0, n = next((head, count) for thread, head, count, *_ in indexed if thread == "t")
        _play(home, "t", range(turn, turn + 1))
        state = _reader(home).get_state("t").value
        assert state is not None
        asked = MessagesSince("t", h0, state.checkpoint.checkpoint_id, n, len(state.messages))
        found = _reader(home).messages_since([asked]).value["t"]
        assert found is not None and found.start == n
        assert found.messages[0].id is None  # the owner's input: no write holds the uuid it was given
        assert _without_ids(found.messages) == _without_ids(state.messages[n:])
        # Where a write holds an id (the serialisation raced add_messages), it is the head's.
        assert all(m.id in (None, h.id) for m, h in zip(found.messages, state.messages[n:], strict=True))
        head_decodes.clear()
        refresh = _index_now(home, f"walrus{turn}")
        assert (refresh.threads_updated, refresh.threads_from_deltas, refresh.threads_reindexed) == (1, 1, 0)
        assert head_decodes == []
        hits = search(_reader(home), f"walrus{turn}").hits
        assert [(h.thread_id, h.index) for h in hits] == [("t", n)]
    # A turn of parallel tool tasks is read from its head, which holds the chain the writes built.
    _play(home, "t", range(5, 6), parallel=2)
    refresh = _index_now(home, "walrus5")
    assert (refresh.threads_from_deltas, refresh.threads_reindexed) == (0, 0)
    _assert_equals_rebuild(home)  # the kept digests too: the writes' chain is the head's


_EVERY_FORM: list[Any] = [
    "a bare string about walrus7",
    {"role": "system", "content": "system walrus7"},
    {"role": "developer", "content": "developer walrus7"},
    {"role": "human", "content": [{"type": "text", "text": "block walrus7"}, "tail"]},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"name": "Grep", "args": {"pattern": "walrus7"}, "id": "call-g"}],
    },
    {"role": "tool", "content": "grep walrus7 output", "tool_call_id": "call-g", "name": "Grep"},
    {"type": "ai", "content": "typed dict walrus7", "id": "typed-ai"},
    HumanMessage(content="an id-less HumanMessage walrus7"),
    {"role": "user", "content": "walrus7 last"},
]


def test_every_form_add_messages_converts_gives_the_heads_messages(home: Path, head_decodes: list[str]):
    _play(home, "t", range(1, 2))
    _index_now(home)
    indexed = _contents(default_index(_reader(home)))[1]
    h0, n = next((head, count) for thread, head, count, *_ in indexed if thread == "t")
    with _graph_on(home, "t") as (graph, config):
        graph.invoke({"messages": _EVERY_FORM}, config)
    state = _reader(home).get_state("t").value
    assert state is not None
    asked = MessagesSince("t", h0, state.checkpoint.checkpoint_id, n, len(state.messages))
    found = _reader(home).messages_since([asked]).value["t"]
    assert found is not None
    assert _without_ids(found.messages) == _without_ids(state.messages[n:])
    assert found.messages[6].id == "typed-ai"
    head_decodes.clear()
    refresh = _index_now(home, "walrus7")
    assert refresh.threads_from_deltas == 1 and head_decodes == []
    _assert_equals_rebuild(home)


@pytest.mark.parametrize(
    "odd",
    [
        AIMessageChunk(content="a chunk walrus7"),  # add_messages turns it into an AIMessage
        {"role": "function", "content": "walrus7", "name": "f"},  # a FunctionMessage: not one of the four
        {"role": "user", "content": "walrus7", "example": True},  # a key that becomes a field
    ],
    ids=["chunk", "function-role", "extra-key"],
)
def test_what_cannot_be_said_exactly_falls_back(home: Path, odd: Any):
    _play(home, "t", range(1, 2))
    _index_now(home)
    with _graph_on(home, "t") as (graph, config):
        graph.invoke({"messages": [odd]}, config)
    refresh = _index_now(home, "walrus7")
    assert refresh.threads_from_deltas == 0 and refresh.threads_reindexed == 0
    assert search(_reader(home), "walrus7").hits
    _assert_equals_rebuild(home)


def test_parallel_tasks_in_one_step_fall_back(home: Path):
    _play(home, "t", range(1, 2))
    _index_now(home)
    _play(home, "t", range(2, 3), parallel=2)  # two tool tasks in one step: their order is a guess
    assert _index_now(home, "walrus2").threads_from_deltas == 0
    _assert_equals_rebuild(home)


def test_a_replaced_message_falls_back(home: Path):
    _play(home, "t", range(1, 3))
    _index_now(home)
    with _graph_on(home, "t") as (graph, config):
        first_ai = next(m for m in graph.get_state(config).values["messages"] if m.type == "ai")
        graph.update_state(config, {"messages": [AIMessage(content="rewritten zebra", id=first_ai.id)]})
    _play(home, "t", range(3, 4))
    refresh = _index_now(home, "zebra")
    assert refresh.threads_from_deltas == 0
    assert search(_reader(home), "zebra").hits  # the head decode saw the replacement
    _assert_equals_rebuild(home)


def test_a_removed_message_falls_back(home: Path):
    _play(home, "t", range(1, 3))
    _index_now(home)
    with _graph_on(home, "t") as (graph, config):
        first_tool = next(m for m in graph.get_state(config).values["messages"] if m.type == "tool")
        graph.update_state(config, {"messages": [RemoveMessage(id=first_tool.id)]})
    _play(home, "t", range(3, 4))
    refresh = _index_now(home, "walrus3")
    assert refresh.threads_from_deltas == 0 and refresh.threads_reindexed == 1
    _assert_equals_rebuild(home)


def test_a_rollback_falls_back(home: Path):
    _play(home, "t", range(1, 4))
    with closing(sqlite3.connect(home / "leon.db")) as db:
        ids = [r[0] for r in db.execute("SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id")]
    _index_now(home)
    keep_up_to = ids[len(ids) // 2]
    with closing(sqlite3.connect(home / "leon.db")) as db:  # Mycel's rollback: newer checkpoints deleted
        db.execute("DELETE FROM checkpoints WHERE checkpoint_id > ?", (keep_up_to,))
        db.execute("DELETE FROM writes WHERE checkpoint_id >= ?", (keep_up_to,))
        db.commit()
    _play(home, "t", range(9, 10))
    refresh = _index_now(home, "walrus9")
    assert refresh.threads_from_deltas == 0 and refresh.threads_reindexed == 1
    _assert_equals_rebuild(home)


def test_parent_ids_that_loop_end_the_walk_and_fall_back(home: Path):
    def checkpoint_ids() -> list[str]:
        with closing(sqlite3.connect(home / "leon.db")) as db:
            return [r[0] for r in db.execute("SELECT checkpoint_id FROM checkpoints ORDER BY checkpoint_id")]

    _play(home, "t", range(1, 3))
    _index_now(home)
    indexed = set(checkpoint_ids())
    _play(home, "t", range(3, 4))
    new = [c for c in checkpoint_ids() if c not in indexed]
    with closing(
        sqlite3.connect(home / "leon.db")
    ) as db:  # damaged: the new turn's first step names the head
        db.execute(
            "UPDATE checkpoints SET parent_checkpoint_id = ? WHERE checkpoint_id = ?", (new[-1], new[0])
        )
        db.commit()
    refresh = _index_now(home, "walrus3")  # the walk from the head back to the indexed one loops, and ends
    assert refresh.threads_from_deltas == 0 and refresh.threads_updated == 1
    _assert_equals_rebuild(home)


def test_a_fork_falls_back(home: Path):
    _play(home, "t", range(1, 3))
    with _graph_on(home, "t") as (graph, config):
        older = list(graph.get_state_history(config))[4].config
    _index_now(home)
    with _graph_on(home, "t") as (graph, config):
        forked = graph.update_state(older, {"messages": [HumanMessage(content="a forked walrus7", id="fk")]})
        graph.invoke(None, forked)
    refresh = _index_now(home, "walrus7")
    assert refresh.threads_from_deltas == 0 and refresh.threads_reindexed == 1
    _assert_equals_rebuild(home)


def test_no_planted_secret_reaches_the_index_from_writes(home: Path):
    _play(home, "t", range(1, 2))
    _index_now(home)
    leaky = f'{{"Authorization": "Bearer leak-bearer-0002", "token": "{SECRET}"}}'
    with _graph_on(home, "t", body=lambda _call_id: leaky) as (graph, config):
        # Mycel's id-less input dict, carrying the secrets.
        message = {"role": "user", "content": f"my key is {SECRET}, and password=hunter2hunter"}
        graph.invoke({"messages": [message]}, config)
    refresh = _index_now(home, "key")
    assert refresh.threads_from_deltas == 1  # the secrets came in through the writes
    assert search(_reader(home), "Authorization").hits  # the rest of the output is indexed
    for probe in (SECRET, "hunter2hunter", "leak-bearer-0002", "0002"):
        assert search(_reader(home), probe).hits == (), probe
    index = default_index(_reader(home))
    data = b"".join(p.read_bytes() for p in index.path.parent.glob(index.path.name + "*"))
    for needle in LEAKS:
        assert needle.encode() not in data and needle.lower().encode() not in data, needle


def test_an_unreleased_chain_digest_is_unknown_indexed_again_once(home: Path):
    _play(home, "t", range(1, 3))
    _index_now(home)
    index = default_index(_reader(home))
    with closing(sqlite3.connect(index.path)) as db:  # the id-based chain of an unreleased build
        db.execute("UPDATE threads SET ids_digest = 'c:00112233445566778899aabb'")
        db.commit()
    memo.reset()
    _play(home, "t", range(3, 4))
    refresh = _index_now(home, "walrus3")
    assert refresh.threads_from_deltas == 0 and refresh.threads_reindexed == 1
    _play(home, "t", range(4, 5))
    assert _index_now(home, "walrus4").threads_from_deltas == 1
    _assert_equals_rebuild(home)


def test_the_sample_homes_own_turns_and_one_more_come_from_their_writes(
    sample_home: Path, head_decodes: list[str]
):
    """Mycel's own code wrote the sample home: each owner turn there (an update_state of the owner's
    input, then the loop) is read from its writes unless a step ran parallel tool tasks; and a turn
    appended as Mycel does is indexed from its writes, equal to a rebuild."""
    memo.reset()
    reader = _reader(sample_home)
    turns = Counter[bool]()
    with closing(sqlite3.connect(sample_home / "leon.db")) as db:
        sources = {
            c: decode_metadata(m).get("source")
            for c, m in db.execute("SELECT checkpoint_id, metadata FROM checkpoints")
        }
    for row in reader.list_threads().value:
        with reader.backend.checkpoints(row.thread_id, []) as snapshot:
            assert snapshot is not None
            metas = snapshot.skeleton()
            ends = [m.parent_checkpoint_id for m in metas if sources[m.checkpoint_id] == "update"]
            ends = [e for e in ends if e is not None] + [metas[-1].checkpoint_id]
            held = {e: decode_checkpoint(*snapshot.payload(e)).messages for e in ends}
            for since, head in itertools.pairwise(ends):
                ask = MessagesSince(row.thread_id, since, head, len(held[since]), len(held[head]))
                found = messages_since(snapshot, ask)
                if found is not None:
                    assert _without_ids(found.messages) == _without_ids(held[head][len(held[since]) :])
                tasks = {(w.checkpoint_id, w.task_id) for w in snapshot.message_writes() or []}
                path_parallel = any(
                    sum(1 for c, _t in tasks if c == m.checkpoint_id) > 1
                    for m in metas
                    if since <= m.checkpoint_id < head
                )
                assert (found is None) == path_parallel, (row.thread_id, since)
                turns[found is not None] += 1
    assert turns == Counter({True: 13, False: 2})  # the two misses ran parallel tool tasks

    _index_now(sample_home)
    thread_id = "m_0D8EzdJXJhk9-2"
    _play(sample_home, thread_id, range(7, 8))  # the owner's raw dict input, id-less answers
    head_decodes.clear()
    refresh = _index_now(sample_home, "walrus7")
    assert (refresh.threads_updated, refresh.threads_from_deltas, refresh.threads_reindexed) == (1, 1, 0)
    assert head_decodes == []
    assert [h.thread_id for h in search(_reader(sample_home), "walrus7").hits] == [thread_id]
    _assert_equals_rebuild(sample_home)

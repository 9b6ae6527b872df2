"""Search benchmark, the long thread: one new turn on a 2,000-message thread written by LangGraph's real
graph and SqliteSaver (so every step has its `messages` writes), in Mycel's shape (the owner's input a raw
role dict, the answer without an id), indexed from the new steps' writes and, from the same index state,
by decoding the new head; both in the same run, with their ratio, and the share of moved threads that took
the writes' path. Also the index digest's own cost over 50,000 messages (the first index pays it once).

Run: .venv/bin/python tests/benchmarks/bench_search_long.py   (not collected by pytest). The thread is
built again under var/bench/search-long/ on each run.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from statistics import median
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from langchain_core.messages import AIMessage, AnyMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402

from memory_core import memo  # noqa: E402
from memory_core.app.search import rebuild_index, search  # noqa: E402
from memory_core.stores.message_deltas import MessagesSince  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.benchmarks.bench_search import _messages, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

LONG_MESSAGES = 2_000


def _echo_graph(saver: SqliteSaver) -> Any:
    """One node answering each owner message (no id, as Mycel's model answers): a turn is two checkpoints
    and two `messages` writes."""

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    def agent(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"noted {n}")]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=saver)


def long_thread() -> None:
    """One new turn on a 2,000-message thread (written by the real graph and SqliteSaver, so every step
    has its writes): indexed from the writes, and by decoding the head, from the same index state."""
    from memory_core.stores import reader as reader_module
    from memory_core.stores.sqlite.search_index import SearchIndex

    folder = ROOT / "var" / "bench" / "search-long"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    config = {"configurable": {"thread_id": "long"}}
    with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
        graph = _echo_graph(SqliteSaver(conn))
        graph.invoke({"messages": _messages(random.Random(7), LONG_MESSAGES - 2, 0)}, config)

    def reader() -> MycelReader:
        return MycelReader(point_locations(folder), facts_folder=folder / "cache")

    base = folder / "base-index.sqlite3"
    rebuild_index(reader(), SearchIndex(base))
    head_bytes = reader().list_threads().value[0].bytes_on_disk
    by_deltas: list[float] = []
    by_head: list[float] = []
    moved = from_deltas = 0
    real = reader_module.MycelReader.messages_since
    for round_ in range(3):
        with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
            _echo_graph(SqliteSaver(conn)).invoke(
                {"messages": [{"role": "user", "content": f"quokka{round_} new turn"}]}, config
            )
        for way, times in (("head", by_head), ("deltas", by_deltas)):
            index = folder / f"{way}-index.sqlite3"
            shutil.copyfile(base, index)  # both from the same indexed state
            if way == "head":
                reader_module.MycelReader.messages_since = lambda self, asks: reader_module.Result({})  # type: ignore[method-assign]
            memo.reset()
            seconds, found = timed(
                lambda i=index, r=round_: search(reader(), f"quokka{r}", index=SearchIndex(i))
            )
            reader_module.MycelReader.messages_since = real  # type: ignore[method-assign]
            assert [h.thread_id for h in found.hits] == ["long"], found.hits
            assert found.refresh.threads_from_deltas == (1 if way == "deltas" else 0), found.refresh
            times.append(seconds)
            if way == "deltas":
                moved += found.refresh.threads_updated
                from_deltas += found.refresh.threads_from_deltas
        shutil.copyfile(folder / "deltas-index.sqlite3", base)
    print(
        f"one new turn (2 checkpoints, 2 messages) on a {LONG_MESSAGES:,}-message thread "
        f"({head_bytes / 1e6:.0f} MB on disk), then the search that finds it: from its writes "
        + ", ".join(f"{t * 1000:.0f} ms" for t in by_deltas)
        + "; by decoding the head "
        + ", ".join(f"{t * 1000:.0f} ms" for t in by_head)
        + f": {median(by_head) / median(by_deltas):.1f}x (medians); moved threads from their writes: "
        f"{from_deltas} of {moved}"
    )
    # The part that differs, alone: the new messages read from the writes, or the head read and decoded.
    with closing(sqlite3.connect(base)) as db:
        h0, n = db.execute("SELECT head, messages FROM threads WHERE thread_id = 'long'").fetchone()
    with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
        _echo_graph(SqliteSaver(conn)).invoke({"messages": [{"role": "user", "content": "last"}]}, config)
    row = reader().list_threads().value[0]
    ask = [MessagesSince("long", h0, str(row.head_checkpoint_id), n, row.messages)]
    read_writes = median(timed(lambda: reader().messages_since(ask))[0] for _ in range(5))
    assert reader().messages_since(ask).value["long"] is not None
    read_head = median(timed(lambda: list(reader().head_messages([row], [])))[0] for _ in range(5))
    print(
        f"  the new messages alone: from the writes {read_writes * 1000:.1f} ms, the head read and decoded "
        f"{read_head * 1000:.1f} ms: {read_head / read_writes:.0f}x (medians of 5)"
    )


def digest_cost() -> None:
    """The index digest over 50,000 messages (the bench's mix): each link hashes what is indexed of a
    message, so the head path and the writes agree without ids."""
    from memory_core.app.search import _content_digest
    from memory_core.stores.checkpoints import message_from_plain

    plain = [m.model_dump() for m in _messages(random.Random(3), 50_000, 0)]
    messages = [message_from_plain(m) for m in plain]
    seconds = median(timed(lambda: _content_digest(messages))[0] for _ in range(3))
    print(f"index digest of 50,000 messages: {seconds * 1000:.0f} ms (median of 3)")


if __name__ == "__main__":
    long_thread()
    digest_cost()

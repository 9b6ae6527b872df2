"""Search benchmark, the long thread: one new turn on a 2,000-message thread written by LangGraph's real
graph and SqliteSaver (so every step has its `messages` writes), indexed from the new steps' writes and,
from the same index state, by decoding the new head; both in the same run, with their ratio.

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

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import add_messages  # noqa: E402

from memory_core import memo  # noqa: E402
from memory_core.search.engine import rebuild_index, search  # noqa: E402
from memory_core.stores.message_deltas import MessagesSince  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.benchmarks.bench_search import _messages, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

LONG_MESSAGES = 2_000


def _echo_graph(saver: SqliteSaver) -> Any:
    """One node answering each owner message: a turn is two checkpoints and two `messages` writes."""

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], add_messages]

    def agent(state: State) -> dict[str, Any]:
        n = len(state["messages"])
        return {"messages": [AIMessage(content=f"noted {n}", id=f"echo-{n}")]}

    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    return builder.compile(checkpointer=saver)


def long_thread() -> None:
    """One new turn on a 2,000-message thread (written by the real graph and SqliteSaver, so every step
    has its writes): indexed from the writes, and by decoding the head, from the same index state."""
    from memory_core.stores import reader as reader_module
    from memory_core.stores.search_index import SearchIndex

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
    real = reader_module.MycelReader.messages_since
    for round_ in range(3):
        with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
            _echo_graph(SqliteSaver(conn)).invoke(
                {"messages": [HumanMessage(content=f"quokka{round_} new turn", id=f"q{round_}")]}, config
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
        shutil.copyfile(folder / "deltas-index.sqlite3", base)
    print(
        f"one new turn (2 checkpoints, 2 messages) on a {LONG_MESSAGES:,}-message thread "
        f"({head_bytes / 1e6:.0f} MB on disk), then the search that finds it: from its writes "
        + ", ".join(f"{t * 1000:.0f} ms" for t in by_deltas)
        + "; by decoding the head "
        + ", ".join(f"{t * 1000:.0f} ms" for t in by_head)
        + f": {median(by_head) / median(by_deltas):.1f}x (medians)"
    )
    # The part that differs, alone: the new messages read from the writes, or the head read and decoded.
    with closing(sqlite3.connect(base)) as db:
        h0, n = db.execute("SELECT head, messages FROM threads WHERE thread_id = 'long'").fetchone()
    with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
        _echo_graph(SqliteSaver(conn)).invoke({"messages": [HumanMessage(content="last", id="last")]}, config)
    row = reader().list_threads().value[0]
    ask = [MessagesSince("long", h0, str(row.head_checkpoint_id), n, row.messages)]
    read_writes = median(timed(lambda: reader().messages_since(ask))[0] for _ in range(5))
    assert reader().messages_since(ask).value["long"] is not None
    read_head = median(timed(lambda: list(reader().head_messages([row], [])))[0] for _ in range(5))
    print(
        f"  the new messages alone: from the writes {read_writes * 1000:.1f} ms, the head read and decoded "
        f"{read_head * 1000:.1f} ms: {read_head / read_writes:.0f}x (medians of 5)"
    )


if __name__ == "__main__":
    long_thread()

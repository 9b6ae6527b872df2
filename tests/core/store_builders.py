"""Hand-built Mycel stores for the reader tests, written by LangGraph's real SqliteSaver and real graphs.

`build_thread` drives a small StateGraph (an "agent" node that makes parallel tool calls through Send,
a "tool" node per call) with the real saver, so checkpoints and writes are exactly LangGraph's.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, RemoveMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Send

from memory_core.demo.tables import SummaryEntry, write_summaries
from memory_core.stores.locations import MycelLocations, resolve_locations

PLANTED_SECRETS: dict[str, str] = {
    "api_key": "sk-PLANTED-api-key-0001",
    "OPENAI_API_KEY": "sk-PLANTED-openai-0002",
    "access_token": "PLANTED-access-token-0003",
    "Authorization": "Bearer PLANTED-authorization-0004",
    "client_secret": "PLANTED-client-secret-0005",
    "password": "PLANTED-password-0006",
    "x-api-key": "PLANTED-x-api-key-0007",
}

WRITES_WITH_TASK_PATH = """
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
"""


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _graph(*, parallel: int, tool_chars: int, body: Callable[[str], str] | None = None) -> StateGraph[Any]:
    def agent(state: _State) -> dict[str, Any]:
        last = state["messages"][-1]
        turn = sum(1 for m in state["messages"] if m.type == "human")
        usage = {"input_tokens": 40 * len(state["messages"]), "output_tokens": 9, "total_tokens": 0}
        if last.type == "human":
            calls = [
                {
                    "name": "Bash",
                    "args": {"command": f"echo {turn}-{k}"},
                    "id": f"call_{turn}_{k}",
                    "type": "tool_call",
                }
                for k in range(parallel)
            ]
            return {
                "messages": [
                    AIMessage(content=f"running {parallel} tools", tool_calls=calls, usage_metadata=usage)
                ]
            }
        return {"messages": [AIMessage(content=f"done with turn {turn}", usage_metadata=usage)]}

    def route(state: _State) -> Any:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return [Send("tool", {"call": call}) for call in last.tool_calls]
        return END

    def tool(payload: dict[str, Any]) -> dict[str, Any]:
        call = payload["call"]
        text = (
            body(call["id"])
            if body
            else (f"{call['id']} output line\n" * (tool_chars // 20 + 1))[:tool_chars]
        )
        return {"messages": [ToolMessage(content=text, tool_call_id=call["id"], name="Bash")]}

    builder = StateGraph(_State)
    builder.add_node("agent", agent)
    builder.add_node("tool", tool)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tool", END])
    builder.add_edge("tool", "agent")
    return builder


def build_thread(
    db: Path | str,
    thread_id: str,
    *,
    turns: int = 3,
    parallel: int = 2,
    tool_chars: int = 300,
    configurable: Mapping[str, Any] | None = None,
    task_path_layout: bool = False,
    fork_after_turn: int | None = None,
    remove_first_tool_result: bool = False,
    body: Callable[[str], str] | None = None,
) -> None:
    """Play `turns` owner turns on one thread in `db` with the real SqliteSaver (our own test file), or, given
    a PostgreSQL URL, with the real PostgresSaver (main's layout; it creates its tables as Mycel does)."""
    if isinstance(db, str):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(db) as postgres:
            postgres.setup()
            _play(postgres, thread_id, turns, parallel, tool_chars, body, configurable)
        return
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        if task_path_layout:
            conn.executescript(WRITES_WITH_TASK_PATH)
        saver = SqliteSaver(conn)
        graph = _graph(parallel=parallel, tool_chars=tool_chars, body=body).compile(checkpointer=saver)
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, **(configurable or {})}}
        fork_from = None
        for turn in range(1, turns + 1):
            # Mycel's first input write is the raw dict, before LangChain coerces it (reference §2.1).
            graph.invoke({"messages": [{"role": "user", "content": f"turn {turn} please"}]}, config)
            if fork_after_turn == turn:
                fork_from = graph.get_state(config).config
        if fork_from is not None:
            forked = graph.update_state(
                fork_from, {"messages": [HumanMessage(content="a different question")]}
            )
            graph.invoke(None, {"configurable": {**config["configurable"], **forked["configurable"]}})
        if remove_first_tool_result:
            state = graph.get_state(config)
            first_tool = next(m for m in state.values["messages"] if m.type == "tool")
            graph.update_state(config, {"messages": [RemoveMessage(id=first_tool.id)]})
            graph.invoke({"messages": [{"role": "user", "content": "after the removal"}]}, config)
        if task_path_layout:
            # A newer saver records each task's path; derive a stable one so ordering by it is exercised.
            conn.execute("UPDATE writes SET task_path = '~' || task_id WHERE thread_id = ?", (thread_id,))
            conn.commit()


def _play(
    saver: Any,
    thread_id: str,
    turns: int,
    parallel: int,
    tool_chars: int,
    body: Callable[[str], str] | None,
    configurable: Mapping[str, Any] | None,
) -> None:
    graph = _graph(parallel=parallel, tool_chars=tool_chars, body=body).compile(checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id, **(configurable or {})}}
    for turn in range(1, turns + 1):
        graph.invoke({"messages": [{"role": "user", "content": f"turn {turn} please"}]}, config)


def point_locations(folder: Path) -> MycelLocations:
    return resolve_locations(
        {
            "HOME": str(folder.parent),
            "LEON_DB_PATH": str(folder / "leon.db"),
            "LEON_SANDBOX_DB_PATH": str(folder / "sandbox.db"),
            "LEON_QUEUE_DB_PATH": str(folder / "queue.db"),
            "MYCEL_CONFIG_HOME": str(folder),
        }
    )


def file_hashes(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` except SQLite's -wal/-shm side files."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


# A leonai-era queue.db after Mycel's migration: both sender_entity_id and sender_id (reference §2; the
# demo's QUEUE_DDL is a fresh Mycel's, with sender_id only).
QUEUE_BOTH_SENDERS_DDL = """
CREATE TABLE IF NOT EXISTS message_queue (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id         TEXT NOT NULL,
  content           TEXT NOT NULL,
  notification_type TEXT NOT NULL DEFAULT 'steer',
  source            TEXT,
  sender_entity_id  TEXT,
  sender_name       TEXT,
  created_at        TEXT DEFAULT (datetime('now')),
  sender_id         TEXT
);
"""


def add_summary(db: Path, thread_id: str, summary_id: str, *, up_to: int, active: bool, at: str) -> None:
    """One `summaries` row in Mycel's layout (the demo's writer), compacted up to message `up_to`."""
    entry = SummaryEntry(
        summary_id=summary_id,
        thread_id=thread_id,
        summary_text=f"summary {summary_id}",
        compact_up_to_index=up_to,
        compacted_at=up_to + 3,
        is_split_turn=False,
        split_turn_prefix=None,
        is_active=active,
        created_at=at,
    )
    write_summaries(db, [entry])

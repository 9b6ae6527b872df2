"""Write hostile test data into a copy of a Mycel home through LangGraph's real SqliteSaver."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

HOSTILE = '<script>alert("pwned")</script>'


def plant_thread(
    leon_db: Path,
    thread_id: str,
    messages: Sequence[BaseMessage],
    *,
    metadata: Mapping[str, Any] | None = None,
) -> str:
    """Store `messages` as one new checkpoint of `thread_id`; returns its checkpoint id."""
    with SqliteSaver.from_conn_string(str(leon_db)) as saver:
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"messages": list(messages)}
        checkpoint["channel_versions"] = {"messages": 1}
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        meta = {"source": "loop", "step": 1, "parents": {}, **(metadata or {})}
        saved = saver.put(config, checkpoint, meta, {"messages": 1})  # type: ignore[arg-type]
    return str(saved["configurable"]["checkpoint_id"])


def hostile_messages(marker: str = HOSTILE) -> list[BaseMessage]:
    return [
        HumanMessage(content=f"please run {marker}", id="h1"),
        AIMessage(
            content="",
            id="a1",
            tool_calls=[{"id": "call_x1", "name": "Bash", "args": {"command": f"echo '{marker}'"}}],
        ),
        ToolMessage(content=f"output: {marker} " + "x" * 4000, tool_call_id="call_x1", name="Bash", id="t1"),
        AIMessage(content=f"Done {marker}", id="a2"),
    ]


def name_thread(leon_db: Path, thread_id: str, member_name: str) -> None:
    """Give a thread a member (and so a name) in Mycel's threads/members tables."""
    member_id = thread_id.rsplit("-", 1)[0]
    with sqlite3.connect(leon_db) as db:
        db.execute(
            "INSERT OR REPLACE INTO members (id, name, type, created_at, next_entity_seq) VALUES (?, ?, ?, ?, 2)",
            (member_id, member_name, "mycel_agent", time.time()),
        )
        db.execute(
            "INSERT OR REPLACE INTO threads (id, member_id, sandbox_type, model, cwd, is_main, branch_index, created_at)"
            " VALUES (?, ?, 'local', 'gpt-4o-mini', NULL, 1, 0, ?)",
            (thread_id, member_id, time.time()),
        )

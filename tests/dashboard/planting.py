"""Write hostile test data into a copy of a Mycel home through LangGraph's real SqliteSaver."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver


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

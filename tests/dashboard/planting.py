"""Write hostile test data into a copy of a Mycel home through LangGraph's real SqliteSaver."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
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


def plant_env_dump(leon_db: Path, thread_id: str, *, key: str, output: str) -> str:
    """A thread whose agent ran `env K=<key>` and got `output` (the environment, keys and all), then took five
    more tool-calling steps, so the dump is no longer protected and memory prunes it by its length."""
    later: list[BaseMessage] = []
    for n in range(2, 7):
        call = {"id": f"c{n}", "name": "Bash", "args": {"command": "ls"}}
        later += [
            AIMessage("", id=f"a{n}", tool_calls=[call]),
            ToolMessage("a\nb", tool_call_id=f"c{n}", id=f"t{n}", name="Bash"),
        ]
    dump_call = {"id": "c1", "name": "Bash", "args": {"command": f"env K={key}"}}
    return plant_thread(
        leon_db,
        thread_id,
        [
            HumanMessage("print the environment", id="h1"),
            AIMessage("", id="a1", tool_calls=[dump_call]),
            ToolMessage(output, tool_call_id="c1", id="t1", name="Bash"),
            *later,
            AIMessage("done", id="a9"),
        ],
    )

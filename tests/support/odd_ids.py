"""Threads, checkpoints and a spilled tool output under odd ids (slashes, ?#%, '..', CJK, control
characters, 3,000 characters), written by LangGraph's real SqliteSaver: the ids every page must carry."""

from __future__ import annotations

from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

ODD_IDS = {
    "slash": "user/42",
    "query": "a?b#c%d&e=f",
    "spaces": "with space  and +plus",
    "dots": "..",
    "percent": "%2F%2e%2e%00",
    "tilde": "~not-base64!",
    "cjk": "分身/线程-1",
    "control": "ctl\x01\x1f\x7f\u200bend",
    "long": ("segment/" * 400)[:3000],
}
# Checkpoint ids sort as text (LangGraph's newest is the greatest): these sort before a uuid6 id, so the
# checkpoint a rollback writes is the newest, as it is with Mycel's own ids.
CHECKPOINT_IDS = ("0 cp/1?#%", "0 cp/2 分身 ..")
TOOL_CALL_ID = "call/1 ?#% 工具"


def plant_odd_thread(leon_db: Path, workspace: Path, thread_id: str) -> None:
    """Two checkpoints under odd ids; the second holds a spilled tool result under an odd tool-call id."""
    spill = workspace / ".leon" / "tool-results" / f"{TOOL_CALL_ID}.txt"
    spill.parent.mkdir(parents=True, exist_ok=True)
    spill.write_text(f"the full output for {thread_id!r}")
    notice = f"Output too large (60000 bytes). Full output saved to: {spill}\n\nPreview (first 2048 bytes):\nx\n..."
    histories = [
        [HumanMessage("hello", id="h1"), AIMessage("hi", id="a1")],
        [
            HumanMessage("hello", id="h1"),
            AIMessage("hi", id="a1"),
            HumanMessage("read it", id="h2"),
            AIMessage("", id="a2", tool_calls=[{"id": TOOL_CALL_ID, "name": "Read", "args": {"path": "x"}}]),
            ToolMessage(notice, tool_call_id=TOOL_CALL_ID, id="t1"),
            AIMessage("done", id="a3"),
        ],
    ]
    with SqliteSaver.from_conn_string(str(leon_db)) as saver:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for step, (checkpoint_id, messages) in enumerate(zip(CHECKPOINT_IDS, histories, strict=True)):
            checkpoint = empty_checkpoint()
            checkpoint["id"] = checkpoint_id
            checkpoint["channel_values"] = {"messages": messages}
            checkpoint["channel_versions"] = {"messages": step + 1}
            config = saver.put(
                config, checkpoint, {"source": "loop", "step": step, "parents": {}}, {"messages": step + 1}
            )


def write_odd_home(folder: Path) -> Path:
    """A data home holding one such thread per odd id (its workspace under `folder/workspaces`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for key, thread_id in ODD_IDS.items():
        plant_odd_thread(folder / "leon.db", folder / "workspaces" / key, thread_id)
    return folder

"""A stand-in for Mycel's backend in its own process: live turns, summaries, queue rows and run events.

Run as `python writer_process.py PLAN.json`. It appends to EXISTING threads the way Mycel's agent loop
does — one AsyncSqliteSaver on leon.db, the graph invoked with only the thread id, so LangGraph continues
from the newest checkpoint — and writes Mycel's other rows with Mycel's layouts. Every write it makes is
appended (and flushed) to a JSON-lines log, so a test can check that nothing was lost or written twice.

Threads in `hot` get a turn every cycle until `stop` appears in the control folder (or the time runs
out); a thread in `resume` waits for a `go-<thread_id>` file, then gets `resume_turns` turns.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sqlite3
import sys
import time
import traceback
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.base import WRITES_IDX_MAP
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from memory_core.demo import FAKE_API_KEY, Reply, ScriptedChatModel, bash, owner
from memory_core.demo.graph import AgentState, ToolTask, mycel_graph

# Mycel retries a summary save three times, sleeping 0.1 × (attempt + 1) s (summary_store.py).
_SUMMARY_ATTEMPTS = 3


@dataclass(frozen=True, slots=True)
class WriterPlan:
    """What the writer process does; written by the test as JSON."""

    home: str
    log: str
    control: str
    hot: tuple[str, ...]
    resume: tuple[str, ...]
    resume_turns: int = 2
    pause_s: float = 0.15
    summary_every: int = 2
    max_seconds: float = 45.0

    def to_json(self) -> str:
        return json.dumps({name: getattr(self, name) for name in self.__slots__})

    @classmethod
    def from_json(cls, text: str) -> WriterPlan:
        data = json.loads(text)
        data["hot"], data["resume"] = tuple(data["hot"]), tuple(data["resume"])
        return cls(**data)


class _Ids:
    """Fresh random ids: a live agent's message ids must never repeat the demo home's."""

    def __init__(self) -> None:
        self._rng = random.Random(uuid.uuid4().int)

    def hex(self, length: int) -> str:
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(length))


class WriteLog:
    """The writer's record of its own writes, one JSON object per line, flushed as it goes."""

    def __init__(self, path: Path) -> None:
        self._handle = path.open("a", encoding="utf-8")

    def record(self, kind: str, **fields: Any) -> None:
        self._handle.write(json.dumps({"kind": kind, "at": time.time(), **fields}) + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


class LoggingSaver(AsyncSqliteSaver):
    """LangGraph's own saver, which also logs every checkpoint and write it committed."""

    write_log: WriteLog

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        result = await super().aput(config, checkpoint, metadata, new_versions)
        self.write_log.record(
            "checkpoint",
            thread_id=config["configurable"]["thread_id"],
            checkpoint_id=checkpoint["id"],
            parent_checkpoint_id=config["configurable"].get("checkpoint_id"),
            source=metadata.get("source"),
            step=metadata.get("step"),
        )
        return result

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        await super().aput_writes(config, writes, task_id, task_path)
        self.write_log.record(
            "writes",
            thread_id=config["configurable"]["thread_id"],
            checkpoint_id=config["configurable"]["checkpoint_id"],
            task_id=task_id,
            idx=[WRITES_IDX_MAP.get(channel, idx) for idx, (channel, _) in enumerate(writes)],
        )


def _compile(saver: AsyncSqliteSaver, model: ScriptedChatModel) -> Any:
    """Mycel's graph shape (the demo's) over a model that answers from a script."""

    async def before_model(state: AgentState) -> dict[str, Any]:
        return {"messages": []}

    async def call_model(state: AgentState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    async def run_tool(state: ToolTask) -> dict[str, Any]:
        call = state["tool_call"]
        output = model.fixed_outputs.get(call["id"], "ok")
        return {
            "messages": [
                ToolMessage(content=output, tool_call_id=call["id"], name=call["name"], status="success")
            ]
        }

    return mycel_graph(saver, before_model=before_model, call_model=call_model, run_tool=run_tool)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=10)


def _event(home: Path, thread_id: str, run_id: str, event_type: str, data: Mapping[str, Any]) -> int:
    with _connect(home / "events.db") as conn:
        cursor = conn.execute(
            "INSERT INTO run_events (thread_id, run_id, event_type, data, message_id, created_at)"
            " VALUES (?, ?, ?, ?, NULL, ?)",
            (thread_id, run_id, event_type, json.dumps(data), _sqlite_utc()),
        )
        seq = int(cursor.lastrowid or 0)
    conn.close()
    return seq


def _keep_latest_run(home: Path, thread_id: str, run_id: str) -> None:
    # Mycel's cleanup_old_runs(keep_latest=1) after each run; activity_* events stay.
    with _connect(home / "events.db") as conn:
        conn.execute(
            "DELETE FROM run_events WHERE thread_id = ? AND run_id != ? AND run_id NOT LIKE 'activity_%'",
            (thread_id, run_id),
        )
    conn.close()


def _sqlite_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S")


def save_summary(
    home: Path, thread_id: str, text: str, compact_up_to_index: int, message_count: int
) -> tuple[str, list[str]]:
    """Mycel's save: deactivate the thread's active rows, then insert the new active one (one transaction)."""
    summary_id = f"{thread_id}_{uuid.uuid4().hex[:12]}"
    for attempt in range(_SUMMARY_ATTEMPTS):
        try:
            with _connect(home / "summary.db") as conn:
                before = [
                    row[0]
                    for row in conn.execute(
                        "SELECT summary_id FROM summaries WHERE thread_id = ? AND is_active = 1", (thread_id,)
                    )
                ]
                conn.execute(
                    "UPDATE summaries SET is_active = FALSE WHERE thread_id = ? AND is_active = TRUE",
                    (thread_id,),
                )
                conn.execute(
                    "INSERT INTO summaries (summary_id, thread_id, summary_text, compact_up_to_index, compacted_at,"
                    " is_split_turn, split_turn_prefix, is_active, created_at) VALUES (?, ?, ?, ?, ?, 0, NULL, 1, ?)",
                    (
                        summary_id,
                        thread_id,
                        text,
                        compact_up_to_index,
                        message_count,
                        datetime.now().isoformat(),
                    ),
                )
            conn.close()
            return summary_id, before
        except sqlite3.OperationalError:
            if attempt == _SUMMARY_ATTEMPTS - 1:
                raise
            time.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


def enqueue(home: Path, thread_id: str, content: str) -> int:
    """`POST /api/threads/{id}/queue`: a pending steer with source NULL."""
    with _connect(home / "queue.db") as conn:
        cursor = conn.execute(
            "INSERT INTO message_queue (thread_id, content, notification_type, source, sender_id, sender_name,"
            " created_at) VALUES (?, ?, 'steer', NULL, NULL, NULL, ?)",
            (thread_id, content, _sqlite_utc()),
        )
        row_id = int(cursor.lastrowid or 0)
    conn.close()
    return row_id


class Writer:
    def __init__(self, plan: WriterPlan, app: Any, model: ScriptedChatModel, log: WriteLog) -> None:
        self.plan = plan
        self.home = Path(plan.home)
        self.app = app
        self.model = model
        self.log = log
        self.turns: dict[str, int] = {}

    async def turn(self, thread_id: str) -> None:
        """One web run: run_start, the graph from the newest checkpoint, a summary now and then, a queue row."""
        number = self.turns.get(thread_id, 0) + 1
        self.turns[thread_id] = number
        run_id = str(uuid.uuid4())
        text = f"live turn {number} on {thread_id}"
        self.log.record("run_start", thread_id=thread_id, run_id=run_id, turn=number)
        _event(self.home, thread_id, run_id, "user_message", {"content": text, "showing": True})
        _event(
            self.home,
            thread_id,
            run_id,
            "run_start",
            {"thread_id": thread_id, "run_id": run_id, "showing": True},
        )
        self.model.pending = [
            Reply("", (bash(f"echo {number}", "count", output=f"{number}\n"),)),
            Reply(f"Turn {number} done."),
        ]
        config = {
            "configurable": {
                "thread_id": thread_id,
                "run_id": run_id,
                "model": "claude-sonnet-4-5-20250929",
                "model_provider": "anthropic",
                "api_key": FAKE_API_KEY,
                "base_url": None,
            }
        }
        human = owner(text)
        await self.app.ainvoke(
            {"messages": [HumanMessage(content=human.text, metadata=dict(human.metadata))]}, config
        )
        state = await self.app.aget_state({"configurable": {"thread_id": thread_id}})
        count = len(state.values.get("messages", []))
        if number % self.plan.summary_every == 0 and count > 4:
            summary_id, deactivated = save_summary(
                self.home, thread_id, f"Live summary after turn {number}.", count - 4, count
            )
            self.log.record("summary", thread_id=thread_id, summary_id=summary_id, deactivated=deactivated)
        queue_id = enqueue(self.home, thread_id, f"queued after live turn {number}")
        self.log.record("queue", thread_id=thread_id, id=queue_id)
        seq = _event(self.home, thread_id, run_id, "run_done", {"thread_id": thread_id, "run_id": run_id})
        _keep_latest_run(self.home, thread_id, run_id)
        self.log.record(
            "run_done",
            thread_id=thread_id,
            run_id=run_id,
            seq=seq,
            head=state.config["configurable"]["checkpoint_id"],
            messages=count,
        )


async def run(plan: WriterPlan) -> None:
    control = Path(plan.control)
    log = WriteLog(Path(plan.log))
    deadline = time.monotonic() + plan.max_seconds
    try:
        async with LoggingSaver.from_conn_string(str(Path(plan.home) / "leon.db")) as saver:
            saver.write_log = log
            model = ScriptedChatModel(
                style="anthropic",
                model_name="claude-sonnet-4-5-20250929",
                model_provider="anthropic",
                ids=_Ids(),
            )
            writer = Writer(plan, _compile(saver, model), model, log)
            log.record("ready", pid=os.getpid())
            resumed = dict.fromkeys(plan.resume, 0)
            while not (control / "stop").exists() and time.monotonic() < deadline:
                for thread_id in plan.hot:
                    await writer.turn(thread_id)
                for thread_id, done in resumed.items():
                    if done < plan.resume_turns and (control / f"go-{thread_id}").exists():
                        await writer.turn(thread_id)
                        resumed[thread_id] = done + 1
                await asyncio.sleep(plan.pause_s)
        log.record("done", turns=writer.turns)
    except BaseException:
        log.record("error", traceback=traceback.format_exc())
        raise
    finally:
        log.close()


def main(argv: Sequence[str]) -> int:
    plan = WriterPlan.from_json(Path(argv[1]).read_text(encoding="utf-8"))
    asyncio.run(run(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

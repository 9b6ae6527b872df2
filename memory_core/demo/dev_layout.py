"""Threads in Mycel dev's checkpoint layout, written through LangGraph's real AsyncPostgresSaver.aput.

Each save is done the way Mycel dev's `LangGraphCheckpointStore.save` does it (reference mycel-dev §2.3): a
connection whose search_path is `agent`, all six QueryLoop channels with a new version each
(`get_next_version`), `create_checkpoint` (so `v` 2 and a uuid6 id with clock_seq = step), metadata
`{"source": "loop", "step": len(messages)}`, no parent, namespace "". A thread's first run saves once
(run end); every later run saves twice (its input, as `aupdate_state(as_node="__start__")` does, then its
end). Around the checkpoints it fills dev's side tables (dev_tables.py) with summaries, a queued item,
run events and a file operation, at times between the saves they belong to, so the time join can be
checked. Dev's notices are persisted HumanMessages (§2.5); one thread's head starts with the
`[Conversation Summary]` SystemMessage that prompt-too-long recovery saves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory_core.demo.dev_tables import dev_side_tables_sql

DEV_CHANNELS = (
    "messages",
    "tool_permission_context",
    "pending_permission_requests",
    "resolved_permission_requests",
    "memory_compaction_state",
    "integration_instruction_state",
)
OWNER_ID = "u_devDemoOwner"
COMPACT_NOTICE = "Conversation compacted. Earlier {n} message(s) are now represented by a summary."
BREAKER_NOTICE = "Automatic compaction disabled for this thread after repeated failures. Clear the thread or start a new one."
SUMMARY_HEAD = "[Conversation Summary]\n"
# Saves must be told apart by time (the join's only key): each step waits this long, in seconds.
_TICK = 0.003


@dataclass(frozen=True, slots=True)
class DevRun:
    """One web run: the user's input, what the loop appends, and whether its stored list is replaced."""

    human: str
    appended: tuple[BaseMessage, ...]
    # Prompt-too-long recovery: the saved list becomes [SystemMessage(summary)] + the last `keep` messages.
    recovered_summary: str | None = None
    keep: int = 0
    breaker: tuple[int, bool] = (0, False)
    file_write: tuple[str, str] | None = None  # (path, content) written by the run's Write tool


@dataclass(frozen=True, slots=True)
class DevThread:
    thread_id: str
    agent_user_id: str
    agent_name: str
    model: str
    runs: tuple[DevRun, ...]
    queued: tuple[str, ...] = ()
    # (compact_up_to_index, compacted_at, text) per summary, oldest first; the last is active
    summaries: tuple[tuple[int, int, str], ...] = ()


@dataclass
class WrittenDevThread:
    """What the writer saved: enough for tests to check every read against it."""

    thread_id: str
    agent_name: str
    model: str
    checkpoint_ids: list[str] = field(default_factory=list)
    head_messages: int = 0
    head_first_type: str = ""
    breaker: tuple[int, bool] = (0, False)
    run_ids: list[str] = field(default_factory=list)
    # run id -> the checkpoint that closed that run (what the time join must find)
    run_end_checkpoint: dict[str, str] = field(default_factory=dict)
    event_seqs: int = 0
    file_operation_ids: list[str] = field(default_factory=list)
    summary_ids: list[str] = field(default_factory=list)
    queued: int = 0


def _ai(thread: str, n: int, text: str, **extra: Any) -> AIMessage:
    return AIMessage(content=text, id=f"chatcmpl-{thread[-6:]}-{n}", **extra)


def _write_call(thread: str, n: int, path: str, content: str) -> tuple[AIMessage, ToolMessage]:
    call = f"call_{thread[-6:]}_{n}"
    asked = _ai(
        thread,
        n,
        "",
        tool_calls=[{"name": "Write", "args": {"file_path": path, "content": content}, "id": call}],
    )
    done = ToolMessage(content=f"File written: {path}", tool_call_id=call, name="Write", status="success")
    return asked, done


def _notice(text: str, kind: str, boundary: int) -> HumanMessage:
    return HumanMessage(
        content=text,
        metadata={"source": "system", "notification_type": kind, "compact_boundary_index": boundary},
    )


def demo_threads(workspace: str = "/workspace/demo") -> tuple[DevThread, ...]:
    """Three dev threads: compaction with summaries, queue and a file write; an open breaker; a recovered head."""
    a, b = "m_devDemo0001", "m_devDemo0002"
    compact = f"{a}-1"
    write_ai, write_tool = _write_call(compact, 3, f"{workspace}/notes.md", "# toad notes\n")
    breaker = f"{a}-2"
    recovered = f"{b}-1"
    return (
        DevThread(
            compact,
            a,
            "Toad",
            "leon:tiny",
            runs=(
                DevRun(
                    "Which toads live near the pond?", (_ai(compact, 1, "Common toads and natterjacks."),)
                ),
                DevRun(
                    "Write that down in notes.md.",
                    (write_ai, write_tool, _ai(compact, 4, "Saved to notes.md.")),
                    file_write=(f"{workspace}/notes.md", "# toad notes\n"),
                ),
                DevRun(
                    "And which are endangered?",
                    (
                        _ai(compact, 5, "Natterjacks are protected."),
                        _notice(COMPACT_NOTICE.format(n=4), "compact", 4),
                    ),
                ),
            ),
            queued=("Also list their calls.",),
            summaries=(
                (2, 6, "The user asked about pond toads."),
                (4, 9, "Toads near the pond; notes.md saved."),
            ),
        ),
        DevThread(
            breaker,
            a,
            "Toad",
            "leon:tiny",
            runs=(
                DevRun("Summarize the sensor logs.", (_ai(breaker, 1, "The logs are long; reading them."),)),
                DevRun(
                    "Keep going.",
                    (_ai(breaker, 2, "Still reading."), _notice(BREAKER_NOTICE, "compact_breaker", 0)),
                    breaker=(3, True),
                ),
            ),
        ),
        DevThread(
            recovered,
            b,
            "Morel",
            "gpt-4o-mini",
            runs=(
                DevRun("Describe the morel season.", (_ai(recovered, 1, "Spring, after rain."),)),
                DevRun(
                    "And where to look?",
                    (_ai(recovered, 2, "Near ash and elm trees."),),
                    recovered_summary="The user asked about the morel season: spring.",
                    keep=2,
                ),
            ),
        ),
    )


def _now() -> datetime:
    return datetime.now(UTC)


async def _tick() -> None:
    await asyncio.sleep(_TICK)


class _Writer:
    def __init__(self, conn: Any, saver: Any) -> None:
        self.conn = conn
        self.saver = saver
        self.versions: dict[str, dict[str, str]] = {}

    async def save(self, thread_id: str, messages: list[BaseMessage], breaker: tuple[int, bool]) -> str:
        """One save as LangGraphCheckpointStore.save makes it; the new checkpoint's id."""
        from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint

        current = self.versions.get(thread_id, {})
        new_versions = {ch: self.saver.get_next_version(current.get(ch), None) for ch in DEV_CHANNELS}
        values: dict[str, Any] = {
            "messages": list(messages),
            "tool_permission_context": {
                "alwaysAllowRules": {},
                "alwaysDenyRules": {},
                "alwaysAskRules": {},
                "allowManagedPermissionRulesOnly": False,
            },
            "pending_permission_requests": {},
            "resolved_permission_requests": {},
            "memory_compaction_state": {"failure_count": breaker[0], "breaker_open": breaker[1]},
            "integration_instruction_state": {"announced_blocks": {}},
        }
        base = empty_checkpoint()
        base["channel_values"] = values
        base["channel_versions"] = new_versions
        checkpoint = create_checkpoint(base, None, len(messages))
        checkpoint["updated_channels"] = list(DEV_CHANNELS)
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        await self.saver.aput(config, checkpoint, {"source": "loop", "step": len(messages)}, new_versions)
        self.versions[thread_id] = new_versions
        await _tick()
        return str(checkpoint["id"])

    async def event(
        self, thread_id: str, run_id: str, kind: str, data: dict[str, Any], message_id: str | None
    ) -> None:
        await self.conn.execute(
            "INSERT INTO agent.run_events (thread_id, run_id, event_type, data, message_id, created_at) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (thread_id, run_id, kind, json.dumps(data), message_id, _now().isoformat()),
        )
        await _tick()


async def _write_thread(w: _Writer, spec: DevThread) -> WrittenDevThread:
    out = WrittenDevThread(spec.thread_id, spec.agent_name, spec.model)
    messages: list[BaseMessage] = []
    for n, run in enumerate(spec.runs):
        run_id = f"run-{spec.thread_id}-{n + 1}"
        out.run_ids.append(run_id)
        messages.append(HumanMessage(content=run.human))
        if n > 0:
            # Input on a thread that already has messages: its own save before the run (2 per later run).
            out.checkpoint_ids.append(await w.save(spec.thread_id, messages, out.breaker))
        await w.event(
            spec.thread_id, run_id, "run_start", {"run_id": run_id, "thread_id": spec.thread_id}, None
        )
        if run.file_write is not None:
            path, content = run.file_write
            op_id = f"fop-{spec.thread_id}-{n + 1}"
            await w.conn.execute(
                "INSERT INTO agent.file_operations (id, thread_id, checkpoint_id, timestamp, operation_type, "
                "file_path, before_content, after_content, changes, status) "
                "VALUES (%s, %s, %s, %s, 'write', %s, NULL, %s, %s, 'applied')",
                (op_id, spec.thread_id, run_id, _now().timestamp(), path, content, json.dumps([])),
            )
            out.file_operation_ids.append(op_id)
            await _tick()
        for message in run.appended:
            if isinstance(message, AIMessage):
                await w.event(spec.thread_id, run_id, "text", {"content": str(message.content)}, message.id)
        messages.extend(run.appended)
        if run.recovered_summary is not None:
            messages = [SystemMessage(content=SUMMARY_HEAD + run.recovered_summary), *messages[-run.keep :]]
        await w.event(spec.thread_id, run_id, "run_done", {"run_id": run_id}, None)
        out.breaker = run.breaker
        end = await w.save(spec.thread_id, messages, out.breaker)
        out.checkpoint_ids.append(end)
        out.run_end_checkpoint[run_id] = end
    out.head_messages = len(messages)
    out.head_first_type = messages[0].type
    out.event_seqs = sum(2 + sum(isinstance(m, AIMessage) for m in r.appended) for r in spec.runs)
    return out


async def _side_rows(w: _Writer, spec: DevThread, written: WrittenDevThread) -> None:
    conn = w.conn
    for i, (up_to, at, text) in enumerate(spec.summaries):
        summary_id = f"{spec.thread_id}_{i:012x}"
        active = i == len(spec.summaries) - 1
        # Dev's created_at: naive local time, as datetime.now().isoformat() gives it.
        await conn.execute(
            "INSERT INTO agent.summaries VALUES (%s, %s, %s, %s, %s, false, NULL, %s, %s)",
            (summary_id, spec.thread_id, text, up_to, at, active, datetime.now().isoformat()),  # noqa: DTZ005
        )
        written.summary_ids.append(summary_id)
        await _tick()
    for text in spec.queued:
        await conn.execute(
            "INSERT INTO agent.message_queue (thread_id, content, notification_type, source, sender_user_id, "
            "sender_name) VALUES (%s, %s, 'steer', 'owner', %s, 'Owner')",
            (spec.thread_id, text, OWNER_ID),
        )
        written.queued += 1
    await conn.execute(
        "INSERT INTO agent.threads (id, agent_user_id, owner_user_id, model, cwd, status, is_main, branch_index, "
        "created_at, updated_at, last_active_at) VALUES (%s, %s, %s, %s, %s, 'active', %s, %s, %s, %s, %s)",
        (
            spec.thread_id,
            spec.agent_user_id,
            OWNER_ID,
            spec.model,
            "/workspace/demo",
            1 if spec.thread_id.endswith("-1") else 0,
            int(spec.thread_id.rsplit("-", 1)[1]) - 1,
            *([_now().isoformat()] * 3),
        ),
    )


async def _agents(conn: Any, threads: Sequence[DevThread]) -> None:
    await conn.execute(
        "INSERT INTO identity.users (id, type, display_name) VALUES (%s, 'human', 'Owner') ON CONFLICT DO NOTHING",
        (OWNER_ID,),
    )
    for spec in {t.agent_user_id: t for t in threads}.values():
        config_id = f"cfg-{spec.agent_user_id}"
        await conn.execute(
            "INSERT INTO agent.agent_configs (id, owner_user_id, agent_user_id, name, model, version, compact_json) "
            "VALUES (%s, %s, %s, %s, %s, '1', %s) ON CONFLICT DO NOTHING",
            (config_id, OWNER_ID, spec.agent_user_id, spec.agent_name, spec.model, json.dumps({})),
        )
        await conn.execute(
            "INSERT INTO identity.users (id, type, display_name, owner_user_id, agent_config_id, next_thread_seq) "
            "VALUES (%s, 'agent', %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            (spec.agent_user_id, spec.agent_name, OWNER_ID, config_id, len(threads)),
        )


async def write_dev_threads(url: str, threads: Sequence[DevThread] | None = None) -> list[WrittenDevThread]:
    """Create schema `agent` (saver tables by setup(), side tables by dev_tables.py) and write `threads`."""
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row

    specs = tuple(threads) if threads is not None else demo_threads()
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as plain:
        await plain.execute(dev_side_tables_sql())
        await _agents(plain, specs)
    # Mycel dev's own connection: search_path agent, so setup() and aput land in schema `agent`.
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, prepare_threshold=0, row_factory=dict_row, options="-c search_path=agent"
    ) as conn:
        saver = AsyncPostgresSaver(conn)
        await saver.setup()
        writer = _Writer(conn, saver)
        written = []
        for spec in specs:
            done = await _write_thread(writer, spec)
            await _side_rows(writer, spec, done)
            written.append(done)
    return written


def build_dev_demo(url: str, threads: Sequence[DevThread] | None = None) -> list[WrittenDevThread]:
    """write_dev_threads, from synchronous code (tests, the demo command)."""
    return asyncio.run(write_dev_threads(url, threads))

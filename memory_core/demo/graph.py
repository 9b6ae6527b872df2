"""A real LangGraph agent loop with a scripted chat model, written through LangGraph's AsyncSqliteSaver.

The graph has Mycel's shape: START → `SteeringMiddleware.before_model` (injects steering messages) →
`model` (applies Mycel's memory rules to the request, then calls the fake model) → one `tools` task
per tool call (LangGraph `Send`, so parallel calls are parallel tasks) → back to before_model.
Runs pass Mycel's `configurable` (thread_id, run_id, model, model_provider, api_key, base_url), so
LangGraph copies them into every checkpoint's metadata, fake api_key included.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Protocol, TypeVar

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send
from pydantic import ConfigDict
from typing_extensions import TypedDict

from memory_core.demo.determinism import DemoClock, SeededIds, frozen_langgraph
from memory_core.demo.memory import (
    MemoryState,
    SavedSummary,
    SettingsSegment,
    estimated_tokens,
    model_view,
    switched_settings,
)
from memory_core.demo.scripts import Human, ModelSwitch, Reply, ThreadScript, Turn
from memory_core.demo.tools import TOOLS, FileOperationsTableRow, ToolContext, ToolFailure

FAKE_API_KEY = "sk-ant-FAKE-demo-key-not-a-secret"
STEERING_NODE = "SteeringMiddleware.before_model"
# Mycel's real system prompt is ~2 k characters; the fake provider bills it as this many tokens.
SYSTEM_PROMPT_TOKENS = 1000
# Mycel's spill buffer (§5): Grep/Glob spill above 20,000 bytes, every other tool above 50,000.
SPILL_THRESHOLDS = {"Grep": 20_000, "Glob": 20_000}
SPILL_DEFAULT = 50_000
PREVIEW_CHARS = 2048


class AgentState(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


AgentGraph = CompiledStateGraph[AgentState, None, AgentState, AgentState]


class ToolTask(TypedDict):
    """What one `tools` task receives: the `Send` payload of one tool call."""

    tool_call: ToolCall


_Input = TypeVar("_Input", contravariant=True)


class GraphStep(Protocol[_Input]):
    """A node of the graph. LangGraph's node protocols name the parameter `state`, so a plain
    `Callable` does not match them."""

    def __call__(self, state: _Input) -> Awaitable[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class RunEventsTableRow:
    """One `run_events` row of a run (data is the JSON payload)."""

    thread_id: str
    run_id: str
    event_type: str
    data: Mapping[str, Any]
    message_id: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One web run (one turn): its id, whether it failed, and its SSE events."""

    run_id: str
    events: tuple[RunEventsTableRow, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BuiltThread:
    """What writing one thread produced besides its checkpoints."""

    thread_id: str
    runs: tuple[RunRecord, ...]
    summaries: tuple[SavedSummary, ...]
    summary_times: tuple[str, ...]
    file_operations: tuple[FileOperationsTableRow, ...]
    spill_files: tuple[Path, ...]
    fork_checkpoint_id: str | None
    fork_parent_checkpoint_id: str | None
    head_message_count: int
    model_calls: int  # answered model calls, every branch
    settings_segments: tuple[SettingsSegment, ...]
    compacted_at: tuple[int, ...]  # every compaction, stored or not
    summaries_not_stored: tuple[int, ...]  # compacted_at of the compactions whose save failed


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a script, shaped like Anthropic or OpenAI replies.

    `usage_metadata` reports ~chars/4 of what it was sent (plus a fixed system prompt), so the
    provider-reported input tokens follow the request after Mycel's pruning and compaction.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    style: str
    model_name: str
    model_provider: str
    ids: Any
    pending: list[Any] = []
    fixed_outputs: dict[str, str] = {}

    @property
    def _llm_type(self) -> str:
        return "mycel-demo-scripted"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        reply: Reply = self.pending.pop(0)
        if reply.error:
            raise RuntimeError(reply.error)
        sent_chars = sum(len(m.text) for m in messages)
        calls = [
            {
                "name": use.name,
                "args": dict(use.args),
                "id": ("toolu_" if self.style == "anthropic" else "call_") + self.ids.hex(24),
                "type": "tool_call",
            }
            for use in reply.tool_uses
        ]
        for use, call in zip(reply.tool_uses, calls, strict=True):
            if use.output is not None:
                self.fixed_outputs[call["id"]] = use.output
        output_tokens = max(1, (len(reply.text) + sum(len(json.dumps(c["args"])) for c in calls)) // 4)
        usage = {
            "input_tokens": SYSTEM_PROMPT_TOKENS + sent_chars // 4,
            "output_tokens": output_tokens,
            "total_tokens": SYSTEM_PROMPT_TOKENS + sent_chars // 4 + output_tokens,
        }
        if self.style == "anthropic":
            blocks: list[Any] = [{"type": "text", "text": reply.text, "index": 0}] if reply.text else []
            for call in calls:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call["id"],
                        "name": call["name"],
                        "input": {},
                        "index": len(blocks),
                        "partial_json": json.dumps(call["args"], ensure_ascii=False),
                    }
                )
            message = AIMessage(
                content=blocks,
                id="msg_" + self.ids.hex(24),
                tool_calls=calls,
                usage_metadata=usage,
                response_metadata={
                    "model_name": self.model_name,
                    "model_provider": "anthropic",
                    "stop_reason": "tool_use" if calls else "end_turn",
                    "stop_sequence": None,
                },
            )
        else:
            message = AIMessage(
                content=reply.text,
                id="chatcmpl-" + self.ids.hex(24),
                tool_calls=calls,
                usage_metadata=usage,
                response_metadata={
                    "model_name": self.model_name,
                    "model_provider": "openai",
                    "finish_reason": "tool_calls" if calls else "stop",
                    "system_fingerprint": "fp_demo",
                },
            )
        return ChatResult(generations=[ChatGeneration(message=message)])


@dataclass(slots=True)
class _Run:
    """Mutable state of the thread being written: the run in progress and what it produced."""

    thread_id: str
    script: ThreadScript
    clock: DemoClock
    ids: SeededIds
    tools: ToolContext
    memory: MemoryState
    model: ScriptedChatModel
    steers: Mapping[int, tuple[Human, ...]] = field(default_factory=dict)
    model_calls: int = 0  # in the current run
    calls_made: int = 0  # in the whole thread, answered ones only
    segments: list[SettingsSegment] = field(default_factory=list)
    events: list[RunEventsTableRow] = field(default_factory=list)
    spill_files: list[Path] = field(default_factory=list)
    summary_times: list[str] = field(default_factory=list)

    def note_settings(self) -> None:
        """Start a new settings segment at the coming call when the settings or the model changed."""
        current = (self.memory.settings, self.model.model_name)
        if not self.segments or (self.segments[-1].settings, self.segments[-1].model) != current:
            self.segments.append(SettingsSegment(self.calls_made + 1, *current))

    def switch_model(self, switch: ModelSwitch) -> None:
        self.memory.settings = switched_settings(self.memory.settings, switch.context_limit)
        self.model.model_name = switch.model

    def event(self, event_type: str, data: Mapping[str, Any], message_id: str | None = None) -> None:
        self.events.append(
            RunEventsTableRow(
                self.thread_id, self.tools.run_id, event_type, data, message_id, self.clock.sqlite_utc()
            )
        )


def _human(spec: Human) -> HumanMessage:
    # No id: add_messages assigns one, exactly as for Mycel's own HumanMessages. Only the web adds metadata.
    if not spec.metadata:
        return HumanMessage(content=spec.text)
    return HumanMessage(content=spec.text, metadata=dict(spec.metadata))


def _spill_text(size: int, path: str, content: str) -> str:
    return (
        f"Output too large ({size} bytes). Full output saved to: {path}"
        "\n\nUse read_file to view specific sections with offset and limit parameters."
        f"\n\nPreview (first {PREVIEW_CHARS} bytes):\n{content[:PREVIEW_CHARS]}\n..."
    )


def _status(run: _Run, messages: list[BaseMessage]) -> dict[str, Any]:
    tokens = estimated_tokens(messages)
    limit = run.memory.settings.context_limit
    return {
        "state": {"state": "active", "flags": {"streaming": False, "compacting": False, "error": False}},
        "context": {
            "message_count": len(messages),
            "estimated_tokens": tokens,
            "context_limit": limit,
            "usage_percent": round(100 * tokens / limit, 1),
        },
    }


def _compile(run: _Run, saver: BaseCheckpointSaver[str]) -> AgentGraph:
    async def before_model(state: AgentState) -> dict[str, Any]:
        injected = [_human(spec) for spec in run.steers.get(run.model_calls, ())]
        for spec in run.steers.get(run.model_calls, ()):
            run.event("user_message", {"content": spec.text, "showing": True})
        return {"messages": injected}

    async def call_model(state: AgentState) -> dict[str, Any]:
        run.clock.advance(1.2)
        run.note_settings()
        saved_before = len(run.memory.saved)
        view = model_view(state["messages"], run.memory)
        run.summary_times.extend(run.clock.local_iso() for _ in run.memory.saved[saved_before:])
        run.model_calls += 1
        reply = await run.model.ainvoke(view)
        run.calls_made += 1
        if reply.text:
            for start in range(0, len(reply.text), 24):
                run.event("text", {"content": reply.text[start : start + 24], "showing": True}, reply.id)
        for call in reply.tool_calls:
            run.event(
                "tool_call", {"id": call["id"], "name": call["name"], "args": call["args"], "showing": True}
            )
        run.event("status", _status(run, [*state["messages"], reply]))
        return {"messages": [reply]}

    async def run_tool(state: ToolTask) -> dict[str, Any]:
        call = state["tool_call"]
        run.clock.advance(0.4)
        # A ToolCall's id is optional in LangChain's type; the scripted model always sets one.
        fixed = run.model.fixed_outputs.get(call["id"] or "")
        status = "success"
        try:
            output = fixed if fixed is not None else TOOLS[call["name"]](run.tools, call["args"])
        except (ToolFailure, KeyError, OSError) as exc:
            output, status = f"Error: {exc}", "error"
        run.event(
            "tool_result",
            {"tool_call_id": call["id"], "name": call["name"], "content": output, "showing": True},
        )
        size = len(output.encode("utf-8"))
        if run.tools.workspace is not None and size > SPILL_THRESHOLDS.get(call["name"], SPILL_DEFAULT):
            spill = run.tools.workspace / ".leon" / "tool-results" / f"{call['id']}.txt"
            spill.parent.mkdir(parents=True, exist_ok=True)
            spill.write_text(output, encoding="utf-8")
            run.spill_files.append(spill)
            # Mycel rebuilds the message with only content and tool_call_id (name, status, id are lost).
            return {
                "messages": [
                    ToolMessage(content=_spill_text(size, str(spill), output), tool_call_id=call["id"])
                ]
            }
        return {
            "messages": [
                ToolMessage(content=output, tool_call_id=call["id"], name=call["name"], status=status)
            ]
        }

    return mycel_graph(saver, before_model=before_model, call_model=call_model, run_tool=run_tool)


def mycel_graph(
    saver: BaseCheckpointSaver[str],
    *,
    before_model: GraphStep[AgentState],
    call_model: GraphStep[AgentState],
    run_tool: GraphStep[ToolTask],
) -> AgentGraph:
    """Mycel's graph shape, compiled with `saver`: steering hook → model → one `tools` task per call (Send)
    with a `{"tool_call": call}` payload → back to the steering hook; no tool call ends the run."""

    def route(state: AgentState) -> list[Send] | str:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return [Send("tools", {"tool_call": call}) for call in last.tool_calls]
        return END

    graph = StateGraph(AgentState)
    graph.add_node(STEERING_NODE, before_model)
    graph.add_node("model", call_model)
    graph.add_node("tools", run_tool)
    graph.add_edge(START, STEERING_NODE)
    graph.add_edge(STEERING_NODE, "model")
    graph.add_conditional_edges("model", route, ["tools", END])
    graph.add_edge("tools", STEERING_NODE)
    return graph.compile(checkpointer=saver)


def _configurable(run: _Run, run_id: str) -> dict[str, Any]:
    if not run.script.web_run:
        # Sub-agents and scripts pass only the thread id: no run, model or key in their metadata.
        return {"thread_id": run.thread_id}
    return {
        "thread_id": run.thread_id,
        "run_id": run_id,
        "model": run.model.model_name,
        "model_provider": run.script.model_provider,
        "api_key": FAKE_API_KEY,
        "base_url": run.script.base_url,
    }


async def _play_turn(
    app: AgentGraph, run: _Run, turn: Turn, config_extra: Mapping[str, Any] | None = None
) -> RunRecord:
    run.clock.advance(turn.pause_seconds)
    if turn.switch_model is not None:
        run.switch_model(turn.switch_model)
    run_id = run.ids.uuid4()
    if run.script.tui_session:
        # leonai's TUI names each interaction `{thread_id}-{8 hex}` (reference §2.6); there is no web run.
        run_id = f"{run.thread_id}-{run_id.replace('-', '')[:8]}"
    run.tools.run_id = run_id
    run.events = []
    run.steers = turn.steers
    run.model_calls = 0
    run.model.pending = list(turn.replies)
    meta = turn.message.metadata
    run.event("user_message", {"content": turn.message.text, "showing": True})
    run.event(
        "run_start",
        {
            "thread_id": run.thread_id,
            "run_id": run_id,
            "source": meta.get("source"),
            "sender_name": meta.get("sender_name"),
            "showing": True,
        },
    )
    config: RunnableConfig = {"configurable": {**_configurable(run, run_id), **(config_extra or {})}}
    error: str | None = None
    try:
        await app.ainvoke({"messages": [_human(turn.message)]}, config)
    except RuntimeError as exc:
        error = str(exc)
        run.event("error", {"error": error})
    run.event("run_done", {"thread_id": run.thread_id, "run_id": run_id})
    return RunRecord(run_id, tuple(run.events), error)


@asynccontextmanager
async def _saver(target: Path | str) -> AsyncIterator[BaseCheckpointSaver[str]]:
    """LangGraph's own saver for `target`: a SQLite file (Mycel's default), or a PostgreSQL URL (Mycel main's
    `supabase` strategy: AsyncPostgresSaver, whose tables it creates as Mycel's start-up does)."""
    if isinstance(target, str) and target.startswith(("postgresql://", "postgres://")):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(target) as postgres:
            await postgres.setup()
            yield postgres
        return
    async with AsyncSqliteSaver.from_conn_string(str(target)) as sqlite:
        # Mycel's connect_sqlite_async pragmas on the checkpointer's connection (reference §1.5); NORMAL
        # also spares an fsync per checkpoint.
        for pragma in ("journal_mode=WAL", "busy_timeout=30000", "synchronous=NORMAL"):
            await sqlite.conn.execute(f"PRAGMA {pragma}")
        yield sqlite


async def _write_thread(
    saver_path: Path | str, thread_id: str, script: ThreadScript, run: _Run
) -> BuiltThread:
    runs: list[RunRecord] = []
    fork_id: str | None = None
    fork_parent: str | None = None
    async with _saver(saver_path) as saver:
        app = _compile(run, saver)
        base: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        turn_ends: list[str] = []
        for turn in script.turns:
            runs.append(await _play_turn(app, run, turn))
            state = await app.aget_state(base)
            turn_ends.append(state.config["configurable"]["checkpoint_id"])
        if script.fork is not None:
            fork_parent = turn_ends[script.fork.after_turn - 1]
            run.clock.advance(60)
            target: RunnableConfig = {
                "configurable": {
                    **_configurable(run, run.ids.uuid4()),
                    "checkpoint_ns": "",
                    "checkpoint_id": fork_parent,
                }
            }
            forked = await app.aupdate_state(target, {"messages": []}, as_node="model")
            fork_id = forked["configurable"]["checkpoint_id"]
            for turn in script.fork.turns:
                runs.append(await _play_turn(app, run, turn))
        head = await app.aget_state(base)
    return BuiltThread(
        thread_id=thread_id,
        runs=tuple(runs),
        summaries=tuple(run.memory.saved),
        summary_times=tuple(run.summary_times),
        file_operations=tuple(run.tools.operations),
        spill_files=tuple(run.spill_files),
        fork_checkpoint_id=fork_id,
        fork_parent_checkpoint_id=fork_parent,
        head_message_count=len(head.values.get("messages", [])),
        model_calls=run.calls_made,
        settings_segments=tuple(run.segments),
        compacted_at=tuple(run.memory.compacted_at),
        summaries_not_stored=tuple(run.memory.not_stored),
    )


def build_thread(
    saver_path: Path | str,
    thread_id: str,
    script: ThreadScript,
    *,
    seed: int = 7,
    workspace: Path | None = None,
    clock: DemoClock | None = None,
) -> BuiltThread:
    """Play `script` through the real graph into the LangGraph SQLite file at `saver_path` (or, given a
    PostgreSQL URL, into that database through AsyncPostgresSaver).

    Creates the file (and LangGraph's tables) when missing. Deterministic for (`seed`, `thread_id`,
    `script`, clock). Returns the summaries, file operations, run events and spill files the run
    produced, for the caller to store in Mycel's other tables.
    """
    clock = clock or DemoClock(seed=seed)
    ids = SeededIds(seed, namespace=f"thread:{thread_id}")
    run = _Run(
        thread_id=thread_id,
        script=script,
        clock=clock,
        ids=ids,
        tools=ToolContext(thread_id=thread_id, workspace=workspace, clock=clock, new_id=ids.uuid4),
        memory=MemoryState(settings=script.memory, save_failures=script.unsaved_compactions),
        model=ScriptedChatModel(
            style=script.style, model_name=script.model, model_provider=script.model_provider, ids=ids
        ),
    )
    if workspace is not None:
        workspace.mkdir(parents=True, exist_ok=True)
    with frozen_langgraph(clock, ids):
        return asyncio.run(_write_thread(saver_path, thread_id, script, run))

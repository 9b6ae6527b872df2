"""The records stores/ hands to the rest of the app: plain frozen dataclasses, no SQL column names.

Everything secret-looking has already been redacted by the time a record exists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from memory_core.messages import Message


class ProblemKind(StrEnum):
    MISSING_FILE = "missing_file"
    MISSING_TABLE = "missing_table"
    LOCKED = "locked"
    CORRUPT = "corrupt"
    UNKNOWN_SCHEMA = "unknown_schema"
    UNREADABLE_CHECKPOINT = "unreadable_checkpoint"
    TIMEOUT = "timeout"
    TRUNCATED = "truncated"  # a row cap was reached
    REFUSED = "refused"  # data asked for something unsafe (a pickle payload, a path outside its folder)
    UNREACHABLE = "unreachable"  # a database server that does not answer
    DENIED = "denied"  # a server that refuses our login or a table's SELECT


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """Something a page or the CLI should say plainly, instead of failing."""

    kind: ProblemKind
    store: str  # the role, e.g. "main", "queue"
    message: str
    path: Path | None = None

    @property
    def expected_absence(self) -> bool:
        """A file Mycel creates only once it is used (summary.db, queue.db, sandbox.db…) or a table it may
        not have (threads, for standalone threads): normal, so said quietly. leon.db itself missing is not."""
        if self.kind is ProblemKind.MISSING_FILE:
            return self.store != "main"
        return self.kind is ProblemKind.MISSING_TABLE


# Files that are often simply absent; saying so on every command or export would bury real problems.
QUIET_KINDS = (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)


def loud_messages(problems: Iterable[StoreProblem]) -> list[str]:
    """The messages of the problems worth saying, once each (not the files and tables often absent)."""
    return [p.message for p in dict.fromkeys(problems) if p.kind not in QUIET_KINDS]


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One line of the thread list: every thread known to any store."""

    thread_id: str
    messages: int
    checkpoints: int
    head_checkpoint_id: str | None
    updated_at: datetime | None
    name: str | None = None
    model: str | None = None  # from the newest checkpoint's metadata, else the threads table
    member_id: str | None = None
    sandbox_type: str | None = None
    cwd: str | None = None
    bytes_on_disk: int = 0
    estimated_tokens: int | None = None  # Mycel's chars//2 estimate of the head's messages
    summaries: int = 0
    active_summary: bool = False
    queued: int = 0
    sandbox_state: str | None = None
    configured_model: str | None = None  # threads.model as chosen in Mycel (may be virtual, e.g. leon:snug)
    # Whose checkpoint layout holds the thread: "main" (LangGraph graph channels, SQLite or Postgres) or
    # "dev" (Mycel dev's QueryLoop: schema `agent`, six channels, no parent ids). It chooses the rules.
    layout: str = "main"
    # Mycel dev's compaction circuit breaker at the head (`memory_compaction_state`); None on main layouts.
    breaker_failures: int | None = None
    breaker_open: bool = False


@dataclass(frozen=True, slots=True)
class CheckpointLocation:
    """Where a backend keeps its checkpoints, as a script or a page names it (a URL always masked)."""

    engine: str  # "sqlite" | "postgresql"
    location: str  # the file's path, or the masked URL (never the password)
    schemas: Mapping[str, str] | None = None  # PostgreSQL: store label -> schema


@dataclass(frozen=True, slots=True)
class BreakerState:
    """Mycel dev's compaction circuit breaker: failures in a row and whether it is open (reference
    mycel-dev §4.3), as the head checkpoint saved it or as a plan carries it from call to call."""

    failure_count: int = 0
    open: bool = False


@dataclass(frozen=True, slots=True)
class CheckpointRow:
    checkpoint_id: str
    parent_checkpoint_id: str | None
    step: int | None
    source: str | None
    created_at: datetime | None
    run_id: str | None
    model: str | None
    metadata: Mapping[str, Any]  # redacted
    messages: int | None  # None when the checkpoint is unreadable
    estimated_tokens: int | None
    tiktoken_tokens: int | None = None
    input_tokens: int | None = None  # provider-reported, from the newest AI message's usage_metadata
    readable: bool = True
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class CheckpointState:
    """The decoded state of one checkpoint."""

    checkpoint: CheckpointRow
    messages: tuple[Message, ...]
    channels: Mapping[str, Any] = field(default_factory=dict)  # other channel values, plain data


@dataclass(frozen=True, slots=True)
class SummaryRow:
    summary_id: str
    thread_id: str
    summary_text: str
    compact_up_to_index: int
    compacted_at: int  # Mycel stores the message count here, not a time
    is_split_turn: bool
    split_turn_prefix: str | None
    is_active: bool
    created_at: datetime | None
    store: str  # "summary" or "main": where the row was found


@dataclass(frozen=True, slots=True)
class AgentRecord:
    """One sub-agent as agent_registry.db names it (reference §2.10)."""

    agent_id: str
    name: str
    thread_id: str  # `subagent-<agent_id>` in Mycel's code
    status: str  # running | completed | error
    parent_thread_id: str | None  # Mycel's column is `parent_agent_id`, but it holds the parent's thread id
    subagent_type: str | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class QueueItem:
    id: int
    thread_id: str
    content: str
    notification_type: str
    source: str | None
    sender_id: str | None
    sender_name: str | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class FileOperation:
    id: str
    thread_id: str
    run_id: str  # Mycel's file_operations.checkpoint_id holds a run id, not a LangGraph checkpoint id
    timestamp: datetime | None
    operation_type: str
    file_path: str
    before_content: str | None
    after_content: str
    changes: Any
    status: str
    store: str


@dataclass(frozen=True, slots=True)
class RunEvent:
    seq: int
    thread_id: str
    run_id: str
    event_type: str
    data: Any
    message_id: str | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class SpillFile:
    tool_call_id: str
    path: Path
    size: int
    text: str | None  # None when unreadable or outside the tool-results folder
    problem: str | None = None


@dataclass(frozen=True, slots=True)
class StoreFileStatus:
    """What one of Mycel's files looks like to the reader: present or not, its tables, schema remarks."""

    role: str
    path: Path
    exists: bool
    size: int | None
    tables: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # schema remarks, e.g. "writes has no task_path column (saver 3.0 layout)"
    journal_mode: str | None = None  # "wal" or "rollback", from the file header
    problem: StoreProblem | None = None


@dataclass(frozen=True, slots=True)
class SandboxLease:
    lease_id: str
    provider_name: str
    desired_state: str | None
    observed_state: str | None
    instance_status: str | None
    current_instance_id: str | None
    status: str | None
    volume_id: str | None
    recipe_id: str | None
    last_error: str | None
    created_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True, slots=True)
class SandboxInstance:
    instance_id: str
    lease_id: str
    provider_session_id: str
    status: str | None
    created_at: datetime | None
    last_seen_at: datetime | None


@dataclass(frozen=True, slots=True)
class SandboxTerminal:
    terminal_id: str
    lease_id: str
    cwd: str
    state_version: int | None
    is_active: bool  # thread_terminal_pointers.active_terminal_id
    is_default: bool
    created_at: datetime | None
    updated_at: datetime | None


@dataclass(frozen=True, slots=True)
class SandboxSession:
    chat_session_id: str
    terminal_id: str
    lease_id: str
    status: str
    started_at: datetime | None
    last_active_at: datetime | None
    ended_at: datetime | None
    close_reason: str | None


@dataclass(frozen=True, slots=True)
class LeaseEvent:
    event_id: str
    lease_id: str
    event_type: str
    source: str
    payload: Any  # parsed JSON, redacted
    error: str | None
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class ResourceSnapshot:
    lease_id: str
    provider_name: str
    observed_state: str
    probe_mode: str
    cpu_used: float | None
    cpu_limit: float | None
    memory_used_mb: float | None
    memory_total_mb: float | None
    disk_used_gb: float | None
    disk_total_gb: float | None
    probe_error: str | None
    collected_at: datetime | None


@dataclass(frozen=True, slots=True)
class SandboxVolume:
    volume_id: str
    name: str | None
    source: Any  # parsed JSON VolumeSource, redacted
    created_at: datetime | None


@dataclass(frozen=True, slots=True)
class SandboxState:
    """A thread's sandbox, found through its terminals (the only durable thread-lease link in sandbox.db)."""

    thread_id: str
    state: str | None  # the active lease's observed state, "observed -> desired" while they differ
    leases: tuple[SandboxLease, ...] = ()
    instances: tuple[SandboxInstance, ...] = ()
    terminals: tuple[SandboxTerminal, ...] = ()
    sessions: tuple[SandboxSession, ...] = ()
    lease_events: tuple[LeaseEvent, ...] = ()
    snapshots: tuple[ResourceSnapshot, ...] = ()
    volumes: tuple[SandboxVolume, ...] = ()

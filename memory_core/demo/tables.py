"""Mycel's own table layouts (reference §2, main @ 9a39b22) and writers that fill them.

Each writer creates its tables with Mycel's exact DDL when missing, inserts rows in one transaction,
and leaves the file in WAL mode as Mycel does. Rows are typed records; values are stored in the
formats Mycel uses (epoch REAL, naive local ISO, SQLite UTC text — reference §9 "Timestamps").
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from memory_core.demo.graph import RunEventsTableRow
from memory_core.demo.tools import FileOperationsTableRow

THREADS_DDL = """
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    member_id TEXT NOT NULL,
    sandbox_type TEXT DEFAULT 'local',
    model TEXT,
    cwd TEXT,
    observation_provider TEXT,
    agent TEXT,
    is_main INTEGER NOT NULL DEFAULT 0,
    branch_index INTEGER NOT NULL,
    created_at REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS idx_threads_single_main_per_member ON threads(member_id) WHERE is_main = 1;
CREATE UNIQUE INDEX IF NOT EXISTS idx_threads_member_branch ON threads(member_id, branch_index);
CREATE INDEX IF NOT EXISTS idx_threads_member_created ON threads(member_id, branch_index, created_at);
"""

MEMBERS_DDL = """
CREATE TABLE IF NOT EXISTS members (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    avatar TEXT,
    description TEXT,
    config_dir TEXT,
    owner_user_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL,
    next_entity_seq INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS accounts (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL UNIQUE,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT,
    api_key_hash TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS entities (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    member_id TEXT NOT NULL,
    name TEXT NOT NULL,
    avatar TEXT,
    thread_id TEXT UNIQUE,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_entities_member ON entities(member_id);
"""

SUMMARIES_DDL = """
CREATE TABLE IF NOT EXISTS summaries (
    summary_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    summary_text TEXT NOT NULL,
    compact_up_to_index INTEGER NOT NULL,
    compacted_at INTEGER NOT NULL,
    is_split_turn BOOLEAN DEFAULT FALSE,
    split_turn_prefix TEXT,
    is_active BOOLEAN DEFAULT TRUE,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_summaries_thread_id
ON summaries(thread_id, is_active, created_at DESC);
"""

FILE_OPERATIONS_DDL = """
CREATE TABLE IF NOT EXISTS file_operations (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    timestamp REAL NOT NULL,
    operation_type TEXT NOT NULL,
    file_path TEXT NOT NULL,
    before_content TEXT,
    after_content TEXT NOT NULL,
    changes TEXT,
    status TEXT DEFAULT 'applied'
);
CREATE INDEX IF NOT EXISTS idx_file_ops_thread
ON file_operations(thread_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_file_ops_checkpoint
ON file_operations(checkpoint_id);
"""

QUEUE_DDL = """
CREATE TABLE IF NOT EXISTS message_queue (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  thread_id         TEXT NOT NULL,
  content           TEXT NOT NULL,
  notification_type TEXT NOT NULL DEFAULT 'steer',
  source            TEXT,
  sender_id         TEXT,
  sender_name       TEXT,
  created_at        TEXT DEFAULT (datetime('now'))
);
CREATE INDEX IF NOT EXISTS idx_mq_thread ON message_queue (thread_id, id);
"""

RUN_EVENTS_DDL = """
CREATE TABLE IF NOT EXISTS run_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    thread_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    data TEXT NOT NULL,
    message_id TEXT,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE INDEX IF NOT EXISTS idx_run_events_thread_run
ON run_events (thread_id, run_id, seq);
"""

SANDBOX_DDL = """
CREATE TABLE IF NOT EXISTS sandbox_leases (
    lease_id TEXT PRIMARY KEY,
    provider_name TEXT NOT NULL,
    recipe_id TEXT,
    recipe_json TEXT,
    workspace_key TEXT,
    current_instance_id TEXT,
    instance_created_at TIMESTAMP,
    desired_state TEXT NOT NULL DEFAULT 'running',
    observed_state TEXT NOT NULL DEFAULT 'detached',
    instance_status TEXT NOT NULL DEFAULT 'detached',
    version INTEGER NOT NULL DEFAULT 0,
    observed_at TIMESTAMP,
    last_error TEXT,
    needs_refresh INTEGER NOT NULL DEFAULT 0,
    refresh_hint_at TIMESTAMP,
    status TEXT DEFAULT 'active',
    volume_id TEXT,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS sandbox_instances (
    instance_id TEXT PRIMARY KEY,
    lease_id TEXT NOT NULL,
    provider_session_id TEXT NOT NULL,
    status TEXT DEFAULT 'running',
    created_at TIMESTAMP NOT NULL,
    last_seen_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS lease_events (
    event_id TEXT PRIMARY KEY,
    lease_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    source TEXT NOT NULL,
    payload_json TEXT,
    error TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_lease_events_lease_created
ON lease_events(lease_id, created_at DESC);
CREATE TABLE IF NOT EXISTS abstract_terminals (
    terminal_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    lease_id TEXT NOT NULL,
    cwd TEXT NOT NULL,
    env_delta_json TEXT DEFAULT '{}',
    state_version INTEGER DEFAULT 0,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS thread_terminal_pointers (
    thread_id TEXT PRIMARY KEY,
    active_terminal_id TEXT NOT NULL,
    default_terminal_id TEXT NOT NULL,
    updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    FOREIGN KEY (active_terminal_id) REFERENCES abstract_terminals(terminal_id),
    FOREIGN KEY (default_terminal_id) REFERENCES abstract_terminals(terminal_id)
);
CREATE INDEX IF NOT EXISTS idx_abstract_terminals_thread_created
ON abstract_terminals(thread_id, created_at DESC);
CREATE TABLE IF NOT EXISTS chat_sessions (
    chat_session_id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    terminal_id TEXT NOT NULL,
    lease_id TEXT NOT NULL,
    runtime_id TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    idle_ttl_sec INTEGER NOT NULL,
    max_duration_sec INTEGER NOT NULL,
    budget_json TEXT,
    started_at TIMESTAMP NOT NULL,
    last_active_at TIMESTAMP NOT NULL,
    ended_at TIMESTAMP,
    close_reason TEXT,
    FOREIGN KEY (terminal_id) REFERENCES abstract_terminals(terminal_id),
    FOREIGN KEY (lease_id) REFERENCES sandbox_leases(lease_id)
);
CREATE INDEX IF NOT EXISTS idx_chat_sessions_thread_status
ON chat_sessions(thread_id, status, started_at DESC);
CREATE TABLE IF NOT EXISTS terminal_commands (
    command_id TEXT PRIMARY KEY,
    terminal_id TEXT NOT NULL,
    chat_session_id TEXT,
    command_line TEXT NOT NULL,
    cwd TEXT NOT NULL,
    status TEXT NOT NULL,
    stdout TEXT DEFAULT '',
    stderr TEXT DEFAULT '',
    exit_code INTEGER,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL,
    finished_at TIMESTAMP,
    FOREIGN KEY (terminal_id) REFERENCES abstract_terminals(terminal_id),
    FOREIGN KEY (chat_session_id) REFERENCES chat_sessions(chat_session_id)
);
CREATE INDEX IF NOT EXISTS idx_terminal_commands_terminal_created
ON terminal_commands(terminal_id, created_at DESC);
CREATE TABLE IF NOT EXISTS terminal_command_chunks (
    chunk_id INTEGER PRIMARY KEY AUTOINCREMENT,
    command_id TEXT NOT NULL,
    stream TEXT NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    content TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL,
    FOREIGN KEY (command_id) REFERENCES terminal_commands(command_id)
);
CREATE INDEX IF NOT EXISTS idx_terminal_command_chunks_command_order
ON terminal_command_chunks(command_id, chunk_id);
CREATE UNIQUE INDEX IF NOT EXISTS uq_chat_sessions_active_thread
ON chat_sessions(terminal_id)
WHERE status IN ('active', 'idle', 'paused');
CREATE TABLE IF NOT EXISTS lease_resource_snapshots (
    lease_id TEXT PRIMARY KEY,
    provider_name TEXT NOT NULL,
    observed_state TEXT NOT NULL,
    probe_mode TEXT NOT NULL,
    cpu_used REAL,
    cpu_limit REAL,
    memory_used_mb REAL,
    memory_total_mb REAL,
    disk_used_gb REAL,
    disk_total_gb REAL,
    network_rx_kbps REAL,
    network_tx_kbps REAL,
    probe_error TEXT,
    collected_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS sandbox_volumes (
    volume_id  TEXT PRIMARY KEY,
    name       TEXT,
    source     TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sync_files (
    thread_id TEXT,
    relative_path TEXT,
    checksum TEXT,
    last_synced INTEGER,
    PRIMARY KEY (thread_id, relative_path)
);
CREATE TABLE IF NOT EXISTS provider_events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    provider_name TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    payload_json TEXT,
    matched_lease_id TEXT,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_provider_events_created
ON provider_events(created_at DESC);
"""


@dataclass(frozen=True, slots=True)
class ThreadsTableRow:
    """A `threads` row (Mycel web thread)."""

    id: str
    member_id: str
    sandbox_type: str
    model: str | None
    cwd: str | None
    observation_provider: str | None
    agent: str | None
    is_main: int
    branch_index: int
    created_at: float


@dataclass(frozen=True, slots=True)
class MemberRow:
    """A `members` row: the human owner or an agent (`type='mycel_agent'`)."""

    id: str
    name: str
    type: str
    avatar: str | None
    description: str | None
    config_dir: str | None
    owner_user_id: str | None
    created_at: float
    updated_at: float | None
    next_entity_seq: int


@dataclass(frozen=True, slots=True)
class SummaryEntry:
    """A `summaries` row; `is_active` is stored as 1/0 and `created_at` as naive local ISO."""

    summary_id: str
    thread_id: str
    summary_text: str
    compact_up_to_index: int
    compacted_at: int
    is_split_turn: bool
    split_turn_prefix: str | None
    is_active: bool
    created_at: str


@dataclass(frozen=True, slots=True)
class MessageQueueTableRow:
    """A pending `message_queue` row (Mycel deletes rows when it consumes them)."""

    thread_id: str
    content: str
    notification_type: str
    source: str | None
    sender_id: str | None
    sender_name: str | None
    created_at: str


@dataclass(frozen=True, slots=True)
class SandboxRecord:
    """One thread's sandbox resources as Mycel creates them: volume, lease, instance, terminal, session."""

    thread_id: str
    volume_id: str
    volume_path: str
    lease_id: str
    instance_id: str | None
    terminal_id: str
    cwd: str
    session_id: str | None
    runtime_id: str | None
    lease_event_id: str
    created_at: str
    active_at: str
    snapshot_at: str


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=30)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _insert(
    conn: sqlite3.Connection, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> None:
    marks = ", ".join("?" for _ in columns)
    conn.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)  # noqa: S608


def write_threads_table(path: Path, threads: Iterable[ThreadsTableRow], members: Iterable[MemberRow]) -> None:
    """Write `threads`, `members`, one `entities` row per agent (its main thread), empty `accounts`."""
    threads, members = list(threads), list(members)
    with _connect(path) as conn:
        conn.executescript(THREADS_DDL + MEMBERS_DDL)
        _insert(conn, "threads", ThreadsTableRow.__slots__, (astuple(t) for t in threads))
        _insert(conn, "members", MemberRow.__slots__, (astuple(m) for m in members))
        mains = {t.member_id: t for t in threads if t.is_main}
        _insert(
            conn,
            "entities",
            ("id", "type", "member_id", "name", "avatar", "thread_id", "created_at"),
            (
                (m.id, "agent", m.id, m.name, None, mains[m.id].id, mains[m.id].created_at)
                for m in members
                if m.id in mains
            ),
        )
    conn.close()


def write_summaries(path: Path, rows: Iterable[SummaryEntry]) -> None:
    """Write `summaries` rows (summary.db for web threads, leon.db for sub-agents and scripts)."""
    with _connect(path) as conn:
        conn.executescript(SUMMARIES_DDL)
        _insert(
            conn,
            "summaries",
            SummaryEntry.__slots__,
            (
                (
                    r.summary_id,
                    r.thread_id,
                    r.summary_text,
                    r.compact_up_to_index,
                    r.compacted_at,
                    int(r.is_split_turn),
                    r.split_turn_prefix,
                    int(r.is_active),
                    r.created_at,
                )
                for r in rows
            ),
        )
    conn.close()


def write_file_operations(path: Path, operations: Iterable[FileOperationsTableRow]) -> None:
    """Write `file_operations` rows (file_ops.db for web threads)."""
    with _connect(path) as conn:
        conn.executescript(FILE_OPERATIONS_DDL)
        _insert(conn, "file_operations", FileOperationsTableRow.__slots__, (astuple(op) for op in operations))
    conn.close()


def write_run_events(path: Path, events: Iterable[RunEventsTableRow]) -> None:
    """Write `run_events` rows in order (seq is assigned by SQLite, as in Mycel)."""
    with _connect(path) as conn:
        conn.executescript(RUN_EVENTS_DDL)
        _insert(
            conn,
            "run_events",
            ("thread_id", "run_id", "event_type", "data", "message_id", "created_at"),
            (
                (
                    e.thread_id,
                    e.run_id,
                    e.event_type,
                    json.dumps(e.data, ensure_ascii=False),
                    e.message_id,
                    e.created_at,
                )
                for e in events
            ),
        )
    conn.close()


def write_queue(path: Path, items: Iterable[MessageQueueTableRow]) -> None:
    """Write pending `message_queue` rows (creates the table even when there are none)."""
    with _connect(path) as conn:
        conn.executescript(QUEUE_DDL)
        _insert(conn, "message_queue", MessageQueueTableRow.__slots__, (astuple(i) for i in items))
    conn.close()


_LOCAL_RECIPE = {
    "id": "local:default",
    "name": "Local Default",
    "desc": "Default recipe for local",
    "provider_type": "local",
    "features": {},
    "builtin": True,
}


def write_sandbox(path: Path, records: Iterable[SandboxRecord]) -> None:
    """Write every sandbox.db table; per record a volume, lease, terminal (+ pointer), lease event and
    resource snapshot, plus an instance and an active chat session when the thread ran commands."""
    with _connect(path) as conn:
        conn.executescript(SANDBOX_DDL)
        for r in records:
            running = r.instance_id is not None
            state = "running" if running else "detached"
            conn.execute(
                "INSERT INTO sandbox_volumes VALUES (?, ?, ?, ?)",
                (
                    r.volume_id,
                    f"vol-{r.thread_id}",
                    json.dumps({"type": "host", "path": r.volume_path}),
                    r.created_at,
                ),
            )
            conn.execute(
                "INSERT INTO sandbox_leases (lease_id, provider_name, recipe_id, recipe_json, workspace_key,"
                " current_instance_id, instance_created_at, desired_state, observed_state, instance_status, version,"
                " observed_at, last_error, needs_refresh, refresh_hint_at, status, volume_id, created_at, updated_at)"
                " VALUES (?, 'local', 'local:default', ?, NULL, ?, ?, 'running', ?, ?, ?, ?, NULL, 0, NULL,"
                " 'active', ?, ?, ?)",
                (
                    r.lease_id,
                    json.dumps(_LOCAL_RECIPE),
                    r.instance_id,
                    r.active_at if running else None,
                    state,
                    state,
                    1 if running else 0,
                    r.active_at if running else None,
                    r.volume_id,
                    r.created_at,
                    r.active_at,
                ),
            )
            conn.execute(
                "INSERT INTO abstract_terminals VALUES (?, ?, ?, ?, '{}', 0, ?, ?)",
                (r.terminal_id, r.thread_id, r.lease_id, r.cwd, r.created_at, r.created_at),
            )
            conn.execute(
                "INSERT INTO thread_terminal_pointers VALUES (?, ?, ?, ?)",
                (r.thread_id, r.terminal_id, r.terminal_id, r.created_at),
            )
            conn.execute(
                "INSERT INTO lease_events VALUES (?, ?, ?, ?, ?, NULL, ?)",
                (
                    r.lease_event_id,
                    r.lease_id,
                    "intent.ensure_running" if running else "observe.status",
                    "run.create" if running else "thread.create",
                    json.dumps({"created": running, "instance_id": r.instance_id}),
                    r.active_at,
                ),
            )
            conn.execute(
                "INSERT INTO lease_resource_snapshots VALUES (?, 'local', ?, ?, ?, NULL, ?, 24105.0, 25.0, 252.0,"
                " NULL, NULL, NULL, ?, ?)",
                (
                    r.lease_id,
                    state,
                    "create_running" if running else "status",
                    37.5 if running else 0.0,
                    480.0 if running else 0.0,
                    r.snapshot_at,
                    r.snapshot_at,
                ),
            )
            if running:
                conn.execute(
                    "INSERT INTO sandbox_instances VALUES (?, ?, ?, 'running', ?, ?)",
                    (r.instance_id, r.lease_id, r.instance_id, r.active_at, r.active_at),
                )
                conn.execute(
                    "INSERT INTO chat_sessions VALUES (?, ?, ?, ?, ?, 'active', 600, 86400, NULL, ?, ?, NULL, NULL)",
                    (
                        r.session_id,
                        r.thread_id,
                        r.terminal_id,
                        r.lease_id,
                        r.runtime_id,
                        r.active_at,
                        r.active_at,
                    ),
                )
    conn.close()


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_runtime_json(
    path: Path, *, context_limit: int = 0, memory: Mapping[str, Any] | None = None
) -> None:
    """Write a user `runtime.json` in the nested form Mycel actually reads (top-level keys are ignored)."""
    write_json(
        path,
        {
            "runtime": {"context_limit": context_limit, "enable_audit_log": True},
            "memory": dict(
                memory
                or {
                    "pruning": {"soft_trim_chars": 3000, "hard_clear_threshold": 10000, "protect_recent": 3},
                    "compaction": {"keep_recent_tokens": 20000},
                }
            ),
            "tools": {"spill_buffer": {"enabled": True, "default_threshold": 50000}},
        },
    )


def write_models_json(path: Path, *, virtual: Mapping[str, Mapping[str, Any]]) -> None:
    """Write a user `models.json` whose `mapping` defines the demo's virtual `leon:*` models."""
    write_json(path, {"mapping": {name: dict(spec) for name, spec in virtual.items()}})

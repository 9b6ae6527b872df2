"""Mycel dev's other stores in PostgreSQL (reference mycel-dev §3): summaries, queue, run events, file
operations and threads in schema `agent`, agent names in `identity.users`, read with plain SQL.

Like every read here, each runs inside connect.read_only (READ ONLY, time limit, row cap) and names its
schema. Dev's live DDL is not published, so the columns we read are checked in pg_catalog first: a missing
table means "not in Postgres" (the caller falls back to SQLite), a missing column or a refused SELECT is a
plain StoreProblem, never a failed query.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_core.records import (
    FileOperation,
    ProblemKind,
    QueueItem,
    RunEvent,
    StoreProblem,
    SummaryRow,
)
from memory_core.stores.postgres.connect import PgRead
from memory_core.stores.rows import file_operation, masked_or_none, queue_item, run_event, summary_row
from memory_core.stores.times import from_epoch, from_local_iso

USERS_SCHEMA = "identity"

# The columns we read, by table: dev's repos' select/insert lists (§3.2–3.6).
COLUMNS: Mapping[str, tuple[str, ...]] = {
    "summaries": (
        "summary_id",
        "thread_id",
        "summary_text",
        "compact_up_to_index",
        "compacted_at",
        "is_split_turn",
        "split_turn_prefix",
        "is_active",
        "created_at",
    ),
    "message_queue": (
        "id",
        "thread_id",
        "content",
        "notification_type",
        "source",
        "sender_user_id",
        "sender_name",
        "created_at",
    ),
    "run_events": ("seq", "thread_id", "run_id", "event_type", "data", "message_id", "created_at"),
    "file_operations": (
        "id",
        "thread_id",
        "checkpoint_id",
        "timestamp",
        "operation_type",
        "file_path",
        "before_content",
        "after_content",
        "changes",
        "status",
    ),
    "threads": ("id", "agent_user_id", "model", "sandbox_type", "cwd", "created_at"),
    "users": ("id", "display_name"),
}
STORE_OF: Mapping[str, str] = {
    "summaries": "summary",
    "message_queue": "queue",
    "run_events": "events",
    "file_operations": "file_ops",
    "threads": "main",
    "users": "main",
}
SUMMARY_TIME_NOTE = (
    "agent.summaries.created_at is Mycel's naive local time (datetime.now().isoformat()): "
    "shown as written, in the Mycel host's zone, not converted"
)


@dataclass(frozen=True, slots=True)
class SideTable:
    """A side table as pg_catalog shows it: schema-qualified name, its columns, and whether we may read it."""

    schema: str
    name: str
    columns: frozenset[str]
    readable: bool

    @property
    def qualified(self) -> str:
        return f'"{self.schema.replace(chr(34), chr(34) * 2)}".{self.name}'

    def problem(self) -> StoreProblem | None:
        """Why it cannot be read as dev's table, or None."""
        store = STORE_OF[self.name]
        if not self.readable:
            return StoreProblem(
                ProblemKind.DENIED,
                store,
                f"this role may not SELECT from {self.schema}.{self.name} (see the README's read-only role)",
            )
        lacking = [c for c in COLUMNS[self.name] if c not in self.columns]
        if lacking:
            return StoreProblem(
                ProblemKind.UNKNOWN_SCHEMA,
                store,
                f"{self.schema}.{self.name} lacks {', '.join(lacking)} (not Mycel dev's layout of it)",
            )
        return None


def side_tables(read: PgRead, schema: str) -> dict[str, SideTable]:
    """The side tables present in `schema` (and identity.users), by bare name."""
    # pg_catalog, not information_schema, which hides tables we may not read (see layout.py).
    found = read.rows(
        "SELECT n.nspname, c.relname, array_agg(a.attname::text), "
        "has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
        "WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ("
        "(n.nspname = %s AND c.relname = ANY(%s)) OR (n.nspname = %s AND c.relname = 'users')) "
        "GROUP BY n.nspname, c.relname, c.oid, n.oid",
        (schema, [t for t in COLUMNS if t != "users"], USERS_SCHEMA),
    )
    return {
        str(name): SideTable(str(nsp), str(name), frozenset(str(c) for c in cols), bool(ok))
        for nsp, name, cols, ok in found
    }


def _time(value: Any) -> datetime | None:
    """A dev time as stored: timestamptz (a datetime), ISO text (UTC from dev's _to_timestamptz), or epoch."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, int | float):
        return from_epoch(value)
    found = from_local_iso(value)
    if found is not None and found.tzinfo is None:
        # Dev writes these as UTC ISO strings; only summaries keep naive local time (read apart, below).
        return found.replace(tzinfo=UTC)
    return found


def _select(table: SideTable) -> str:
    return ", ".join(f'"{c}"' for c in COLUMNS[table.name])


def list_summaries(read: PgRead, table: SideTable, thread_id: str) -> list[SummaryRow]:
    """One thread's summaries, oldest first (dev's latest = active, newest created_at)."""
    rows = read.rows(
        f"SELECT {_select(table)} FROM {table.qualified} WHERE thread_id = %s ORDER BY created_at, summary_id",
        (thread_id,),
    )
    return [summary_row(r, store="summary") for r in rows]


def list_queue(read: PgRead, table: SideTable, thread_id: str | None) -> list[QueueItem]:
    """Pending items, oldest first (dev dequeues the oldest)."""
    where, params = ("WHERE thread_id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(
        f"SELECT {_select(table)} FROM {table.qualified} {where} ORDER BY created_at, id", params
    )
    return [queue_item(r, created_at=_time(r[7])) for r in rows]


def list_run_events(read: PgRead, table: SideTable, thread_id: str) -> list[RunEvent]:
    rows = read.rows(
        f"SELECT {_select(table)} FROM {table.qualified} WHERE thread_id = %s ORDER BY seq", (thread_id,)
    )
    return [run_event(r, created_at=_time(r[6])) for r in rows]


def list_file_operations(read: PgRead, table: SideTable, thread_id: str) -> list[FileOperation]:
    rows = read.rows(
        f'SELECT {_select(table)} FROM {table.qualified} WHERE thread_id = %s ORDER BY "timestamp", id',
        (thread_id,),
    )
    return [file_operation(r, timestamp=_time(r[3]), store="file_ops") for r in rows]


@dataclass(frozen=True, slots=True)
class DevThreadInfo:
    """An agent.threads row with its agent's display name (identity.users)."""

    thread_id: str
    agent_user_id: str | None
    name: str | None
    model: str | None
    sandbox_type: str | None
    cwd: str | None
    created_at: datetime | None


def thread_infos(
    read: PgRead, threads: SideTable, users: SideTable | None, thread_id: str | None
) -> dict[str, DevThreadInfo]:
    """agent.threads rows by id, named after their agent when identity.users can be read."""
    name = "u.display_name" if users is not None else "NULL"
    join = f"LEFT JOIN {users.qualified} u ON u.id = t.agent_user_id" if users is not None else ""
    where, params = ("WHERE t.id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(
        f"SELECT t.id, t.agent_user_id, {name}, t.model, t.sandbox_type, t.cwd, t.created_at "
        f"FROM {threads.qualified} t {join} {where}",
        params,
    )
    return {
        str(r[0]): DevThreadInfo(str(r[0]), r[1], masked_or_none(r[2]), r[3], r[4], r[5], _time(r[6]))
        for r in rows
    }


def summary_counts(read: PgRead, table: SideTable, thread_id: str | None) -> dict[str, tuple[int, bool]]:
    where, params = ("WHERE thread_id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(
        f"SELECT thread_id, count(*), bool_or(is_active::boolean) FROM {table.qualified} {where} GROUP BY thread_id",
        params,
    )
    return {str(r[0]): (int(r[1]), bool(r[2])) for r in rows}


def queue_counts(read: PgRead, table: SideTable, thread_id: str | None) -> dict[str, int]:
    where, params = ("WHERE thread_id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(f"SELECT thread_id, count(*) FROM {table.qualified} {where} GROUP BY thread_id", params)
    return {str(r[0]): int(r[1]) for r in rows}

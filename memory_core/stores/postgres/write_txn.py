"""The one write transaction a rollback takes on PostgreSQL: a thread lock, then everything on one connection.

LangGraph's saver has no compare-and-swap, so "the head is still what the preview saw" and the write
must happen under one lock: a transaction-scoped advisory lock on (schema, thread). It is released by the
commit or rollback itself, so nothing is left on the connection (fine behind PgBouncer's transaction
mode), and it needs no privilege: a role without INSERT still fails at its first write, inside the same
transaction, so nothing is half-written. The busy check under that lock reads dev's `run_events` on the
same connection (the reader's side_stores.py reads them for previews, through its own pool).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

import psycopg

from memory_core.records import RunEvent

# The first key of the two-key advisory lock, so our locks never meet another application's.
_LOCK_NAMESPACE = "mycel-dashboard-rollback"
# The newest events of a thread are enough to tell whether its latest run has ended.
_RUN_EVENT_LIMIT = 500
RUN_EVENTS_SQL = (
    "SELECT seq, thread_id, run_id, event_type, message_id, created_at FROM {table} "
    "WHERE thread_id = %s ORDER BY seq DESC LIMIT " + str(_RUN_EVENT_LIMIT)
)
# to_regclass is NULL for a missing table: dev's sample (no web app) has no run_events at all.
RUN_EVENTS_EXIST_SQL = "SELECT to_regclass(%s) IS NOT NULL"


def quoted(schema: str) -> str:
    return '"' + schema.replace('"', '""') + '"'


def run_event_rows(rows: list[tuple[Any, ...]]) -> list[RunEvent]:
    """`agent.run_events` rows (RUN_EVENTS_SQL) as RunEvents, the shape rollback.running_status reads."""
    return [
        RunEvent(
            seq=int(seq),
            thread_id=str(thread_id),
            run_id=str(run_id),
            event_type=str(event_type),
            data=None,  # the busy check needs only the types; data may be large
            message_id=str(message_id) if message_id is not None else None,
            created_at=created_at if isinstance(created_at, datetime) else None,
        )
        for seq, thread_id, run_id, event_type, message_id, created_at in rows
    ]


@asynccontextmanager
async def write_transaction(url: str, *, timeout_s: float) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
    """One transaction on a fresh connection with local time limits; commits on a clean exit."""
    conn = await psycopg.AsyncConnection.connect(
        url, autocommit=False, prepare_threshold=None, connect_timeout=max(1, round(timeout_s))
    )
    async with conn, conn.transaction():
        millis = str(int(timeout_s * 1000))
        # SET LOCAL (set_config(..., true)): nothing outlives the transaction on a pooled connection.
        await conn.execute("SELECT set_config('statement_timeout', %s, true)", (millis,))
        await conn.execute("SELECT set_config('lock_timeout', %s, true)", (millis,))
        yield conn


async def lock_thread(conn: psycopg.AsyncConnection[Any], schema: str, thread_id: str) -> None:
    """Hold the thread's advisory lock until the transaction ends, and point `search_path` at its schema.

    LangGraph's saver names its tables unqualified, hence the search_path (SET LOCAL as well). A second
    dashboard waits here at most the lock timeout, then finds that the head moved.
    """
    await conn.execute("SELECT set_config('search_path', %s, true)", (quoted(schema),))
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
        (_LOCK_NAMESPACE, f"{schema}/{thread_id}"),
    )


async def latest_run_events(
    conn: psycopg.AsyncConnection[Any], schema: str, thread_id: str
) -> list[RunEvent]:
    """The thread's newest run events in `schema.run_events` (none when Mycel has no such table)."""
    table = f"{quoted(schema)}.run_events"
    cursor = await conn.execute(RUN_EVENTS_EXIST_SQL, (table,))
    exists = await cursor.fetchone()
    if not exists or not exists[0]:
        return []
    cursor = await conn.execute(RUN_EVENTS_SQL.format(table=table), (thread_id,))
    return run_event_rows(list(await cursor.fetchall()))

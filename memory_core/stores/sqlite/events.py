"""Mycel's run events (events.db `run_events`, reference §2.8): a short replay buffer, not history."""

from __future__ import annotations

from memory_core.records import RunEvent
from memory_core.stores.rows import run_event
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.times import from_sqlite_utc


def list_run_events(db: ReadOnlyDB, thread_id: str) -> list[RunEvent]:
    """A thread's events in sequence order."""
    if not db.require_table("run_events"):
        return []
    rows = db.rows(
        "SELECT seq, thread_id, run_id, event_type, data, message_id, created_at FROM run_events "
        "WHERE thread_id = ? ORDER BY seq",
        (thread_id,),
    )
    return [run_event(r, created_at=from_sqlite_utc(r[6])) for r in rows]

"""Mycel's run events (events.db `run_events`, reference §2.8): a short replay buffer, not history."""

from __future__ import annotations

import json
from typing import Any

from memory_core.records import RunEvent
from memory_core.stores.redact import redact
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.times import from_sqlite_utc


def parse_json_text(value: Any) -> Any:
    """JSON text as redacted plain data; text that is not JSON stays as it is."""
    if not isinstance(value, str | bytes):
        return value
    try:
        return redact(json.loads(value))
    except (ValueError, UnicodeDecodeError):
        return value


def list_run_events(db: ReadOnlyDB, thread_id: str) -> list[RunEvent]:
    """A thread's events in sequence order."""
    if not db.require_table("run_events"):
        return []
    rows = db.rows(
        "SELECT seq, thread_id, run_id, event_type, data, message_id, created_at FROM run_events "
        "WHERE thread_id = ? ORDER BY seq",
        (thread_id,),
    )
    return [
        RunEvent(
            seq=int(r[0]),
            thread_id=str(r[1]),
            run_id=str(r[2]),
            event_type=str(r[3]),
            data=parse_json_text(r[4]),
            message_id=r[5],
            created_at=from_sqlite_utc(r[6]),
        )
        for r in rows
    ]

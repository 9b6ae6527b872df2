"""Rows become records here, once for both engines: each side store's columns in one order (the SQL of
each engine selects them so), and each engine hands its own time already read (their spellings differ).

Every text leaves with the secrets inside it masked to their own length (`masked`), as messages do at the
decoder: a summary, a queued item, a run event's payload or a file the agent wrote may hold a key a tool
printed, and no page, API answer or CLI output may show it; lengths, which Mycel's figures read, stay.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory_core.records import FileOperation, QueueItem, RunEvent, SummaryRow
from memory_core.secrets import redact_text
from memory_core.stores.redact import masked_texts, redact
from memory_core.stores.times import from_local_iso


def masked(text: str) -> str:
    """`text` with every secret inside it masked to its own length."""
    return redact_text(text, keep_length=True)


def masked_or_none(value: Any) -> str | None:
    return None if value is None else masked(str(value))


def json_payload(value: Any) -> Any:
    """A JSON column as redacted plain data, secrets inside its strings masked: main keeps JSON text, dev's
    jsonb hands back the value; text that is not JSON stays text."""
    if isinstance(value, bytes):
        try:
            value = value.decode()
        except UnicodeDecodeError:
            return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return masked(value)
    return masked_texts(redact(value))


def summary_row(r: Sequence[Any], *, store: str) -> SummaryRow:
    """summary_id, thread_id, summary_text, compact_up_to_index, compacted_at, is_split_turn,
    split_turn_prefix, is_active, created_at."""
    return SummaryRow(
        summary_id=str(r[0]),
        thread_id=str(r[1]),
        summary_text=masked(str(r[2] or "")),
        compact_up_to_index=int(r[3] or 0),
        compacted_at=int(r[4] or 0),
        is_split_turn=bool(r[5]),
        split_turn_prefix=masked_or_none(r[6]),
        is_active=bool(r[7]),
        # Naive local time as both Mycels write it; a timestamptz column gives an aware one.
        created_at=r[8] if isinstance(r[8], datetime) else from_local_iso(r[8]),
        store=store,
    )


def queue_item(r: Sequence[Any], *, created_at: datetime | None) -> QueueItem:
    """id, thread_id, content, notification_type, source, sender, sender_name, created_at."""
    return QueueItem(
        id=int(r[0]),
        thread_id=str(r[1]),
        content=masked(str(r[2] or "")),
        notification_type=str(r[3] or "steer"),
        source=r[4],
        sender_id=r[5],
        sender_name=masked_or_none(r[6]),
        created_at=created_at,
    )


def run_event(r: Sequence[Any], *, created_at: datetime | None) -> RunEvent:
    """seq, thread_id, run_id, event_type, data, message_id, created_at."""
    return RunEvent(
        seq=int(r[0]),
        thread_id=str(r[1]),
        run_id=str(r[2]),
        event_type=str(r[3]),
        data=json_payload(r[4]),
        message_id=r[5],
        created_at=created_at,
    )


def file_operation(r: Sequence[Any], *, timestamp: datetime | None, store: str) -> FileOperation:
    """id, thread_id, checkpoint_id (a run id in both Mycels), timestamp, operation_type, file_path,
    before_content, after_content, changes, status."""
    return FileOperation(
        id=str(r[0]),
        thread_id=str(r[1]),
        run_id=str(r[2]),
        timestamp=timestamp,
        operation_type=str(r[4]),
        file_path=masked(str(r[5])),
        before_content=masked_or_none(r[6]),
        after_content=masked(str(r[7] or "")),
        changes=json_payload(r[8]),
        status=str(r[9] or "applied"),
        store=store,
    )

"""Mycel's pending queue items (queue.db `message_queue`, reference §2.7 and §7).

leonai named the sender column `sender_entity_id`; an upgraded file has both columns (the rename
migration fails after ADD COLUMN succeeded), old rows in one and new rows in the other.
"""

from __future__ import annotations

from memory_core.records import QueueItem
from memory_core.stores.rows import queue_item
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.times import from_sqlite_utc


def _sender_expression(columns: tuple[str, ...]) -> str:
    present = [c for c in ("sender_id", "sender_entity_id") if c in columns]
    if not present:
        return "NULL"
    return present[0] if len(present) == 1 else f"COALESCE({present[0]}, {present[1]})"


def _optional(columns: tuple[str, ...], name: str, default: str = "NULL") -> str:
    return name if name in columns else default


def list_queue(db: ReadOnlyDB, thread_id: str | None = None) -> list[QueueItem]:
    """Pending items, oldest first (Mycel dequeues by smallest id)."""
    if not db.require_table("message_queue"):
        return []
    cols = db.columns("message_queue")
    where, params = ("WHERE thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    selected = ", ".join(
        (
            "id",
            "thread_id",
            "content",
            _optional(cols, "notification_type", "'steer'"),
            _optional(cols, "source"),
            _sender_expression(cols),
            _optional(cols, "sender_name"),
            _optional(cols, "created_at"),
        )
    )
    rows = db.rows(f"SELECT {selected} FROM message_queue {where} ORDER BY id", params)
    return [queue_item(r, created_at=from_sqlite_utc(r[7])) for r in rows]


def queue_counts(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, int]:
    if not db.require_table("message_queue"):
        return {}
    where, params = ("WHERE thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    rows = db.rows(f"SELECT thread_id, COUNT(*) FROM message_queue {where} GROUP BY thread_id", params)
    return {str(r[0]): int(r[1]) for r in rows}

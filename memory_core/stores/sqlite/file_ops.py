"""Mycel's file operations (file_ops.db for web threads, leon.db otherwise; reference §2.6)."""

from __future__ import annotations

from memory_core.records import FileOperation
from memory_core.stores.rows import file_operation
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.times import from_epoch


def list_file_operations(db: ReadOnlyDB, thread_id: str) -> list[FileOperation]:
    """One thread's operations in this file, oldest first."""
    if not db.require_table("file_operations"):
        return []
    rows = db.rows(
        "SELECT id, thread_id, checkpoint_id, timestamp, operation_type, file_path, before_content, "
        "after_content, changes, status FROM file_operations WHERE thread_id = ? ORDER BY timestamp, rowid",
        (thread_id,),
    )
    return [file_operation(r, timestamp=from_epoch(r[3]), store=db.store) for r in rows]

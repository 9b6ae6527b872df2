"""Mycel's file operations (file_ops.db for web threads, leon.db otherwise; reference §2.6)."""

from __future__ import annotations

from memory_core.records import FileOperation
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.sqlite.events import parse_json_text
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
    return [
        FileOperation(
            id=str(r[0]),
            thread_id=str(r[1]),
            run_id=str(r[2]),
            timestamp=from_epoch(r[3]),
            operation_type=str(r[4]),
            file_path=str(r[5]),
            before_content=r[6],
            after_content=str(r[7] or ""),
            changes=parse_json_text(r[8]),
            status=str(r[9] or "applied"),
            store=db.store,
        )
        for r in rows
    ]

"""A thread's new head in a SQLite leon.db, as a rollback writes one: its newest checkpoint copied under a
newer id (the fleet index's tests move threads this way)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

NEW_HEAD = "1ffffff0-0000-6000-8000-000000000000"  # a uuid6 newer than every checkpoint of the samples


def new_head(leon_db: Path, thread: str, checkpoint_id: str = NEW_HEAD) -> None:
    with closing(sqlite3.connect(leon_db)) as conn, conn:
        conn.execute(
            "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, ?, checkpoint_id, type, checkpoint, metadata "
            "FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
            (checkpoint_id, thread),
        )

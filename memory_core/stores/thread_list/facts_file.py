"""Our own small SQLite files of facts derived from Mycel's checkpoints (never inside Mycel's files).

Each holds one table at a layout version; a file at another version is rebuilt. It is only a cache: a
file that cannot be read or written is set aside (removed), since everything in it can be derived again.
"""

from __future__ import annotations

import sqlite3
from contextlib import suppress
from pathlib import Path

BUSY_MS = 200  # another process saving the same file: wait this long, then skip saving


def connect_facts_file(path: Path, *, table: str, columns: str, version: int) -> sqlite3.Connection:
    """A connection to the facts file at `path`, its `table (columns)` at layout `version`."""
    conn = sqlite3.connect(path, timeout=BUSY_MS / 1000)
    conn.execute("PRAGMA synchronous = NORMAL")  # a cache: losing the last save to a crash costs nothing
    if conn.execute("PRAGMA user_version").fetchone()[0] != version:
        with conn:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute(f"CREATE TABLE {table} ({columns})")
            conn.execute(f"PRAGMA user_version = {version}")
    return conn


def another_process_saving(exc: sqlite3.OperationalError) -> bool:
    """True for "database is locked/busy": skip this save, the facts are derived again when needed."""
    return "locked" in str(exc) or "busy" in str(exc)


def set_aside(path: Path) -> None:
    """Remove a facts file we cannot use, with its WAL and shared-memory files (the caller says why)."""
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        with suppress(OSError):
            part.unlink(missing_ok=True)

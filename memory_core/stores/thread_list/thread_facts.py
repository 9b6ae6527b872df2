"""What one thread's whole checkpoint list yields (per-checkpoint series, the head's per-message counts),
kept in a file of ours beside the head facts (derived.py), so `mycel-memory thread` starts warm.

Checkpoints are only ever appended and never change, so while a thread's checkpoint count and head id are
the same, so is everything derived from its checkpoints. Each thread has one row: the key it was derived
under (the caller adds what else the facts depend on, such as the tiktoken encoding) and the facts as one
JSON text. The file is only a cache: one that cannot be read or written is removed and nothing is kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_VERSION = 1  # bump when the layout of this file changes; older files are then rebuilt
_BUSY_MS = 200  # another process saving the same file: wait this long, then skip saving


class ThreadFactsFile:
    """Kept thread facts for one leon.db (`database`: path, device, inode) in `folder`."""

    def __init__(self, database: tuple[str, int, int], folder: Path) -> None:
        digest = hashlib.sha256(repr(database).encode()).hexdigest()[:16]
        self.path = folder / f"thread-facts-{digest}.sqlite3"

    def lookup(self, thread_id: str, key: Any) -> Any | None:
        """The facts kept for `thread_id` if they were derived under this very key (JSON-able), else None."""
        if not self.path.exists():
            return None
        try:
            with closing(self._connect()) as conn:
                row = conn.execute(
                    "SELECT key, facts FROM thread_facts WHERE thread_id = ?", (thread_id,)
                ).fetchone()
        except sqlite3.Error as exc:
            self._set_aside(f"cannot read {self.path}: {exc}")
            return None
        if row is None or row[0] != _key_text(key):
            return None
        return json.loads(row[1])

    def remember(self, thread_id: str, key: Any, facts: Any) -> None:
        """Keep `facts` (JSON-able) for `thread_id` under `key`, replacing what was kept before."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as conn, conn:
                conn.execute(
                    "INSERT OR REPLACE INTO thread_facts (thread_id, key, facts) VALUES (?, ?, ?)",
                    (thread_id, _key_text(key), json.dumps(facts, ensure_ascii=False)),
                )
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                self._set_aside(f"cannot write {self.path}: {exc}")
            # locked or busy: another process is saving; the facts are derived again next time
        except (sqlite3.Error, OSError) as exc:
            self._set_aside(f"cannot write {self.path}: {exc}")

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=_BUSY_MS / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")  # a cache: losing the last save to a crash costs nothing
        if conn.execute("PRAGMA user_version").fetchone()[0] != _VERSION:
            with conn:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("DROP TABLE IF EXISTS thread_facts")
                conn.execute(
                    "CREATE TABLE thread_facts (thread_id TEXT PRIMARY KEY, key TEXT NOT NULL, facts TEXT NOT NULL)"
                )
                conn.execute(f"PRAGMA user_version = {_VERSION}")
        return conn

    def _set_aside(self, why: str) -> None:
        # Ours, and holding nothing that cannot be derived again from leon.db.
        log.warning("thread facts cache: %s; removed", why)
        for path in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm")):
            with suppress(OSError):
                path.unlink(missing_ok=True)


def _key_text(key: Any) -> str:
    return json.dumps(key, ensure_ascii=False, sort_keys=True)

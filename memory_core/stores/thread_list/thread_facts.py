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
from collections.abc import Hashable
from contextlib import closing
from pathlib import Path
from typing import Any

from memory_core.stores.thread_list.facts_file import another_process_saving, connect_facts_file, set_aside

log = logging.getLogger(__name__)

_VERSION = 1  # bump when the layout of this file changes; older files are then rebuilt


class ThreadFactsFile:
    """Kept thread facts for one leon.db (`database`: path, device, inode) in `folder`."""

    def __init__(self, database: Hashable, folder: Path) -> None:
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
            if not another_process_saving(exc):
                self._set_aside(f"cannot write {self.path}: {exc}")
            # locked or busy: another process is saving; the facts are derived again next time
        except (sqlite3.Error, OSError) as exc:
            self._set_aside(f"cannot write {self.path}: {exc}")

    def _connect(self) -> sqlite3.Connection:
        return connect_facts_file(
            self.path,
            table="thread_facts",
            columns="thread_id TEXT PRIMARY KEY, key TEXT NOT NULL, facts TEXT NOT NULL",
            version=_VERSION,
        )

    def _set_aside(self, why: str) -> None:
        log.warning("thread facts cache: %s; removed", why)
        set_aside(self.path)


def _key_text(key: Any) -> str:
    return json.dumps(key, ensure_ascii=False, sort_keys=True)

"""Facts the thread list derives from leon.db, kept with the key they were derived from.

LangGraph only appends checkpoints and writes. So while a thread's row count and newest checkpoint id are
unchanged, its stored bytes are too, and so are its head's message count and model. The thread list reads
those keys from the primary-key index alone and derives facts only for the threads whose key moved.

Facts live in memory for the process. When a folder is given they are also kept in our own SQLite file
(never one of Mycel's): a new process, such as a gunicorn worker or a CLI run, then starts warm. The file is
only a cache: if it cannot be read or written, it is set aside and the list is derived from leon.db.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from contextlib import closing, suppress
from pathlib import Path
from typing import NamedTuple

log = logging.getLogger(__name__)

# What a fact was derived from: a head checkpoint (messages, model), or a table's rows (bytes).
HEADS = "heads"
CHECKPOINTS = "checkpoints"
WRITES = "writes"
_VERSION = 1  # bump when what a fact means changes; older files are then rebuilt
_BUSY_MS = 200  # another process saving the same cache: wait this long, then skip saving


class Facts(NamedTuple):
    """What was derived for one thread from one table, and the key it holds for."""

    rows: int  # the thread's row count in the table ...
    last_id: str  # ... and its newest checkpoint id: together, the key
    bytes: int = 0  # the rows' bytes (CHECKPOINTS, WRITES)
    messages: int | None = None  # the head checkpoint's message count (HEADS)
    model: str | None = None  # the head checkpoint's metadata model (HEADS)


class DerivedFacts:
    """Per-thread facts for one leon.db, in memory and optionally in a cache file in `folder`.

    `database` identifies the file (path, device, inode): a leon.db replaced by another file starts afresh.
    """

    def __init__(self, database: tuple[str, int, int], folder: Path | None) -> None:
        self._lock = threading.Lock()
        self._facts: dict[str, dict[str, Facts]] | None = None  # source -> thread id -> facts
        digest = hashlib.sha256(repr(database).encode()).hexdigest()[:16]
        self._file = folder / f"thread-facts-{digest}.sqlite3" if folder is not None else None

    def has(self, source: str) -> bool:
        """Whether anything was derived from `source` before (in this process, or kept in the cache file)."""
        return bool(self._loaded().get(source))

    def lookup(self, source: str, thread_id: str, rows: int, last_id: str) -> Facts | None:
        """The facts for a thread if they were derived under this very key, else None."""
        found = self._loaded().get(source, {}).get(thread_id)
        if found is None or found.rows != rows or found.last_id != last_id:
            return None
        return found

    def remember(self, source: str, found: Mapping[str, Facts]) -> None:
        if not found:
            return
        with self._lock:
            facts = self._facts if self._facts is not None else {}
            facts.setdefault(source, {}).update(found)
            self._facts = facts
            self._save(source, found.items())

    def _loaded(self) -> dict[str, dict[str, Facts]]:
        facts = self._facts
        if facts is None:
            with self._lock:
                if self._facts is None:
                    self._facts = self._load()
                facts = self._facts
        return facts

    def _load(self) -> dict[str, dict[str, Facts]]:
        if self._file is None or not self._file.exists():
            return {}
        try:
            with closing(self._connect()) as conn:
                rows = conn.execute(
                    "SELECT source, thread_id, rows, last_id, bytes, messages, model FROM facts"
                ).fetchall()
        except sqlite3.Error as exc:
            self._set_aside(f"cannot read {self._file}: {exc}")
            return {}
        facts: dict[str, dict[str, Facts]] = {}
        for source, thread_id, *values in rows:
            facts.setdefault(source, {})[thread_id] = Facts(*values)
        return facts

    def _save(self, source: str, items: Iterable[tuple[str, Facts]]) -> None:
        if self._file is None:
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as conn, conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO facts VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(source, thread_id, *fact) for thread_id, fact in items],
                )
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                return  # another process is saving; these facts are derived again next time if needed
            self._set_aside(f"cannot write {self._file}: {exc}")
        except (sqlite3.Error, OSError) as exc:
            self._set_aside(f"cannot write {self._file}: {exc}")

    def _connect(self) -> sqlite3.Connection:
        assert self._file is not None
        conn = sqlite3.connect(self._file, timeout=_BUSY_MS / 1000)
        conn.execute("PRAGMA synchronous = NORMAL")  # a cache: losing the last save to a crash costs nothing
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != _VERSION:
            with conn:
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("DROP TABLE IF EXISTS facts")
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS facts (source TEXT NOT NULL, thread_id TEXT NOT NULL, rows INTEGER NOT NULL, "
                    "last_id TEXT NOT NULL, bytes INTEGER NOT NULL, messages INTEGER, model TEXT, "
                    "PRIMARY KEY (source, thread_id))"
                )
                conn.execute(f"PRAGMA user_version = {_VERSION}")
        return conn

    def _set_aside(self, why: str) -> None:
        """A cache file we cannot use is removed (it is ours, and holds nothing that cannot be derived again);
        this process keeps its facts in memory only."""
        log.warning("thread facts cache: %s; keeping facts in memory only", why)
        if self._file is not None:
            for path in (self._file, Path(f"{self._file}-wal"), Path(f"{self._file}-shm")):
                with suppress(OSError):
                    path.unlink(missing_ok=True)
        self._file = None


_REGISTRY: dict[tuple[tuple[str, int, int], Path | None], DerivedFacts] = {}
_REGISTRY_LOCK = threading.Lock()


def default_folder(environ: Mapping[str, str]) -> Path:
    """Where the command line keeps its facts: $MYCEL_MEMORY_CACHE_DIR, else the user's cache folder."""
    if environ.get("MYCEL_MEMORY_CACHE_DIR"):
        return Path(environ["MYCEL_MEMORY_CACHE_DIR"])
    cache = Path(environ["XDG_CACHE_HOME"]) if environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return cache / "mycel-memory"


def facts_for(database: tuple[str, int, int], folder: Path | None) -> DerivedFacts:
    """The process-wide facts for one leon.db (every reader of the same file shares them)."""
    with _REGISTRY_LOCK:
        key = (database, folder)
        if key not in _REGISTRY:
            _REGISTRY[key] = DerivedFacts(database, folder)
        return _REGISTRY[key]


def forget_all() -> None:
    """Drop the in-memory facts; cache files stay, so the next reader starts as a new process would."""
    with _REGISTRY_LOCK:
        _REGISTRY.clear()

"""What the thread list derives from each thread's checkpoints, kept with the key it came from.

A thread's head (newest) checkpoint is the only blob the list reads, to count its messages and find its
model; its checkpoints' sizes come from every row's record header. Checkpoints are only ever appended and
never change, so while a thread's checkpoint count and head id are the same, so are those facts. The list
reads that key from the primary-key index alone and derives facts only for the threads that moved.

Facts live in memory for the process (one DerivedFacts per file, kept in a memo: memory_core/memo.py).
When a folder is given they are also kept in our own SQLite file (never one of Mycel's), so a new process,
such as a gunicorn worker or a CLI run, starts warm. The file is only a cache: if it cannot be read or written, it is set aside and the facts are derived from leon.db.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Hashable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

from memory_core.memo import Key, Memo
from memory_core.stores.thread_list.facts_file import another_process_saving, connect_facts_file, set_aside

log = logging.getLogger(__name__)

POINT_READS = 256  # lookups read row by row from the file before a lookup loads it whole
_VERSION = 5  # bump when what a fact means changes; older files are then rebuilt


class HeadFacts(NamedTuple):
    """A thread's checkpoint count and head id (the key), with what its checkpoints hold."""

    checkpoints: int
    head_checkpoint_id: str
    checkpoint_bytes: int  # checkpoints and metadata, as stored
    messages: int | None  # the head's message count; None when the head cannot be decoded
    model: str | None  # the head's metadata model
    # Mycel's estimate of the head's messages (chars // 2); None until asked for (it decodes every body)
    estimated_tokens: int | None = None
    # Mycel dev's breaker at the head (failure count, open); None where the head saves none (main)
    breaker_failures: int | None = None
    breaker_open: bool | None = None


class DerivedFacts:
    """Head facts per thread for one leon.db, in memory and optionally in a cache file in `folder`.

    `database` identifies the store (a file's path, device, inode): a leon.db replaced by another file starts
    afresh.
    """

    def __init__(self, database: Hashable, folder: Path | None) -> None:
        self._lock = threading.Lock()
        # Held while facts are derived, so requests arriving together derive them once and share them.
        self.deriving = threading.Lock()
        self._facts: dict[str, HeadFacts] | None = None  # by thread id
        self._point_reads = 0  # lookups answered from the file row by row, before it is loaded
        digest = hashlib.sha256(repr(database).encode()).hexdigest()[:16]
        self._file = folder / f"head-facts-{digest}.sqlite3" if folder is not None else None

    def empty(self) -> bool:
        """True until something is derived: nothing in memory, and no cache file to read it from.

        Answered without reading the file, so a new process can load it beside its first reads (`preload`).
        """
        facts = self._facts
        if facts is not None:
            return not facts
        return self._file is None or not self._file.exists()

    def preload(self) -> None:
        """Read the cache file now (in a helper thread), rather than at the first lookup."""
        self._loaded()

    def lookup(self, thread_id: str, checkpoints: int, head_checkpoint_id: str) -> HeadFacts | None:
        """The thread's facts if they were derived under this very key, else None.

        Before the file is loaded, the first POINT_READS lookups read their one row from it: a look that
        caught up one moved thread of 100,000 reads one row, not the fleet's (a list reads them all)."""
        facts = self._facts
        if facts is None and self._file is not None and self._point_reads < POINT_READS:
            self._point_reads += 1
            found = self._read_one(thread_id)
        else:
            found = self._loaded().get(thread_id)
        if (
            found is None
            or found.checkpoints != checkpoints
            or found.head_checkpoint_id != head_checkpoint_id
        ):
            return None
        return found

    def remember(self, found: Mapping[str, HeadFacts]) -> None:
        if not found:
            return
        if self._facts is not None or self._file is None:
            with self._lock:
                # A new dict, swapped in whole: lookups running meanwhile never see one half-updated.
                self._facts = {**(self._facts or {}), **found}
        # Not loaded yet: the file alone takes them (a load, or a point read, flushes the saves first).
        if self._file is not None:
            # Written by one background thread, in order: no request waits on the disk.
            _SAVER.submit(self._save, dict(found))

    def _loaded(self) -> dict[str, HeadFacts]:
        facts = self._facts
        if facts is None:
            with self._lock:
                if self._facts is None:
                    self._facts = self._load()
                facts = self._facts
        return facts

    def _read_one(self, thread_id: str) -> HeadFacts | None:
        flush()
        if self._file is None or not self._file.exists():
            return None
        try:
            with closing(self._connect()) as conn:
                row = conn.execute(
                    "SELECT checkpoints, head_id, checkpoint_bytes, messages, model, estimated_tokens, "
                    "breaker_failures, breaker_open FROM head_facts WHERE thread_id = ?",
                    (thread_id,),
                ).fetchone()
        except sqlite3.Error as exc:
            self._set_aside(f"cannot read {self._file}: {exc}")
            return None
        return _facts_of(row) if row is not None else None

    def _load(self) -> dict[str, HeadFacts]:
        flush()  # what this process has still to write belongs in what it reads
        if self._file is None or not self._file.exists():
            return {}
        try:
            with closing(self._connect()) as conn:
                # One JSON text built inside SQLite: fetching ~10^4 rows one by one would hand the GIL back
                # and forth per row while the list's other reads run.
                (packed,) = conn.execute(
                    "SELECT json_group_array(json_array(thread_id, checkpoints, head_id, checkpoint_bytes, "
                    "messages, model, estimated_tokens, breaker_failures, breaker_open)) "
                    "FROM head_facts"
                ).fetchone()
        except sqlite3.Error as exc:
            self._set_aside(f"cannot read {self._file}: {exc}")
            return {}
        return {thread_id: _facts_of(values) for thread_id, *values in json.loads(packed)}

    def _save(self, found: Mapping[str, HeadFacts]) -> None:
        if self._file is None:
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            with closing(self._connect()) as conn, conn:
                conn.execute(
                    "INSERT OR REPLACE INTO head_facts "
                    "SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4, value ->> 5, "
                    "value ->> 6, value ->> 7, value ->> 8 FROM json_each(?)",
                    (json.dumps([(thread_id, *facts) for thread_id, facts in found.items()]),),
                )
        except sqlite3.OperationalError as exc:
            if not another_process_saving(exc):
                self._set_aside(f"cannot write {self._file}: {exc}")
        except (sqlite3.Error, OSError) as exc:
            self._set_aside(f"cannot write {self._file}: {exc}")

    def _connect(self) -> sqlite3.Connection:
        assert self._file is not None
        return connect_facts_file(
            self._file,
            table="head_facts",
            columns="thread_id TEXT PRIMARY KEY, checkpoints INTEGER NOT NULL, head_id TEXT NOT NULL, "
            "checkpoint_bytes INTEGER NOT NULL, messages INTEGER, model TEXT, estimated_tokens INTEGER, "
            "breaker_failures INTEGER, breaker_open INTEGER",
            version=_VERSION,
        )

    def _set_aside(self, why: str) -> None:
        """A file we cannot use is removed; this process keeps its facts in memory only."""
        log.warning("head facts cache: %s; keeping facts in memory only", why)
        if self._file is not None:
            set_aside(self._file)
        self._file = None


def _facts_of(values: Sequence[Any]) -> HeadFacts:
    facts = HeadFacts(*values)
    # SQLite keeps the flag as 0/1.
    return facts if facts.breaker_open is None else facts._replace(breaker_open=bool(facts.breaker_open))


def default_folder(environ: Mapping[str, str]) -> Path:
    """Where the command line keeps its facts: $MYCEL_MEMORY_CACHE_DIR, else the user's cache folder."""
    if environ.get("MYCEL_MEMORY_CACHE_DIR"):
        return Path(environ["MYCEL_MEMORY_CACHE_DIR"])
    cache = Path(environ["XDG_CACHE_HOME"]) if environ.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return cache / "mycel-memory"


# Every reader of the same file in this process shares one DerivedFacts; `memory_core.memo.reset()` drops
# them, so the next reader starts as a new process would: from the cache file.
_FACTS: Memo[DerivedFacts] = Memo("stores.head_facts", max_entries=64)


def facts_for(database: Hashable, folder: Path | None) -> DerivedFacts:
    """The process-wide facts for one leon.db (every reader of the same file shares them)."""
    return _FACTS.get_or_compute(
        Key(database, what=str(folder) if folder is not None else None),
        lambda: DerivedFacts(database, folder),
    )


def _new_saver() -> ThreadPoolExecutor:
    # One thread writes every cache file, in the order facts were learned; at exit it finishes the queue.
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="head-facts-save")


def _after_fork() -> None:
    global _SAVER
    _SAVER = _new_saver()  # a forked child has no copy of the parent's saving thread


_SAVER = _new_saver()
os.register_at_fork(after_in_child=_after_fork)


def flush() -> None:
    """Wait until every fact learned so far is in its cache file (tests, and a reader about to load one)."""
    if threading.current_thread().name.startswith("head-facts-save"):
        return  # the saver itself: what is queued behind it cannot be waited for here
    _SAVER.submit(lambda: None).result()

"""How the reader opens Mycel's SQLite files: read-only URIs, a busy timeout, a time limit and a row cap.

Nothing here can write: every connection is `mode=ro` (or `immutable=1`, see `_uri_for`), and no saver
`setup()` ever runs, because a newer langgraph-checkpoint-sqlite `setup()` alters Mycel's `writes` table.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from urllib.parse import quote

from memory_core.memo import Key, Memo
from memory_core.records import ProblemKind, StoreProblem

_SQLITE_MAGIC = b"SQLite format 3\x00"
_SCHEMA_CAP = 100_000  # schema reads are not data: the row cap does not apply
# VM instructions between two deadline checks (a few ms of work). Each check takes the GIL, so checking
# often stalls a query running beside Python work in another thread.
_PROGRESS_EVERY = 1_000_000


class StoreError(Exception):
    """A problem that stops one read; the reader turns it into a StoreProblem."""

    def __init__(self, problem: StoreProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# SQLite's locks are POSIX advisory locks, owned by the process: closing ANY descriptor of a database file
# drops every lock this process's connections hold on it (sqlite.org/howtocorrupt.html §2.2). Mycel's next
# last-connection close would then checkpoint and delete -wal/-shm under a read still open on another
# thread ("disk I/O error" on both sides). So headers are read through one descriptor per file that stays
# open; only descriptors of deleted files, or the least recently used beyond the cap, are ever closed.
_HEADER_FDS: OrderedDict[tuple[int, int], int] = OrderedDict()
_SPARE_FDS: list[int] = []
_HEADER_FDS_LOCK = threading.Lock()
_HEADER_FDS_CAP = 64


def _header_fd(path: Path) -> int:
    stat = os.stat(path)
    key = (stat.st_dev, stat.st_ino)
    fd = _HEADER_FDS.get(key)
    if fd is not None:
        _HEADER_FDS.move_to_end(key)
        return fd
    fd = os.open(path, os.O_RDONLY)
    opened = os.fstat(fd)
    key = (opened.st_dev, opened.st_ino)  # the file may have been replaced since the stat
    if key in _HEADER_FDS:
        _SPARE_FDS.append(fd)  # swapped under us for a file we already hold: closing it would drop locks
        return _HEADER_FDS[key]
    _HEADER_FDS[key] = fd
    for old_key, old_fd in list(_HEADER_FDS.items()):
        if os.fstat(old_fd).st_nlink == 0:  # deleted (e.g. a regenerated demo home): free its space
            os.close(_HEADER_FDS.pop(old_key))
    while len(_HEADER_FDS) > _HEADER_FDS_CAP:
        os.close(_HEADER_FDS.popitem(last=False)[1])
    return fd


def file_header(path: Path) -> bytes:
    """The first 100 bytes of a database file, read without closing a descriptor our connections rely on."""
    if os.name != "posix":
        # No POSIX locks to lose, and an open descriptor would stop Mycel from replacing the file.
        with path.open("rb") as handle:
            return handle.read(100)
    with _HEADER_FDS_LOCK:
        fd = _header_fd(path)
        os.lseek(fd, 0, os.SEEK_SET)
        return os.read(fd, 100)


def journal_mode_of(header: bytes) -> str | None:
    """'wal' or 'rollback' from the header's read/write version bytes, None if not SQLite."""
    if len(header) < 20 or not header.startswith(_SQLITE_MAGIC):
        return None
    return "wal" if header[18] == 2 or header[19] == 2 else "rollback"


def _uri_for(path: Path, header: bytes) -> str:
    uri = f"file:{quote(str(path))}?mode=ro"
    if journal_mode_of(header) != "wal":
        return uri
    wal = Path(f"{path}-wal")
    shm = Path(f"{path}-shm")
    if shm.exists() or os.access(path.parent, os.W_OK):
        return uri
    # A read-only WAL reader needs a -shm file it can map, and cannot create one in a read-only folder.
    # With no -wal file either, everything committed is in the main file and no writer can be active
    # (a writer would have made -wal/-shm), so immutable=1 reads exactly the committed data. With a -wal
    # file present, immutable=1 would silently ignore committed transactions, so we refuse instead.
    if wal.exists():
        raise StoreError(
            StoreProblem(
                ProblemKind.LOCKED,
                "",
                f"{path.name} is in WAL mode with a -wal file but no -shm file, in a folder we cannot write; "
                "it cannot be read consistently without Mycel running",
                path,
            )
        )
    return f"file:{quote(str(path))}?mode=ro&immutable=1"


def problem_from_error(exc: sqlite3.Error, *, store: str, path: Path) -> StoreProblem:
    """A plain-words StoreProblem for a sqlite3 error."""
    text = str(exc)
    lowered = text.lower()
    if "interrupted" in lowered:
        return StoreProblem(
            ProblemKind.TIMEOUT, store, f"{path.name}: query took too long and was stopped", path
        )
    if "locked" in lowered or "busy" in lowered:
        return StoreProblem(
            ProblemKind.LOCKED, store, f"{path.name} is locked by another process ({text})", path
        )
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return StoreProblem(
            ProblemKind.CORRUPT, store, f"{path.name} is damaged or not SQLite ({text})", path
        )
    if "no such table" in lowered or "no such column" in lowered:
        return StoreProblem(
            ProblemKind.UNKNOWN_SCHEMA, store, f"{path.name}: unexpected schema ({text})", path
        )
    if "unable to open" in lowered:
        return StoreProblem(ProblemKind.MISSING_FILE, store, f"{path.name} cannot be opened ({text})", path)
    return StoreProblem(ProblemKind.CORRUPT, store, f"{path.name}: {text}", path)


def _is_bad_text(exc: sqlite3.Error) -> bool:
    return "could not decode to utf-8" in str(exc).lower()


def _lenient_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# No cap, for an answer of one row per thread where every thread counts (the fleet index's questions, the
# fleet's bytes): the most sqlite3 can fetch at once.
EVERY_ROW = 2**31 - 2

# Each file's tables and columns per schema: every open of a store asks, and reading them is 1 + a query
# per table. Keyed by the file's identity and change time and its schema cookie.
_SCHEMAS: Memo[dict[str, tuple[str, ...]]] = Memo("sqlite.schemas", max_entries=256)


class ReadOnlyDB:
    """One read-only connection with a per-query deadline and a row cap; records truncations."""

    def __init__(self, conn: sqlite3.Connection, *, store: str, path: Path, timeout_s: float, row_cap: int):
        self.conn = conn
        self.store = store
        self.path = path
        self.timeout_s = timeout_s
        self.row_cap = row_cap
        self.problems: list[StoreProblem] = []
        self._deadline = 0.0
        self._tables: dict[str, tuple[str, ...]] | None = None
        conn.set_progress_handler(self._over_time, _PROGRESS_EVERY)

    def _over_time(self) -> int:
        return 1 if self._deadline and time.monotonic() > self._deadline else 0

    def rows(self, sql: str, params: Sequence[Any] = (), *, cap: int | None = None) -> list[tuple[Any, ...]]:
        """All rows of one query, at most `cap` (default: the reader's row cap); over the cap → TRUNCATED."""
        limit = self.row_cap if cap is None else cap
        try:
            found = self._fetch(sql, params, limit)
        except sqlite3.OperationalError as exc:
            if not _is_bad_text(exc):
                raise StoreError(problem_from_error(exc, store=self.store, path=self.path)) from exc
            # Text that is not UTF-8 (a tool wrote raw bytes into a TEXT column): read it again with
            # replacement characters, and say so, rather than lose every other row of the table.
            self.conn.text_factory = _lenient_text
            try:
                found = self._fetch(sql, params, limit)
            except sqlite3.Error as again:
                raise StoreError(problem_from_error(again, store=self.store, path=self.path)) from again
            finally:
                self.conn.text_factory = str
            self._bad_text()
        except sqlite3.Error as exc:
            raise StoreError(problem_from_error(exc, store=self.store, path=self.path)) from exc
        if len(found) > limit:
            self._truncated(limit)
            del found[limit:]
        return found

    def _fetch(self, sql: str, params: Sequence[Any], limit: int) -> list[tuple[Any, ...]]:
        self._deadline = time.monotonic() + self.timeout_s
        try:
            cursor = self.conn.execute(sql, tuple(params))
            found = cursor.fetchmany(limit + 1)
            cursor.close()
            return found
        finally:
            self._deadline = 0.0

    def _bad_text(self) -> None:
        problem = StoreProblem(
            ProblemKind.CORRUPT,
            self.store,
            f"{self.path.name} holds text that is not UTF-8; it is shown with \ufffd in its place",
            self.path,
        )
        if problem not in self.problems:
            self.problems.append(problem)

    def _truncated(self, limit: int) -> None:
        self.problems.append(
            StoreProblem(
                ProblemKind.TRUNCATED,
                self.store,
                f"{self.path.name}: only the first {limit:,} rows were read",
                self.path,
            )
        )

    def rows_as_json(
        self, sql: str, params: Sequence[Any] = (), *, columns: Sequence[str], cap: int | None = None
    ) -> list[list[Any]]:
        """Like rows(), but SQLite packs the rows into one JSON array: `columns` names the query's outputs.

        Fetching row by row hands the GIL back and forth once per row, so a reader thread stalls behind any
        thread running Python; one JSON text is built entirely inside SQLite and parsed at C speed. Values
        must be text or numbers (SQLite's JSON cannot hold a BLOB: CAST such columns).
        """
        limit = self.row_cap if cap is None else cap
        packed = self.one(
            f"SELECT json_group_array(json_array({', '.join(columns)})) FROM ({sql} LIMIT {limit + 1})",
            params,
        )
        found: list[list[Any]] = json.loads(packed[0]) if packed and packed[0] else []
        if len(found) > limit:
            self._truncated(limit)
            del found[limit:]
        return found

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        found = self.rows(sql, params, cap=1)
        return found[0] if found else None

    def tables(self) -> dict[str, tuple[str, ...]]:
        """Every table with its column names (schema detection, reference §9); read once per schema of
        the file (its schema cookie, which every change of a table moves), not once per connection."""
        if self._tables is None:
            cookie = next(iter(self.rows("PRAGMA schema_version", cap=1)), None)
            try:
                stat = os.stat(self.path)
                file: tuple[object, ...] = (str(self.path), stat.st_dev, stat.st_ino, stat.st_ctime_ns)
            except OSError:
                file = (str(self.path), None)
            key = Key(file, what=("tables", cookie[0] if cookie else None))
            self._tables = _SCHEMAS.get_or_compute(key, self._read_tables)
        return self._tables

    def _read_tables(self) -> dict[str, tuple[str, ...]]:
        names = [
            r[0]
            for r in self.rows(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", cap=_SCHEMA_CAP
            )
        ]
        tables: dict[str, tuple[str, ...]] = {}
        for name in names:
            quoted = name.replace('"', '""')
            columns = self.rows(f'PRAGMA table_info("{quoted}")', cap=_SCHEMA_CAP)
            tables[name] = tuple(str(c[1]) for c in columns)
        return tables

    def has_table(self, name: str) -> bool:
        return name in self.tables()

    def columns(self, table: str) -> tuple[str, ...]:
        return self.tables().get(table, ())

    def require_table(self, name: str) -> bool:
        """True if present; otherwise records a MISSING_TABLE problem (normal for Mycel) and says False."""
        if self.has_table(name):
            return True
        self.problems.append(
            StoreProblem(
                ProblemKind.MISSING_TABLE, self.store, f"{self.path.name} has no {name} table", self.path
            )
        )
        return False

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """One read transaction: in WAL mode every query inside sees the same committed state."""
        try:
            self.conn.execute("BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(problem_from_error(exc, store=self.store, path=self.path)) from exc
        try:
            yield
        finally:
            with suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")


def open_readonly(path: Path, *, store: str, timeout_s: float, row_cap: int) -> ReadOnlyDB:
    """Open one of Mycel's files read-only, or raise StoreError (missing, not SQLite, locked…)."""
    if not path.exists():
        raise StoreError(StoreProblem(ProblemKind.MISSING_FILE, store, f"{path.name} does not exist", path))
    if not path.is_file():
        raise StoreError(StoreProblem(ProblemKind.CORRUPT, store, f"{path} is not a file", path))
    try:
        header = file_header(path)
    except OSError as exc:
        raise StoreError(StoreProblem(ProblemKind.MISSING_FILE, store, f"{path.name}: {exc}", path)) from exc
    if len(header) == 0:
        # SQLite treats an empty file as an empty database; Mycel never leaves one, so say so.
        raise StoreError(StoreProblem(ProblemKind.CORRUPT, store, f"{path.name} is empty", path))
    if not header.startswith(_SQLITE_MAGIC):
        raise StoreError(
            StoreProblem(ProblemKind.CORRUPT, store, f"{path.name} is not an SQLite database", path)
        )
    try:
        uri = _uri_for(path, header)
    except StoreError as exc:
        raise StoreError(
            StoreProblem(exc.problem.kind, store, exc.problem.message, exc.problem.path)
        ) from None
    try:
        conn = sqlite3.connect(
            uri, uri=True, timeout=timeout_s, isolation_level=None, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise StoreError(problem_from_error(exc, store=store, path=path)) from exc
    return ReadOnlyDB(conn, store=store, path=path, timeout_s=timeout_s, row_cap=row_cap)


@contextmanager
def opened(path: Path, *, store: str, timeout_s: float, row_cap: int) -> Iterator[ReadOnlyDB]:
    """open_readonly as a context manager that always closes the connection."""
    db = open_readonly(path, store=store, timeout_s=timeout_s, row_cap=row_cap)
    try:
        yield db
    finally:
        db.conn.close()

"""The search index: our own SQLite FTS5 file (never inside Mycel's files), one per checkpoint store.

Tables: `docs` (FTS5: the text), `entries` (its thread, index, kind, tool and time, same rowid), `threads` (per thread what
was indexed: head checkpoint, message count, a digest of the indexed messages' ids, the summaries'
signature) and `meta` (the queue's signature). Several processes may refresh it at once: a refresh is one
`BEGIN IMMEDIATE` transaction, so the second waits and then finds nothing left to do.
"""

from __future__ import annotations

import hashlib
import json
import queue
import sqlite3
import threading
from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from memory_core.search.documents import SearchDocument
from memory_core.search.query import ParsedQuery, fts_match

_DOCS_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(text, tokenize = 'unicode61 remove_diacritics 2')"
)
_SCHEMA = f"""
{_DOCS_TABLE};
-- Beside the text, keyed by the same rowid: a thread's documents are found by index, not by a scan.
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY, thread_id TEXT NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL, tool TEXT,
    at REAL
);
CREATE INDEX IF NOT EXISTS entries_thread ON entries (thread_id, kind);
CREATE TABLE IF NOT EXISTS threads (
    thread_id TEXT PRIMARY KEY, head TEXT, messages INTEGER NOT NULL, ids_digest TEXT NOT NULL,
    summaries TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
MARK_START, MARK_END = "\x01", "\x02"
SNIPPET_TOKENS = 24
# bm25 scores every match before sorting (1 s for a word in every one of 630,000 documents): past this many
# matches only the newest this many are ranked, found by a rowid walk that computes no score.
COMMON_MATCHES = 5_000


def index_path(folder: Path, store_identity: Hashable) -> Path:
    """The index file for one checkpoint store, in `folder` (two Mycel homes never share an index)."""
    digest = hashlib.sha256(repr(store_identity).encode("utf-8", "replace")).hexdigest()[:16]
    return folder / f"search-index-{digest}.sqlite3"


class SearchIndexError(Exception):
    """The index file cannot be opened or written (a read-only folder, a damaged file, a lock held too
    long): one message for the page or the command line."""


@dataclass(frozen=True, slots=True)
class IndexedThread:
    head: str | None
    messages: int
    ids_digest: str
    summaries: str


@dataclass(frozen=True, slots=True)
class IndexRow:
    entry: int
    thread_id: str
    index: int
    kind: str
    tool: str | None
    snippet: str  # with MARK_START / MARK_END around each match
    rank: float
    at: datetime | None


@dataclass(frozen=True, slots=True)
class IndexMatches:
    rows: list[IndexRow]
    # Set when more than COMMON_MATCHES documents matched: the rows are the best among the newest ones.
    newest_only: int | None = None


class SearchWriter(Protocol):
    """What a refresh needs of an index, inside its one write transaction."""

    def threads(self) -> dict[str, IndexedThread]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def add(self, documents: Iterable[SearchDocument]) -> int: ...
    def remove(self, thread_id: str | None, kinds: Sequence[str], *, keep: bool = False) -> None: ...
    def remove_thread(self, thread_id: str) -> None: ...
    def keep_thread(self, thread_id: str, state: IndexedThread) -> None: ...
    def clear(self) -> None: ...


class SearchStore(Protocol):
    """An index: this SQLite file, or the dashboard's PostgreSQL database (search_index_pg). Each renders
    the parsed query in its own syntax."""

    @property
    def path(self) -> Path | str: ...
    def writing(self) -> AbstractContextManager[SearchWriter]: ...
    def query(
        self,
        query: ParsedQuery,
        *,
        tool: str | None,
        thread_id: str | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        phrase_first: ParsedQuery | None = None,
    ) -> IndexMatches: ...
    def document_count(self) -> int: ...
    def purge_deleted(self) -> None: ...  # after a clear(): what the deleted rows held leaves the disk


def _epoch(value: datetime | None) -> float | None:
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


class SearchIndex:
    """One index file, opened per use (a connection is never shared between threads)."""

    def __init__(self, path: Path, *, timeout_s: float = 30.0) -> None:
        self.path = path
        self.timeout_s = timeout_s

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise self._error(exc) from exc
        return db

    def _error(self, exc: BaseException) -> SearchIndexError:
        return SearchIndexError(f"the search index {self.path} cannot be used: {exc}")

    @contextmanager
    def writing(self) -> Iterator[IndexWriter]:
        """One write transaction; readers keep seeing the previous state until it commits."""
        with closing(self._connect()) as db:
            try:
                db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
            writer = IndexWriter(db)
            try:
                _merge_less(db)
                yield writer
                writer.finish()  # the background inserts done, or their error raised here
            except sqlite3.Error as exc:
                writer.abandon()
                db.execute("ROLLBACK")
                raise self._error(exc) from exc
            except BaseException:
                writer.abandon()
                db.execute("ROLLBACK")
                raise
            try:
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    def query(
        self,
        query: ParsedQuery,
        *,
        tool: str | None,
        thread_id: str | None,
        since: datetime | None,
        until: datetime | None,
        limit: int,
        phrase_first: ParsedQuery | None = None,
    ) -> IndexMatches:
        """Matches of every term of `query`, best bm25 first, ties newest first; when more than
        COMMON_MATCHES documents match, the best among the newest COMMON_MATCHES of them. With
        `phrase_first`, the matches that also match it come first (one pass, no bm25 of the phrase)."""
        where = ["docs MATCH ?"]
        params: list[object] = [fts_match(query)]
        if tool is not None:
            where.append("e.tool = ? COLLATE NOCASE")
            params.append(tool)
        if since is not None:
            where.append("e.at >= ?")
            params.append(_epoch(since))
        if until is not None:
            where.append("e.at < ?")
            params.append(_epoch(until))
        with closing(self._connect()) as db:
            try:
                if thread_id is not None:
                    where.append("e.thread_id = ?")
                    params.append(thread_id)
                    # A rowid range FTS5 can seek to, so a common word is not walked over the whole index
                    # to keep one thread's documents (added together, so their rowids are close).
                    low, high = db.execute(
                        "SELECT min(id), max(id) FROM entries WHERE thread_id = ?", (thread_id,)
                    ).fetchone()
                    where.append("docs.rowid BETWEEN ? AND ?")
                    params += [low, high]
                newest_only = None
                joined = f"FROM docs JOIN entries e ON e.id = docs.rowid WHERE {' AND '.join(where)}"
                # The first match past the newest COMMON_MATCHES, by rowid (no bm25): None when few match.
                cutoff = db.execute(
                    f"SELECT docs.rowid {joined} ORDER BY docs.rowid DESC LIMIT 1 OFFSET ?",
                    [*params, COMMON_MATCHES],
                ).fetchone()
                if cutoff is not None:
                    joined += " AND docs.rowid > ?"
                    params.append(cutoff[0])
                    newest_only = COMMON_MATCHES
                first, first_params = "", []
                if phrase_first is not None:
                    # A walk of the phrase's matches, no scoring: bm25 of a common phrase would read
                    # its every match in the index (its IDF), whatever the rowid bound.
                    bound = "" if cutoff is None else " AND rowid > ?"
                    first = f"docs.rowid IN (SELECT rowid FROM docs WHERE docs MATCH ?{bound}) DESC, "
                    first_params = [fts_match(phrase_first), *([cutoff[0]] if cutoff else [])]
                sql = (
                    "SELECT e.id, e.thread_id, e.idx, e.kind, e.tool, "
                    f"snippet(docs, 0, ?, ?, '…', {SNIPPET_TOKENS}), bm25(docs), e.at "
                    f"{joined} ORDER BY {first}bm25(docs), e.at DESC, e.thread_id, e.idx LIMIT ?"
                )
                rows = db.execute(sql, [MARK_START, MARK_END, *params, *first_params, limit]).fetchall()
            except sqlite3.Error as exc:
                raise self._error(exc) from exc
        return IndexMatches(
            [
                IndexRow(
                    entry=int(r[0]),
                    thread_id=r[1],
                    index=int(r[2]),
                    kind=r[3],
                    tool=r[4],
                    snippet=r[5] or "",
                    rank=float(r[6]),
                    at=datetime.fromtimestamp(r[7], UTC) if r[7] is not None else None,
                )
                for r in rows
            ],
            newest_only,
        )

    def document_count(self) -> int:
        with closing(self._connect()) as db:
            return int(db.execute("SELECT count(*) FROM entries").fetchone()[0])

    def purge_deleted(self) -> None:
        """Rewrite the file without the pages deleted rows left behind (VACUUM) and empty the WAL, so no
        deleted text can be read back from either. A reader still open elsewhere may keep the WAL for now."""
        with closing(self._connect()) as db:
            try:
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise self._error(exc) from exc


# FTS5 merges its segments as they pile up (by default from 4 per level, all at once from 16). At the
# first index of 630,000 documents, merging from 16 and at once only from 64 takes 12 s of inserts' CPU
# instead of 14, and queries and single small refreshes cost the same. Kept for good: put back after a
# build, the defaults make the next small refresh pay a crisis merge (0.8 s).
_MERGE_SETTINGS = {"automerge": 16, "crisismerge": 64}


def _merge_less(db: sqlite3.Connection) -> None:
    held = dict(db.execute("SELECT k, v FROM docs_config WHERE k IN ('automerge', 'crisismerge')"))
    for key, value in _MERGE_SETTINGS.items():
        if held.get(key) != value:
            db.execute("INSERT INTO docs (docs, rank) VALUES (?, ?)", (key, value))


# Documents buffered before their rows are handed to the inserter: each hand-off costs the inserter a wait
# for the GIL (up to the 5 ms switch interval while the main thread decodes), so hand-offs are few.
_BATCH = 2_000
# Rows cross to SQLite as one JSON array per table, inserted by one statement: a single step that runs
# with the GIL released, where executemany would take the GIL back for every row. A hand-off's entries
# have consecutive ids, so an id is the first one plus the row's place (json_each's key) and a text is
# an array item of its own (read once, not parsed again by ->>): as cheap as executemany.
_ENTRIES = "INSERT INTO entries (id, thread_id, idx, kind, tool, at)"
_DOCS = "INSERT INTO docs (rowid, text)"
_THREADS = "INSERT OR REPLACE INTO threads (thread_id, head, messages, ids_digest, summaries)"
_Rows = list[tuple[object, ...]]


@dataclass(slots=True)
class _Job:
    first: int  # the id of the first entry
    entries: _Rows  # (thread_id, idx, kind, tool, at)
    texts: list[str]
    threads: _Rows


class _Inserter:
    """One background thread that runs the buffered inserts while the refresh decodes the next threads:
    Python's sqlite3 releases the GIL while SQLite works, so FTS5's inserts use the second core. The
    connection is used by one thread at a time: the writer touches it only once the queue is drained."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self.error: BaseException | None = None
        self.abandoned = False
        self.jobs: queue.Queue[_Job | None] = queue.Queue(maxsize=2)
        self.thread = threading.Thread(target=self._run, name="search-index-inserter", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                if self.error is None and not self.abandoned:
                    _insert(self.db, job)
            except BaseException as exc:  # raised again in the writer's thread, at its next call
                self.error = exc
            finally:
                self.jobs.task_done()
        self.jobs.task_done()

    def submit(self, job: _Job) -> None:
        self.raise_error()
        self.jobs.put(job)

    def drain(self) -> None:
        self.jobs.join()
        self.raise_error()

    def raise_error(self) -> None:
        if self.error is not None:
            raise self.error

    def stop(self) -> None:
        self.jobs.put(None)
        self.thread.join()


def _insert(db: sqlite3.Connection, job: _Job) -> None:
    if job.entries:
        entries = json.dumps(job.entries, ensure_ascii=False)
        texts = json.dumps(job.texts, ensure_ascii=False)
        if "\\u0000" in entries or "\\u0000" in texts:  # SQLite's JSON ends a text at an escaped NUL
            ids = range(job.first, job.first + len(job.entries))
            db.executemany(
                f"{_ENTRIES} VALUES (?, ?, ?, ?, ?, ?)",
                [(i, *r) for i, r in zip(ids, job.entries, strict=True)],
            )
            db.executemany(f"{_DOCS} VALUES (?, ?)", zip(ids, job.texts, strict=True))
        else:
            columns = "value->>0, value->>1, value->>2, value->>3, value->>4"
            db.execute(f"{_ENTRIES} SELECT ? + key, {columns} FROM json_each(?)", (job.first, entries))
            db.execute(f"{_DOCS} SELECT ? + key, value FROM json_each(?)", (job.first, texts))
    if job.threads:
        threads = json.dumps(job.threads, ensure_ascii=False)
        if "\\u0000" in threads:
            db.executemany(f"{_THREADS} VALUES (?, ?, ?, ?, ?)", job.threads)
        else:
            columns = "value->>0, value->>1, value->>2, value->>3, value->>4"
            db.execute(f"{_THREADS} SELECT {columns} FROM json_each(?)", (threads,))


class IndexWriter:
    """Inside one write transaction. `add` and `keep_thread` only buffer their rows (handed to the
    inserter in batches); every other call first waits for the inserts before it, so the transaction
    sees the statements in the order they were asked for."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._inserter: _Inserter | None = None
        self._next_entry: int | None = None  # read again after anything that may delete entries
        self._first = 0  # the id of the first buffered entry; the rest follow it
        self._entries: _Rows = []
        self._texts: list[str] = []
        self._threads: _Rows = []

    def _hand_off(self) -> None:
        if not (self._entries or self._threads):
            return
        if self._inserter is None:
            self._inserter = _Inserter(self.db)
        job = _Job(self._first, self._entries, self._texts, self._threads)
        self._entries, self._texts, self._threads = [], [], []
        self._inserter.submit(job)

    def _settled(self) -> sqlite3.Connection:
        """The connection, once every buffered insert has run (their error, if any, raised here)."""
        self._hand_off()
        if self._inserter is not None:
            self._inserter.drain()
        return self.db

    def finish(self) -> None:
        """Every buffered insert done, the inserter stopped; its error raised."""
        try:
            self._settled()
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Stop the inserter, skipping what it was not yet doing (the transaction is rolled back)."""
        if self._inserter is not None:
            self._inserter.abandoned = True
            self._inserter.stop()
            self._inserter = None

    def threads(self) -> dict[str, IndexedThread]:
        return {
            r[0]: IndexedThread(r[1], int(r[2]), r[3], r[4])
            for r in self._settled().execute(
                "SELECT thread_id, head, messages, ids_digest, summaries FROM threads"
            )
        }

    def get_meta(self, key: str) -> str | None:
        row = self._settled().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._settled().execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def add(self, documents: Iterable[SearchDocument]) -> int:
        if self._next_entry is None:
            self._next_entry = int(
                self._settled().execute("SELECT coalesce(max(id), 0) + 1 FROM entries").fetchone()[0]
            )
        entry = first = self._next_entry
        entries, texts = self._entries, self._texts
        if not entries:
            self._first = entry
        # One pass, and a thread's documents share one time: it is converted once, not per document.
        at: datetime | None = None
        epoch = None
        for d in documents:
            if d.at is not at:
                at, epoch = d.at, _epoch(d.at)
            entries.append((d.thread_id, d.index, d.kind.value, d.tool, epoch))
            texts.append(d.text)
            entry += 1
        self._next_entry = entry
        if len(texts) >= _BATCH:
            self._hand_off()
        return entry - first

    def remove(self, thread_id: str | None, kinds: Sequence[str], *, keep: bool = False) -> None:
        """Remove the documents of these kinds (or, with `keep`, of every other kind), of one thread or of
        every thread when `thread_id` is None."""
        marks = ",".join("?" * len(kinds))
        where = f"kind {'NOT IN' if keep else 'IN'} ({marks})"
        params: list[object] = list(kinds)
        if thread_id is not None:
            where += " AND thread_id = ?"
            params.append(thread_id)
        db = self._settled()
        db.execute(f"DELETE FROM docs WHERE rowid IN (SELECT id FROM entries WHERE {where})", params)
        db.execute(f"DELETE FROM entries WHERE {where}", params)
        self._next_entry = None

    def remove_thread(self, thread_id: str) -> None:
        """Every document of the thread but its queued items (the queue is indexed on its own)."""
        self.remove(thread_id, ["queue"], keep=True)
        self.db.execute("DELETE FROM threads WHERE thread_id = ?", (thread_id,))

    def keep_thread(self, thread_id: str, state: IndexedThread) -> None:
        # Buffered with the documents: the threads table is written after them, in the same hand-off.
        self._threads.append((thread_id, state.head, state.messages, state.ids_digest, state.summaries))

    def clear(self) -> None:
        db = self._settled()
        # Made again, not emptied: FTS5 keeps a deleted text's terms in its segments until they merge.
        db.execute("DROP TABLE docs")
        db.execute(_DOCS_TABLE)
        _merge_less(db)
        db.execute("DELETE FROM entries")
        db.execute("DELETE FROM threads")
        db.execute("DELETE FROM meta")
        self._next_entry = None

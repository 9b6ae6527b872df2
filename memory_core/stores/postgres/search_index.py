"""The search index in PostgreSQL: the dashboard's own database (`DATABASE_URL`), never Mycel's, so several
dashboard hosts share one index. Same interface as `search_index.SearchIndex`.

Tables (made here, prefixed `mycel_search_`, one `store` column so two Mycel homes never mix): `docs`
(the redacted text, its thread, index, kind, tool and time, and a `tsvector` with a GIN index), `threads`
and `meta`, as in the SQLite file. The tsvector is built from our own tokens (letters and digits, case and
diacritics folded, as FTS5's unicode61 does), so both engines find the same words: PostgreSQL's parser
alone would keep `/tmp/build` as one token and `build` would not find it. Snippets carry our own marks,
computed from the stored text; nothing in them is ever HTML. A refresh holds a per-store advisory lock for
its transaction, so a second host waits, then finds nothing left to do.

Writes are bulk: documents are buffered and sent by `COPY` into a temporary table, then moved in one
`INSERT … SELECT` that computes the tsvectors (per-row INSERTs were parsed and planned one by one). A first
load into an empty table drops the table's indexes and builds them once at the end, which is several times
faster than growing a GIN index row by row; while it runs, other stores' searches in the same database
wait for it (the table was empty: they had nothing to find yet).
"""

from __future__ import annotations

import hashlib
import threading
import unicodedata
from collections.abc import Hashable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg

from memory_core.search.documents import SearchDocument
from memory_core.search.query import WORD, ParsedQuery
from memory_core.stores.postgres.connect import mask_url
from memory_core.stores.sqlite import search_index
from memory_core.stores.sqlite.search_index import (
    MARK_END,
    MARK_START,
    SNIPPET_TOKENS,
    IndexedThread,
    IndexMatches,
    IndexRow,
    SearchIndexError,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mycel_search_docs (
    id BIGSERIAL PRIMARY KEY, store TEXT NOT NULL, thread_id TEXT NOT NULL, idx INTEGER NOT NULL,
    kind TEXT NOT NULL, tool TEXT, at TIMESTAMPTZ, body TEXT NOT NULL, tsv TSVECTOR NOT NULL
);
CREATE INDEX IF NOT EXISTS mycel_search_docs_tsv ON mycel_search_docs USING GIN (tsv);
CREATE INDEX IF NOT EXISTS mycel_search_docs_thread ON mycel_search_docs (store, thread_id, kind);
-- The --tool filter's selectivity: without it the planner guessed 0.5 % for a tool in 10 % of the rows and
-- sorted every match of a common word instead of walking the newest ids (600 ms against 100 ms).
CREATE STATISTICS IF NOT EXISTS mycel_search_docs_tool ON (lower(tool)) FROM mycel_search_docs;
CREATE TABLE IF NOT EXISTS mycel_search_threads (
    store TEXT NOT NULL, thread_id TEXT NOT NULL, head TEXT, messages INTEGER NOT NULL,
    ids_digest TEXT NOT NULL, summaries TEXT NOT NULL DEFAULT '', PRIMARY KEY (store, thread_id)
);
CREATE TABLE IF NOT EXISTS mycel_search_meta (
    store TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (store, key)
);
"""
# A tsvector holds at most 1 MB: the words past this many characters of a huge tool output are not indexed.
MAX_WORDS_CHARS = 300_000
ANALYZE_AFTER = 5_000  # documents added by one refresh
FLUSH_ROWS = 10_000  # documents buffered before one COPY
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS mycel_search_docs_tsv ON mycel_search_docs USING GIN (tsv)",
    "CREATE INDEX IF NOT EXISTS mycel_search_docs_thread ON mycel_search_docs (store, thread_id, kind)",
)
_STAGING = """
CREATE TEMPORARY TABLE IF NOT EXISTS mycel_search_load (
    n BIGINT NOT NULL, store TEXT NOT NULL, thread_id TEXT NOT NULL, idx INTEGER NOT NULL, kind TEXT NOT NULL,
    tool TEXT, at TIMESTAMPTZ, body TEXT NOT NULL, words TEXT NOT NULL
) ON COMMIT DROP;
CREATE TEMPORARY TABLE IF NOT EXISTS mycel_search_kept (
    thread_id TEXT NOT NULL, head TEXT, messages INTEGER NOT NULL, ids_digest TEXT NOT NULL,
    summaries TEXT NOT NULL
) ON COMMIT DROP
"""
_ready: set[str] = set()
_ready_lock = threading.Lock()


def fold(word: str) -> str:
    """A token as FTS5's `unicode61 remove_diacritics 2` keeps it: lower case, no diacritics."""
    word = word.lower()
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _tokens(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), fold(m.group())) for m in WORD.finditer(text)]


def _words(text: str) -> str:
    # The same tokens as _tokens, without a match object per word (the first index folds millions).
    if text.isascii():
        return " ".join(WORD.findall(text.lower()))[:MAX_WORDS_CHARS]
    return " ".join(fold(word) for word in WORD.findall(text))[:MAX_WORDS_CHARS]


def _tsquery(query: ParsedQuery) -> tuple[str, list[str]]:
    # Each term through phraseto_tsquery: a bound parameter, so nothing typed is ever tsquery syntax.
    terms = [" ".join(fold(word) for word in term) for term in query.terms]
    return " && ".join(["phraseto_tsquery('simple', %s)"] * len(terms)), terms


def snippet(text: str, query: ParsedQuery, *, size: int = SNIPPET_TOKENS) -> str:
    """About `size` tokens of `text` around its first match, each match (a phrase as one) between
    MARK_START and MARK_END, '…' where text was cut."""
    tokens = _tokens(text)
    folded = [token for _, _, token in tokens]
    spans: list[tuple[int, int]] = []
    for term in query.terms:
        words = [fold(word) for word in term]
        n = len(words)
        spans += [(i, i + n) for i in range(len(folded) - n + 1) if folded[i : i + n] == words]
    spans.sort()
    if not tokens:
        return text[:200]
    first = spans[0][0] if spans else 0
    start = max(0, min(first - size // 4, len(tokens) - size))
    end = min(len(tokens), start + size)
    # As FTS5's snippet: a window at either end of the text keeps what lies before or after its tokens.
    out, position = [], tokens[start][0] if start > 0 else 0
    taken = -1
    for a, b in spans:
        if a < start or b > end or a <= taken:
            continue
        out += [text[position : tokens[a][0]], MARK_START, text[tokens[a][0] : tokens[b - 1][1]], MARK_END]
        position, taken = tokens[b - 1][1], b - 1
    out.append(text[position : tokens[end - 1][1] if end < len(tokens) else len(text)])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(tokens) else "")


class PgSearchIndex:
    """The index of one checkpoint store in the dashboard's PostgreSQL database."""

    def __init__(self, url: str, store_identity: Hashable, *, timeout_s: float = 30.0) -> None:
        self.url = url
        self.store = hashlib.sha256(repr(store_identity).encode("utf-8", "replace")).hexdigest()[:16]
        self.timeout_s = timeout_s
        self.path = f"{mask_url(url)} (tables mycel_search_*, store {self.store})"

    def _error(self, exc: BaseException) -> SearchIndexError:
        # psycopg's messages name the host and database, never the password; the URL is masked here.
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return SearchIndexError(f"the search index in {mask_url(self.url)} cannot be used: {reason}")

    @contextmanager
    def _transaction(self) -> Iterator[psycopg.Cursor[Any]]:
        try:
            with psycopg.connect(
                self.url, connect_timeout=max(1, int(self.timeout_s)), prepare_threshold=None
            ) as db:
                self._ensure_schema(db)
                with db.transaction(), db.cursor() as cursor:
                    cursor.execute(f"SET LOCAL lock_timeout = '{int(self.timeout_s * 1000)}ms'")
                    yield cursor
        except psycopg.Error as exc:
            raise self._error(exc) from exc

    def _ensure_schema(self, db: psycopg.Connection[Any]) -> None:
        with _ready_lock:
            if self.url in _ready:
                return
        with db.transaction():
            # Two hosts starting at once would race on CREATE ... IF NOT EXISTS: one at a time.
            db.execute("SELECT pg_advisory_xact_lock(hashtext('mycel_search_schema'))")
            db.execute(_SCHEMA)
        with _ready_lock:
            _ready.add(self.url)

    @contextmanager
    def writing(self) -> Iterator[PgIndexWriter]:
        """One write transaction, one writer per store at a time; readers see the previous state."""
        with self._transaction() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", ("mycel_search:" + self.store,))
            writer = PgIndexWriter(cursor, self.store)
            try:
                yield writer
                writer.finish()
            finally:
                writer.close()
        if writer.added >= ANALYZE_AFTER:
            # Without statistics the planner sorts every match of a common word instead of walking the
            # newest ids (100 ms against 25 ms over 63,000 documents); autovacuum would come later.
            with self._transaction() as cursor:
                cursor.execute("ANALYZE mycel_search_docs")

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
        """As SearchIndex.query, ranked by ts_rank (`rank` is its negative, so lower is better, as bm25)."""
        tsquery, terms = _tsquery(query)
        where = ["store = %s", f"tsv @@ ({tsquery})"]
        params: list[object] = [self.store, *terms]
        for clause, value in (
            ("lower(tool) = lower(%s)", tool),
            ("thread_id = %s", thread_id),
            ("at >= %s", since),
            ("at < %s", until),
        ):
            if value is not None:
                where.append(clause)
                params.append(value)
        common = search_index.COMMON_MATCHES
        first, first_terms = "false", list[str]()
        if phrase_first is not None:
            first_query, first_terms = _tsquery(phrase_first)
            first = f"tsv @@ ({first_query})"
        # One pass: the newest common+1 matches (a backward walk of the ids when the word is common, the GIN
        # index when it is rare: the planner's choice), ranked without the oldest of them, which only says
        # whether there were more. The bodies are read for the page of results alone.
        with self._transaction() as cursor:
            cursor.execute(
                "SELECT id, thread_id, idx, kind, tool, rank, at, found FROM ("
                f" SELECT *, ts_rank(tsv, ({tsquery}), 2) AS rank, {first} AS first,"
                "  count(*) OVER () AS found, row_number() OVER (ORDER BY id DESC) AS age FROM ("
                "   SELECT id, thread_id, idx, kind, tool, at, tsv FROM mycel_search_docs"
                f"   WHERE {' AND '.join(where)} ORDER BY id DESC LIMIT %s) AS newest"
                ") AS ranked WHERE age <= %s"
                " ORDER BY first DESC, rank DESC, at DESC NULLS LAST, thread_id, idx LIMIT %s",
                [*terms, *first_terms, *params, common + 1, common, limit],
            )
            rows = cursor.fetchall()
            cursor.execute(
                "SELECT id, body FROM mycel_search_docs WHERE id = ANY(%s)", ([int(r[0]) for r in rows],)
            )
            bodies = dict(cursor.fetchall())
        return IndexMatches(
            [
                IndexRow(
                    entry=int(r[0]),
                    thread_id=r[1],
                    index=int(r[2]),
                    kind=r[3],
                    tool=r[4],
                    snippet=snippet(bodies[r[0]], query),
                    rank=-float(r[5]),
                    at=r[6].astimezone(UTC) if r[6] is not None else None,
                )
                for r in rows
            ],
            common if rows and int(rows[0][7]) > common else None,
        )

    def document_count(self) -> int:
        with self._transaction() as cursor:
            cursor.execute("SELECT count(*) FROM mycel_search_docs WHERE store = %s", (self.store,))
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def purge_deleted(self) -> None:
        """VACUUM the index's tables, so the rebuild that follows writes over the deleted rows' space.
        PostgreSQL does not zero that space, and VACUUM FULL would lock every store's search meanwhile."""
        try:
            with psycopg.connect(
                self.url, connect_timeout=max(1, int(self.timeout_s)), autocommit=True
            ) as db:
                db.execute("VACUUM mycel_search_docs, mycel_search_threads, mycel_search_meta")
        except psycopg.Error as exc:
            raise self._error(exc) from exc


class PgIndexWriter:
    def __init__(self, cursor: psycopg.Cursor[Any], store: str) -> None:
        self.cursor = cursor
        self.store = store
        self.added = 0
        self._docs: list[tuple[object, ...]] = []
        self._kept: dict[str, IndexedThread] = {}
        self._staged = False
        self._bulk: bool | None = None  # decided at the first COPY: indexes dropped, built at finish()
        # One batch at a time goes to the server from a second thread while this one reads the next
        # (psycopg waits without the GIL): the server's tsvectors and inserts overlap our decoding.
        self._sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mycel-search-copy")
        self._sending: Future[None] | None = None

    def threads(self) -> dict[str, IndexedThread]:
        self._sent()
        self._flush_kept()
        self.cursor.execute(
            "SELECT thread_id, head, messages, ids_digest, summaries FROM mycel_search_threads WHERE store = %s",
            (self.store,),
        )
        return {r[0]: IndexedThread(r[1], int(r[2]), r[3], r[4]) for r in self.cursor.fetchall()}

    def get_meta(self, key: str) -> str | None:
        self._sent()
        self.cursor.execute(
            "SELECT value FROM mycel_search_meta WHERE store = %s AND key = %s", (self.store, key)
        )
        row = self.cursor.fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._sent()
        self.cursor.execute(
            "INSERT INTO mycel_search_meta (store, key, value) VALUES (%s, %s, %s)"
            " ON CONFLICT (store, key) DO UPDATE SET value = EXCLUDED.value",
            (self.store, key, value),
        )

    def add(self, documents: Iterable[SearchDocument]) -> int:
        before = len(self._docs)
        self._docs += [
            (
                self.added + n,
                self.store,
                d.thread_id,
                d.index,
                d.kind.value,
                d.tool,
                d.at if d.at is None or d.at.tzinfo else d.at.replace(tzinfo=UTC),
                d.text,
                _words(d.text),
            )
            for n, d in enumerate(documents)
        ]
        count = len(self._docs) - before
        self.added += count
        if len(self._docs) >= FLUSH_ROWS:
            self._flush_docs()
        return count

    def remove(self, thread_id: str | None, kinds: Sequence[str], *, keep: bool = False) -> None:
        """As IndexWriter.remove."""
        self._flush_docs()
        self._sent()
        where = f"store = %s AND {'NOT ' if keep else ''}(kind = ANY(%s))"
        params: list[object] = [self.store, list(kinds)]
        if thread_id is not None:
            where += " AND thread_id = %s"
            params.append(thread_id)
        self.cursor.execute(f"DELETE FROM mycel_search_docs WHERE {where}", params)

    def remove_thread(self, thread_id: str) -> None:
        self.remove(thread_id, ["queue"], keep=True)
        self._kept.pop(thread_id, None)
        self._sent()
        self.cursor.execute(
            "DELETE FROM mycel_search_threads WHERE store = %s AND thread_id = %s", (self.store, thread_id)
        )

    def keep_thread(self, thread_id: str, state: IndexedThread) -> None:
        self._kept[thread_id] = state

    def clear(self) -> None:
        self._sent()
        self._docs.clear()
        self._kept.clear()
        for table in ("mycel_search_docs", "mycel_search_threads", "mycel_search_meta"):
            self.cursor.execute(f"DELETE FROM {table} WHERE store = %s", (self.store,))

    def finish(self) -> None:
        """Send what is buffered and build the indexes a first load dropped; before the commit."""
        self._flush_docs()
        self._sent()
        self._flush_kept()
        if self._bulk:
            # One GIN build over the whole load; its sort wants memory (the default 64 MB spills).
            self.cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
            for statement in _INDEXES:
                self.cursor.execute(statement)

    def close(self) -> None:
        """Wait for the batch in flight (its error was raised by finish(), or a body's error is)."""
        if self._sending is not None:
            wait([self._sending])
        self._sender.shutdown()

    def _sent(self) -> None:
        # Before any other statement on the cursor: the batch in flight is done, its error raised here.
        if self._sending is not None:
            sending, self._sending = self._sending, None
            sending.result()

    def _stage(self) -> None:
        if not self._staged:
            self.cursor.execute(_STAGING)
            self._staged = True

    def _flush_docs(self) -> None:
        if not self._docs:
            return
        self._sent()
        self._stage()
        if self._bulk is None:
            # A first load (a full buffer into an empty table): no index is kept up row by row.
            self.cursor.execute("SELECT NOT EXISTS (SELECT 1 FROM mycel_search_docs)")
            row = self.cursor.fetchone()
            self._bulk = bool(row and row[0]) and len(self._docs) >= FLUSH_ROWS
            if self._bulk:
                self.cursor.execute("DROP INDEX IF EXISTS mycel_search_docs_tsv, mycel_search_docs_thread")
        self._sending = self._sender.submit(self._send, self._docs)
        self._docs = []

    def _send(self, docs: list[tuple[object, ...]]) -> None:
        columns = "n, store, thread_id, idx, kind, tool, at, body, words"
        with self.cursor.copy(f"COPY mycel_search_load ({columns}) FROM STDIN") as copy:
            for doc in docs:
                copy.write_row(doc)
        # In the order added, so ids follow time (a common word is ranked among its newest matches).
        self.cursor.execute(
            "INSERT INTO mycel_search_docs (store, thread_id, idx, kind, tool, at, body, tsv)"
            " SELECT store, thread_id, idx, kind, tool, at, body, to_tsvector('simple', words)"
            " FROM mycel_search_load ORDER BY n"
        )
        self.cursor.execute("TRUNCATE mycel_search_load")

    def _flush_kept(self) -> None:
        if not self._kept:
            return
        self._sent()
        self._stage()
        with self.cursor.copy(
            "COPY mycel_search_kept (thread_id, head, messages, ids_digest, summaries) FROM STDIN"
        ) as copy:
            for thread_id, state in self._kept.items():
                copy.write_row((thread_id, state.head, state.messages, state.ids_digest, state.summaries))
        self.cursor.execute(
            "INSERT INTO mycel_search_threads (store, thread_id, head, messages, ids_digest, summaries)"
            " SELECT %s, thread_id, head, messages, ids_digest, summaries FROM mycel_search_kept"
            " ON CONFLICT (store, thread_id) DO UPDATE SET head = EXCLUDED.head,"
            " messages = EXCLUDED.messages, ids_digest = EXCLUDED.ids_digest, summaries = EXCLUDED.summaries",
            (self.store,),
        )
        self.cursor.execute("TRUNCATE mycel_search_kept")
        self._kept.clear()

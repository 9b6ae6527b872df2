"""`search`: the one function behind the Search screen, `mycel-memory search` and /api/search.

Each search first brings the index up to date with the checkpoint store (`refresh_index`): a thread whose
head moved forward adds only the messages past what was indexed, read from the new steps' writes when
they say it exactly (message_deltas.py), else from its new head; a thread whose head no longer holds the
indexed messages (a rollback) is indexed again; nothing is read when the store's version is unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from datetime import time as clock_time
from typing import Any

from memory_core.call_record.calls import checkpoints_holding, holder_of
from memory_core.memo import Key, Memo
from memory_core.messages import Message, MessageType, text_of
from memory_core.records import StoreProblem, ThreadRow
from memory_core.search.documents import (
    INDEXING_RULES,
    canonical_args,
    message_documents,
    queue_documents,
    summary_documents,
)
from memory_core.search.query import ParsedQuery, QueryError, parse_query
from memory_core.stores.message_deltas import AppendedMessages, MessagesSince
from memory_core.stores.postgres.search_index import PgSearchIndex
from memory_core.stores.reader import MycelReader, Result
from memory_core.stores.sqlite.search_index import (
    MARK_END,
    MARK_START,
    IndexedThread,
    IndexMatches,
    IndexRow,
    SearchIndex,
    SearchIndexError,
    SearchStore,
    SearchWriter,
    index_path,
)
from memory_core.stores.thread_list.derived import default_folder

__all__ = [
    "QueryError",
    "SearchHit",
    "SearchIndexError",
    "SearchResults",
    "day_after",
    "day_start",
    "refresh_index",
    "search",
]

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


@dataclass(frozen=True, slots=True)
class IndexRefresh:
    """What one refresh did: threads looked at, documents added, threads indexed again from scratch."""

    threads_updated: int = 0
    documents_added: int = 0
    threads_reindexed: int = 0
    threads_removed: int = 0
    threads_pending: int = 0  # moved or new threads left for the next search (the time budget ran out)
    threads_from_deltas: int = 0  # moved threads whose new messages came from their writes, no head decoded

    def describe(self) -> str | None:
        """What the refresh did, in a sentence (None when the index was already up to date)."""
        if not (self.threads_updated or self.threads_removed or self.threads_pending):
            return None
        how = [
            f"{n:,} {what}"
            for n, what in (
                (self.threads_from_deltas, "from their new writes"),
                (self.threads_reindexed, "again"),
            )
            if n
        ]
        said = f"indexed {self.threads_updated:,} thread{'' if self.threads_updated == 1 else 's'}"
        said += f" ({', '.join(how)})" if how else ""
        said += f", {self.documents_added:,} documents added"
        if self.threads_removed:
            said += f"; removed {self.threads_removed:,} no longer in the store"
        if self.threads_pending:
            said += f"; {self.threads_pending:,} not indexed yet (search again to go on)"
        return said


@dataclass(frozen=True, slots=True)
class SearchHit:
    thread_id: str
    index: int  # the message's index in the thread's newest checkpoint
    kind: str
    tool: str | None
    snippet: str  # plain text
    marks: tuple[tuple[int, int], ...]  # (start, end) of each match in `snippet`
    rank: int  # 1 = best
    score: float  # bm25 (lower is better); a whole-query phrase match comes first whatever its score
    at: datetime | None


@dataclass(frozen=True, slots=True)
class SearchResults:
    query: str
    hits: tuple[SearchHit, ...]
    more: bool  # there were more matches than `limit`
    refresh: IndexRefresh = field(default_factory=IndexRefresh)
    problems: tuple[StoreProblem, ...] = ()
    # A term so common that more than this many documents matched: ranked among the newest this many.
    newest_only: int | None = None

    @property
    def notice(self) -> str | None:
        """What the results leave out, in one sentence for the page and the command line."""
        if self.newest_only is None:
            return None
        return (
            f"More than {self.newest_only:,} documents match, so these are the best of the newest "
            f"{self.newest_only:,}: add a rarer word, a phrase or a filter to reach older ones."
        )


def day_start(day: date) -> datetime:
    return datetime.combine(day, clock_time(), UTC)


def day_after(day: date) -> datetime:
    """The end of `day` (exclusive), so `until` a date includes that whole day."""
    return day_start(day) + timedelta(days=1)


def default_index(reader: MycelReader, environ: Mapping[str, str] | None = None) -> SearchStore:
    """The index of this reader's store: in the dashboard's own PostgreSQL database when `DATABASE_URL`
    names one (so several dashboard hosts share it), else a file in its facts folder (the dashboard's
    data folder, or the CLI's cache folder); one per checkpoint store."""
    environ = os.environ if environ is None else environ
    # Named after where the store is, not its inode: a leon.db replaced in place keeps its index, which
    # the refresh then checks thread by thread against the new file.
    where = reader.store_key if reader.locations.postgres_url else str(reader.locations.main)
    database = environ.get("DATABASE_URL", "")
    if database.startswith(("postgres://", "postgresql://")):
        return PgSearchIndex(database, where)
    folder = reader.facts_folder if reader.facts_folder is not None else default_folder(environ)
    return SearchIndex(index_path(folder, where))


# The indexed messages' digest is a chain, so new messages extend it without the old ones. Each link hashes
# exactly what message_documents indexes of a message (`_indexed_link`), never its id: the head decode and
# the writes (where add_messages has not yet given an id-less input its uuid) give the same digest, and two
# messages with the same link give the same documents. A digest of another form (`c:`, an unreleased
# id-based chain) is unknown, so the thread is indexed again once.
_CHAIN = "d:"


def _indexed_link(previous: bytes, message: Message) -> bytes:
    """The next chain link: the message's type, its tool name (tool messages), its text and each tool call
    as indexed (canonical_args), each length-prefixed so no two splits read alike; one sha256 per message
    (its constructor is cheaper per call than blake2b's with a digest size: a first index hashes 500,000)."""
    text = text_of(message.content)
    tool = (message.name or "") if message.type is MessageType.TOOL else ""
    entry = f"{message.type.value}:{len(tool)}:{tool}{len(text)}:{text}"
    for call in message.tool_calls:
        args = canonical_args(call.name, call.args)
        entry += f"{len(args)}:{args}"
    return hashlib.sha256(previous + entry.encode("utf-8", "surrogatepass")).digest()[:12]


def _extend_digest(digest: str, messages: Sequence[Message]) -> str:
    link = bytes.fromhex(digest[len(_CHAIN) :])
    for m in messages:
        link = _indexed_link(link, m)
    return _CHAIN + link.hex()


def _content_digest(messages: Sequence[Message]) -> str:
    return _extend_digest(_CHAIN, messages)


def _held_digest(messages: Sequence[Message], old: IndexedThread) -> str | None:
    """The chain digest of the messages `old` indexed when `messages` start with them, else None (also
    for a digest of unknown form)."""
    if len(messages) < old.messages:
        return None
    if not old.ids_digest.startswith(_CHAIN):
        return None
    digest = _content_digest(messages[: old.messages])
    return digest if digest == old.ids_digest else None


def _summaries_signature(row: ThreadRow) -> str:
    return f"{row.summaries}:{int(row.active_summary)}" if row.summaries else ""


def refresh_index(
    reader: MycelReader, index: SearchStore, *, budget_s: float | None = None
) -> Result[IndexRefresh]:
    """Bring `index` up to date with the reader's store; free when the store's version has not moved
    since this process last did it. With `budget_s`, threads left when it is spent wait for the next
    call (`threads_pending`), so a first search over a big fleet answers instead of hanging."""
    key = Key(reader.backend.version(), what=("search-index", str(index.path)))
    deadline = None if budget_s is None else time.monotonic() + budget_s
    ran = False

    def refresh() -> Result[IndexRefresh]:
        nonlocal ran
        ran = True
        return _refresh(reader, index, deadline)

    checked = _CHECKED.get_or_compute(key, refresh, keep=_complete)
    # Kept from an earlier call (or a caller it waited for): this call added nothing itself.
    return checked if ran else Result(IndexRefresh(), checked.problems)


def _complete(result: Result[IndexRefresh]) -> bool:
    # A file Mycel never made (no queue.db) is normal; any other problem, or threads left for later,
    # means look again next time.
    return not result.value.threads_pending and all(p.expected_absence for p in result.problems)


# Per store version and index file: that this process brought the index up to date at that version.
_CHECKED: Memo[Result[IndexRefresh]] = Memo("search.index_checked", max_entries=16)


def _refresh(reader: MycelReader, index: SearchStore, deadline: float | None = None) -> Result[IndexRefresh]:
    listed = reader.list_threads()
    problems = list(listed.problems)
    rows = {row.thread_id: row for row in listed.value}
    _RULES_CHECKED.get_or_compute(Key(str(index.path), what="indexing-rules"), lambda: _follow_rules(index))
    with index.writing() as writer:
        known = writer.threads()
        # A list read with problems (a locked or damaged leon.db) may miss threads: nothing is removed then.
        complete = not any(not p.expected_absence for p in listed.problems)
        removed = [t for t in known if t not in rows] if complete else []
        for thread_id in removed:
            writer.remove_thread(thread_id)
            del known[thread_id]
        moved = [
            row
            for row in rows.values()
            if row.head_checkpoint_id is not None
            and (row.thread_id not in known or known[row.thread_id].head != row.head_checkpoint_id)
        ]
        # Oldest first, so rowids follow time: a very common word is ranked among its newest matches.
        moved.sort(key=_updated)
        added, reindexed, done, from_deltas = _index_messages(
            reader, writer, moved, known, problems, deadline
        )
        added += _index_summaries(reader, writer, rows, known, problems)
        added += _index_queue(reader, writer, rows, problems)
    refresh = IndexRefresh(done, added, reindexed, len(removed), len(moved) - done, from_deltas)
    return Result(refresh, tuple(dict.fromkeys(problems)))


# Per index: that this process saw it made under today's INDEXING_RULES.
_RULES_CHECKED: Memo[bool] = Memo("search.rules_checked", max_entries=16)


def _follow_rules(index: SearchStore) -> bool:
    """Empty an index made under other indexing rules: an older redaction rule may have let a secret in."""
    with index.writing() as writer:
        current = writer.get_meta("rules") == INDEXING_RULES
    if not current:
        _empty_index(index)
    return True


def _empty_index(index: SearchStore) -> None:
    """Empty the index, leaving none of what it held on disk, and record today's indexing rules. An index
    that held nothing (a new one) has nothing to wipe and is not purged (on PostgreSQL, a first index of
    10,000 threads right after a VACUUM of the empty tables measured 64-68 s against 62.6 s without)."""
    with index.writing() as writer:
        held = bool(writer.threads()) or writer.get_meta("queue") is not None
        writer.clear()
        writer.set_meta("rules", INDEXING_RULES)
    if held:
        index.purge_deleted()


def _updated(row: ThreadRow) -> float:
    return row.updated_at.timestamp() if row.updated_at is not None else float("-inf")


def _index_messages(
    reader: MycelReader,
    writer: SearchWriter,
    moved: list[ThreadRow],
    known: dict[str, IndexedThread],
    problems: list[StoreProblem],
    deadline: float | None,
) -> tuple[int, int, int, int]:
    """Index the new messages of threads whose head moved (until `deadline`), in `moved`'s order; returns
    documents added, threads indexed again, threads done and threads done from their writes. A thread
    new to the index, or indexed again, keeps no summaries signature, so its summaries follow."""
    added = reindexed = done = from_deltas = 0

    def out_of_time() -> bool:
        # At least one thread per call, so each search goes on where the last one stopped.
        return deadline is not None and done > 0 and time.monotonic() > deadline

    def keep(row: ThreadRow, state: IndexedThread) -> None:
        # `known` follows what is written, so the summaries pass needs no second read of the table.
        known[row.thread_id] = state
        writer.keep_thread(row.thread_id, state)

    # In chunks, so the writes read ahead of the deadline's checks stay a few hundred threads' worth.
    for first in range(0, len(moved), _CHUNK):
        chunk = moved[first : first + _CHUNK]
        deltas = _appended(reader, chunk, known, problems)
        # Runs done from their writes, and runs whose heads are read together (one query each run).
        for from_writes, run in itertools.groupby(
            chunk, key=lambda row: deltas.get(row.thread_id) is not None
        ):
            if from_writes:
                for row in run:
                    if out_of_time():
                        return added, reindexed, done, from_deltas
                    done += 1
                    from_deltas += 1
                    appended, indexed = deltas[row.thread_id], known[row.thread_id]
                    assert appended is not None
                    times = (
                        appended.times
                        or _first_held(reader, row, appended.start + len(appended.messages), problems)[
                            appended.start :
                        ]
                    )
                    added += writer.add(
                        message_documents(
                            row.thread_id, appended.messages, first_index=appended.start, times=times
                        )
                    )
                    digest = _extend_digest(indexed.ids_digest, appended.messages)
                    count = appended.start + len(appended.messages)
                    keep(row, IndexedThread(row.head_checkpoint_id, count, digest, indexed.summaries))
                continue
            rows = list(run)
            written = reader.message_times(rows)
            problems.extend(written.problems)
            for row, messages in reader.head_messages(rows, problems):
                if out_of_time():
                    return added, reindexed, done, from_deltas
                done += 1
                if messages is None:
                    continue  # an unreadable head: keep what was indexed, try again when the head moves
                old = known.get(row.thread_id)
                start, signature, digest = 0, "", _CHAIN
                if old is not None:
                    held = _held_digest(messages, old)
                    if held is not None:
                        start, signature, digest = old.messages, old.summaries, held
                    else:
                        writer.remove_thread(row.thread_id)
                        reindexed += 1
                found = written.value.get(row.thread_id)
                stepped = found if found is not None and len(found) == len(messages) else None
                at = stepped or _first_held(reader, row, len(messages), problems)
                added += writer.add(
                    message_documents(row.thread_id, messages[start:], first_index=start, times=at[start:])
                )
                digest = _extend_digest(digest, messages[start:])
                keep(row, IndexedThread(row.head_checkpoint_id, len(messages), digest, signature))
    return added, reindexed, done, from_deltas


_CHUNK = 500


def _first_held(
    reader: MycelReader, row: ThreadRow, count: int, problems: list[StoreProblem]
) -> tuple[datetime | None, ...]:
    """When each of the head's `count` messages was first held, from the checkpoints' message counts,
    where the writes could not say it (a rollback, a removal, dev's layout); the head's time for a
    message no checkpoint on its lineage accounts for."""
    listed = reader.list_checkpoints(row.thread_id)
    problems.extend(listed.problems)
    holding = checkpoints_holding(listed.value, row.head_checkpoint_id)
    created = {c.checkpoint_id: c.created_at for c in listed.value}
    return tuple(created.get(holder_of(i, holding) or "", row.updated_at) for i in range(count))


def _appended(
    reader: MycelReader,
    moved: Sequence[ThreadRow],
    known: dict[str, IndexedThread],
    problems: list[StoreProblem],
) -> dict[str, AppendedMessages | None]:
    """The new messages of every moved thread already indexed, from its new steps' writes, in one read
    (None where they cannot say it: the head is decoded instead)."""
    asks = [
        MessagesSince(row.thread_id, old.head, row.head_checkpoint_id, old.messages, row.messages)
        for row in moved
        if row.head_checkpoint_id is not None
        and (old := known.get(row.thread_id)) is not None
        and old.head is not None
        and old.ids_digest.startswith(_CHAIN)  # an unknown digest cannot be extended: decode once
    ]
    if not asks:
        return {}
    found = reader.messages_since(asks)
    problems.extend(found.problems)
    return found.value


def _index_summaries(
    reader: MycelReader,
    writer: SearchWriter,
    rows: dict[str, ThreadRow],
    indexed: dict[str, IndexedThread],
    problems: list[StoreProblem],
) -> int:
    """Index again the summaries of each thread whose summaries changed (count or active one)."""
    added = 0
    for row in rows.values():
        state = indexed.get(row.thread_id) or IndexedThread(None, 0, _content_digest(()), "")
        signature = _summaries_signature(row)
        if state.summaries == signature and row.thread_id in indexed:
            continue
        writer.remove(row.thread_id, ["summary"])
        if signature:
            summaries = reader.list_summaries(row.thread_id)
            problems.extend(summaries.problems)
            added += writer.add(summary_documents(summaries.value))
        writer.keep_thread(
            row.thread_id, IndexedThread(state.head, state.messages, state.ids_digest, signature)
        )
    return added


def _index_queue(
    reader: MycelReader, writer: SearchWriter, rows: dict[str, ThreadRow], problems: list[StoreProblem]
) -> int:
    """The queue is small and its rows come and go: indexed again whole whenever it changed."""
    queue = reader.list_queue(None)
    problems.extend(queue.problems)
    items = [item for item in queue.value if item.thread_id in rows]
    counts = {thread_id: row.messages for thread_id, row in rows.items()}
    signature = hashlib.blake2b(
        repr([(i.id, i.thread_id, i.content, counts.get(i.thread_id)) for i in items]).encode(
            "utf-8", "replace"
        ),
        digest_size=12,
    ).hexdigest()
    if writer.get_meta("queue") == signature:
        return 0
    writer.remove(None, ["queue"])
    writer.set_meta("queue", signature)
    return writer.add(queue_documents(items, counts))


def rebuild_index(reader: MycelReader, index: SearchStore | None = None) -> Result[IndexRefresh]:
    """Index everything again from scratch (`manage.py search_index`)."""
    index = index or default_index(reader)
    _empty_index(index)
    return _refresh(reader, index)


def search(
    reader: MycelReader,
    query: str,
    *,
    tool: str | None = None,
    thread: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int = DEFAULT_LIMIT,
    index: SearchStore | None = None,
    budget_s: float | None = None,
) -> SearchResults:
    """Matches of `query` (words and "exact phrases", all required) over every thread, best first: a match
    of the whole query as one phrase, then bm25, ties newest first. Raises QueryError for an empty query and
    SearchIndexError when our index file cannot be used."""
    parsed = parse_query(query)
    limit = max(1, min(limit, MAX_LIMIT))
    index = index or default_index(reader)
    refreshed = refresh_index(reader, index, budget_s=budget_s)

    def matches(terms: ParsedQuery, phrase_first: ParsedQuery | None = None) -> IndexMatches:
        return index.query(
            terms,
            tool=tool,
            thread_id=thread,
            since=since,
            until=until,
            limit=limit + 1,
            phrase_first=phrase_first,
        )

    # The whole query as one phrase: its matches outrank the scattered words'.
    whole = (
        ParsedQuery((parsed.words,)) if len(parsed.words) > 1 and parsed.terms != (parsed.words,) else None
    )
    passes = [matches(parsed, whole)]
    if whole is not None and passes[0].newest_only is None:
        # Few matches: the phrase's own pass ranks them by the phrase's bm25 and marks it as one.
        passes.insert(0, matches(whole))
    rows: dict[int, IndexRow] = {}
    for found in passes:
        for row in found.rows:
            rows.setdefault(row.entry, row)
    ordered = list(rows.values())
    newest_only = max((p.newest_only for p in passes if p.newest_only is not None), default=None)
    hits = tuple(_hit(row, rank) for rank, row in enumerate(ordered[:limit], start=1))
    return SearchResults(query, hits, len(ordered) > limit, refreshed.value, refreshed.problems, newest_only)


def _hit(row: IndexRow, rank: int) -> SearchHit:
    text: list[str] = []
    marks: list[tuple[int, int]] = []
    length = 0
    start: int | None = None
    for char in row.snippet:
        if char == MARK_START:
            start = length
        elif char == MARK_END:
            if start is not None and length > start:
                marks.append((start, length))
            start = None
        else:
            text.append(char)
            length += 1
    return SearchHit(
        row.thread_id, row.index, row.kind, row.tool, "".join(text), tuple(marks), rank, row.rank, row.at
    )


def hit_json(hit: SearchHit) -> dict[str, Any]:
    """One result as the CLI's --json and the API give it."""
    return {
        "thread_id": hit.thread_id,
        "index": hit.index,
        "snippet": hit.snippet,
        "marks": [list(mark) for mark in hit.marks],
        "kind": hit.kind,
        "tool": hit.tool,
        "rank": hit.rank,
        "at": hit.at.isoformat() if hit.at else None,
    }


def results_json(results: SearchResults) -> list[dict[str, Any]]:
    return [hit_json(hit) for hit in results.hits]

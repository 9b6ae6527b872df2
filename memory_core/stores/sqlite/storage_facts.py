"""Mycel main's bytes on disk, read from SQLite without decoding a blob (memory_core.footprint.facts).

Per checkpoint: `length()` of the checkpoint and metadata columns (SQLite answers it from each record's
header) and of its writes' values, the metadata's `source` through SQLite's JSON functions. Two grouped
queries cover the whole fleet, each packed into one JSON text per thread (ReadOnlyDB.rows_as_json), so the
row cap counts threads, not checkpoints; after a commit only the threads whose key moved (`thread_keys`,
read from the indexes) are read again. Per file: `dbstat`'s pages and payload per table and index where
SQLite was built with it, else page counts and `length()` sums, saying what is estimated.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory_core.footprint.facts import (
    MEASURE_DRIFT,
    ChannelBytes,
    CheckpointBytes,
    StoreSpace,
    TableMeasure,
    TableSpace,
    ThreadBytes,
)
from memory_core.stores.msgpack_spans import SpanError, channel_value_spans
from memory_core.stores.sqlite.connect import EVERY_ROW, ReadOnlyDB, StoreError

_ROOT = ""  # Mycel's graphs checkpoint in the root namespace; others are sub-graphs
_SOURCE = (
    "CASE WHEN json_valid(CAST(metadata AS TEXT)) AND json_type(CAST(metadata AS TEXT), '$.source') = 'text' "
    "THEN json_extract(CAST(metadata AS TEXT), '$.source') END"
)


def _among(threads: Sequence[str] | None) -> tuple[str, tuple[Any, ...]]:
    if threads is None:
        return "", ()
    return "WHERE thread_id IN (SELECT value FROM json_each(?))", (json.dumps(list(threads)),)


def _per_thread(
    db: ReadOnlyDB, sql: str, params: Sequence[Any], *, columns: Sequence[str]
) -> list[list[Any]]:
    """A fleet query's rows, one per thread (packed as ReadOnlyDB.rows_as_json packs them): with no row
    cap, since every thread counts and a cap would drop threads from the fleet's bytes."""
    return db.rows_as_json(sql, params, columns=columns, cap=EVERY_ROW)


def thread_keys(db: ReadOnlyDB, threads: Sequence[str] | None = None) -> dict[str, Hashable]:
    """Per thread, what changes whenever its bytes do: checkpoint count and greatest id (in any namespace;
    checkpoints are only appended) and its writes' count and bytes (a task's writes grow under the head).
    Answered from the primary-key indexes and the record headers; far cheaper than the facts themselves."""
    keys: dict[str, tuple[int, str, int, int]] = {}
    where, params = _among(threads)
    if db.has_table("checkpoints"):
        for thread, count, head in _per_thread(
            db,
            "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS n, CAST(MAX(checkpoint_id) AS TEXT) AS head "
            f"FROM checkpoints {where} GROUP BY thread_id",
            params,
            columns=("thread", "n", "head"),
        ):
            keys[str(thread)] = (int(count), str(head), 0, 0)
    if db.has_table("writes"):
        for thread, count, size in _per_thread(
            db,
            "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS n, SUM(COALESCE(length(value), 0)) AS size "
            f"FROM writes {where} GROUP BY thread_id",
            params,
            columns=("thread", "n", "size"),
        ):
            before = keys.get(str(thread), (0, "", 0, 0))
            keys[str(thread)] = (before[0], before[1], int(count), int(size or 0))
    return dict(keys)


def list_thread_bytes(
    db: ReadOnlyDB,
    threads: Sequence[str] | None = None,
    *,
    store: str,
    before: Mapping[str, ThreadBytes] | None = None,
) -> list[ThreadBytes]:
    """These threads' checkpoints' bytes (every thread's when None), oldest first within each thread;
    `store` is the label the Storage screen names the file by.

    A thread's facts `before` (read earlier from this very file) spare reading its checkpoints again:
    checkpoint rows are never rewritten and a new one has a greater id (uuid6), so only rows past its
    newest root id are read (with every sub-graph row and every write, which are cheap). A thread whose
    root count then disagrees (a retention script deleted rows) is read whole."""
    if not db.require_table("checkpoints"):
        return []
    reused = {t: before[t].checkpoints for t in threads or () if before and t in before}
    if reused and threads is not None:
        after = [[t, reused[t][-1].checkpoint_id if reused.get(t) else ""] for t in threads]
        rows_from = (
            "FROM checkpoints JOIN (SELECT json_extract(value, '$[0]') AS wanted, json_extract(value, '$[1]') "
            "AS after FROM json_each(?)) ON thread_id = wanted WHERE checkpoint_ns != '' OR checkpoint_id > after"
        )
        params: tuple[Any, ...] = (json.dumps(after),)
    else:
        where, params = _among(threads)
        rows_from = f"FROM checkpoints {where}"
    checkpoints = _per_thread(
        db,
        "SELECT thread, json_group_array(json_array(ns, id, parent, c, m, source)) AS items FROM ("
        "SELECT CAST(thread_id AS TEXT) AS thread, CAST(checkpoint_ns AS TEXT) AS ns, "
        "CAST(checkpoint_id AS TEXT) AS id, CAST(parent_checkpoint_id AS TEXT) AS parent, "
        "COALESCE(length(checkpoint), 0) AS c, COALESCE(length(metadata), 0) AS m, "
        f"{_SOURCE} AS source {rows_from} ORDER BY thread_id, checkpoint_ns, checkpoint_id) "
        "GROUP BY thread",
        params,
        columns=("thread", "items"),
    )
    found = {str(thread): _items(items) for thread, items in checkpoints}
    written = _writes(db, threads)
    out: list[ThreadBytes] = []
    for thread in list(found) + [t for t in reused if t not in found]:
        out.append(
            _thread(thread, found.get(thread, []), written.pop(thread, {}), store, reused.get(thread, ()))
        )
    # Writes of a thread with no checkpoint left: its bytes all the same.
    out.extend(ThreadBytes(t, store, "main", (), other_bytes=sum(w.values())) for t, w in written.items())
    if reused:
        counts = _root_counts(db, list(reused))
        stale = {
            t.thread_id
            for t in out
            if t.thread_id in reused and len(t.checkpoints) != counts.get(t.thread_id, 0)
        }
        if stale:
            again = {t.thread_id: t for t in list_thread_bytes(db, sorted(stale), store=store)}
            out = [again.get(t.thread_id, t) for t in out if t.thread_id not in stale or t.thread_id in again]
    return out


def _root_counts(db: ReadOnlyDB, threads: Sequence[str]) -> dict[str, int]:
    where, params = _among(threads)
    rows = _per_thread(
        db,
        "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS n FROM checkpoints "
        f"{where} AND checkpoint_ns = '' GROUP BY thread_id",
        params,
        columns=("thread", "n"),
    )
    return {str(t): int(n) for t, n in rows}


def _writes(db: ReadOnlyDB, threads: Sequence[str] | None) -> dict[str, dict[tuple[str, str], int]]:
    """Per thread: (namespace, checkpoint id) -> bytes of the writes' values recorded there."""
    if not db.has_table("writes"):
        return {}
    where, params = _among(threads)
    rows = _per_thread(
        db,
        "SELECT thread, json_group_array(json_array(ns, id, total)) AS items FROM ("
        "SELECT CAST(thread_id AS TEXT) AS thread, CAST(checkpoint_ns AS TEXT) AS ns, "
        "CAST(checkpoint_id AS TEXT) AS id, SUM(COALESCE(length(value), 0)) AS total "
        f"FROM writes {where} GROUP BY thread_id, checkpoint_ns, checkpoint_id) GROUP BY thread",
        params,
        columns=("thread", "items"),
    )
    return {str(t): {(str(ns), str(cid)): int(n or 0) for ns, cid, n in _items(items)} for t, items in rows}


def _items(items: Any) -> list[list[Any]]:
    # rows_as_json nests json_group_array's text as JSON, but an older SQLite may hand it back as text.
    found: list[list[Any]] = json.loads(items) if isinstance(items, str) else items
    return found


def _thread(
    thread: str,
    items: list[list[Any]],
    written: dict[tuple[str, str], int],
    store: str,
    reused: tuple[CheckpointBytes, ...] = (),
) -> ThreadBytes:
    # Kept checkpoints keep their bytes; their writes are taken afresh like every other.
    checkpoints = [replace(c, writes=written.pop((_ROOT, c.checkpoint_id), 0)) for c in reused]
    other = 0
    for ns, cid, parent, size, meta, source in items:
        if ns != _ROOT:
            other += int(size) + int(meta) + written.pop((ns, cid), 0)
            continue
        checkpoints.append(
            CheckpointBytes(
                checkpoint_id=str(cid),
                parent_id=str(parent) if parent is not None else None,
                checkpoint=int(size),
                metadata=int(meta),
                writes=written.pop((ns, cid), 0),
                source=str(source) if source is not None else None,
            )
        )
    # What is left names no checkpoint: a sub-graph's writes, or writes whose checkpoint is gone.
    other += sum(written.values())
    return ThreadBytes(thread, store, "main", tuple(checkpoints), other_bytes=other)


def channel_bytes(db: ReadOnlyDB, thread_id: str, checkpoint_id: str | None) -> tuple[
    str | None, list[ChannelBytes], str | None
]:  # fmt: skip
    """(the checkpoint id measured, per channel bytes, why not measured) of one root checkpoint (the head
    by default). Only msgpack checkpoints are walked; another serde type is not measured."""
    if not db.require_table("checkpoints"):
        return None, [], "no checkpoints table"
    if checkpoint_id is None:
        row = db.one(
            "SELECT CAST(MAX(checkpoint_id) AS TEXT) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        )
        checkpoint_id = str(row[0]) if row and row[0] is not None else None
        if checkpoint_id is None:
            return None, [], None
    found = db.one(
        "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
        (thread_id, checkpoint_id),
    )
    if found is None:
        return None, [], None
    writes: dict[str, int] = {}
    if db.has_table("writes"):
        for channel, total in db.rows(
            "SELECT CAST(channel AS TEXT), SUM(COALESCE(length(value), 0)) FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ? GROUP BY channel",
            (thread_id, checkpoint_id),
        ):
            writes[str(channel)] = int(total or 0)
    kind, blob = found
    inline: dict[str, int] = {}
    problem: str | None = None
    if kind != "msgpack" or not isinstance(blob, bytes):
        problem = (
            f"checkpoint {checkpoint_id} is stored as {kind!r}, not msgpack: its channels are not measured"
        )
    else:
        try:
            inline = channel_value_spans(blob)
        except SpanError as exc:
            problem = f"checkpoint {checkpoint_id} is damaged msgpack ({exc}): its channels are not measured"
    channels = sorted(inline.keys() | writes.keys())
    out = [ChannelBytes(c, inline.get(c, 0), 0, writes.get(c, 0)) for c in channels]
    return checkpoint_id, out, problem


# -- one file's space ----------------------------------------------------------------------------------


def store_space(
    db: ReadOnlyDB, label: str, kept: TableMeasure | None = None, *, file: str | None = None
) -> tuple[StoreSpace, TableMeasure]:
    """One SQLite file's space: dbstat when this SQLite has it, else page counts and length() sums. The
    file's size, WAL and free pages are read each time; its tables `kept` (measured earlier) serve while its
    page and free-page counts moved by at most MEASURE_DRIFT, since dbstat visits every page (~2 s over a
    100,000-thread leon.db), and the space says when they were measured. `file` is the file's fingerprint
    now: under the same one the kept tables are exact."""
    path = db.path
    page_size = int((db.one("PRAGMA page_size") or (0,))[0])
    pages = int((db.one("PRAGMA page_count") or (0,))[0])
    free_pages = int((db.one("PRAGMA freelist_count") or (0,))[0])
    if kept is not None and file is not None and kept.file == file:
        measure, estimated = kept, kept.estimated
    elif kept is not None and _within_drift(kept, pages, free_pages):
        measure = kept
        estimated = (
            *kept.estimated,
            f"tables and indexes as measured when the file had {kept.pages:,} pages ({pages:,} now): "
            f"measured again once its pages or free pages move by more than {MEASURE_DRIFT:.0%}",
        )
    else:
        measure = replace(_measure_tables(db, page_size, pages, free_pages), file=file)
        estimated = measure.estimated
    wal = Path(f"{path}-wal")
    space = StoreSpace(
        store=label,
        engine="sqlite",
        location=str(path),
        file_bytes=_size(path) or 0,
        wal_bytes=_size(wal) or 0,
        free_bytes=free_pages * page_size,
        tables=measure.tables,
        measured_by=measure.measured_by,
        estimated=estimated,
    )
    return space, measure


def _within_drift(kept: TableMeasure, pages: int, free_pages: int) -> bool:
    allowed = MEASURE_DRIFT * kept.pages
    return abs(pages - kept.pages) <= allowed and abs(free_pages - kept.free_pages) <= allowed


def _measure_tables(db: ReadOnlyDB, page_size: int, pages: int, free_pages: int) -> TableMeasure:
    kinds = {
        str(name): str(kind)
        for name, kind in db.rows("SELECT name, type FROM sqlite_master WHERE type IN ('table', 'index')")
    }
    try:
        # Summed per table by dbstat itself (`aggregate`): ~40 % faster than a row per page summed in SQL.
        measured = db.rows("SELECT name, pgsize, payload FROM dbstat WHERE aggregate = TRUE ORDER BY name")
    except StoreError:
        measured = None  # no SQLITE_ENABLE_DBSTAT_VTAB in this build
    if measured is not None:
        tables = tuple(
            TableSpace(str(name), kinds.get(str(name), "table"), int(size or 0), int(payload or 0))
            for name, size, payload in measured
        )
        return TableMeasure(pages, free_pages, tables, "dbstat", ())
    estimated = (
        "this SQLite has no dbstat: each table's bytes are the length() of its values, not its pages",
        "indexes are not measured (their pages are in the file size only)",
    )
    return TableMeasure(pages, free_pages, _estimated_tables(db, kinds, page_size), "page counts", estimated)


def _estimated_tables(db: ReadOnlyDB, kinds: dict[str, str], page_size: int) -> tuple[TableSpace, ...]:
    out: list[TableSpace] = []
    for name, kind in sorted(kinds.items()):
        if kind != "table":
            continue
        columns = db.columns(name)
        quoted = name.replace('"', '""')
        if columns:
            sizes = " + ".join(f'COALESCE(length("{c.replace(chr(34), chr(34) * 2)}"), 0)' for c in columns)
            row = db.one(f'SELECT SUM({sizes}) FROM "{quoted}"')
            payload = int(row[0] or 0) if row else 0
        else:
            payload = 0
        # Pages are not known without dbstat: the payload rounded up to whole pages stands in for them.
        pages = -(-payload // page_size) * page_size if page_size else payload
        out.append(TableSpace(name, "table", pages, payload))
    return tuple(out)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None

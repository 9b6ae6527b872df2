"""AsyncPostgresSaver's bytes on disk, read with plain SQL in either layout (memory_core.footprint.facts).

Every figure is `pg_column_size()`: the bytes a value takes as stored (compressed or TOASTed included).
A checkpoint row holds its JSON and metadata; the channel values it names live in `checkpoint_blobs`,
one row per (channel, version), shared by every checkpoint naming that version. A blob is counted once,
at the first root checkpoint (smallest id) naming it; one no root checkpoint names counts in the
thread's `other_bytes`, with sub-graph namespaces and writes whose checkpoint is gone. Each query groups
per thread into one JSON value, so the row cap counts threads, not checkpoints.
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from typing import Any

from memory_core.footprint.facts import (
    ChannelBytes,
    CheckpointBytes,
    StoreSpace,
    TableSpace,
    ThreadBytes,
    blob_key,
)
from memory_core.stores.postgres.connect import PgRead
from memory_core.stores.postgres.layout import PostgresLayout

_CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def store_label(layout: PostgresLayout) -> str:
    return f"postgresql {layout.schema}"


def _among(threads: Sequence[str] | None) -> tuple[str, tuple[Any, ...]]:
    return ("WHERE thread_id = ANY(%s)", (list(threads),)) if threads is not None else ("", ())


def thread_keys(
    read: PgRead, layout: PostgresLayout, threads: Sequence[str] | None = None
) -> dict[str, Hashable]:
    """Per thread, what changes whenever its bytes do: checkpoint count and greatest id (in any namespace;
    the saver only appends), blob count, and its writes' count and bytes (a task's grow under the head)."""
    keys: dict[str, dict[str, tuple[int, str]]] = {}
    for part, sql in (
        ("checkpoints", f"SELECT thread_id, count(*), max(checkpoint_id) FROM {layout.table('checkpoints')}"),
        ("blobs", f"SELECT thread_id, count(*), '' FROM {layout.table('checkpoint_blobs')}"),
        (
            "writes",
            "SELECT thread_id, count(*), sum(COALESCE(pg_column_size(blob), 0))::text "
            f"FROM {layout.table('checkpoint_writes')}",
        ),
    ):
        where, params = _among(threads)
        for thread, count, extra in _per_thread(read, f"{sql} {where} GROUP BY thread_id", params):
            keys.setdefault(str(thread), {})[part] = (int(count), str(extra))
    label = store_label(layout)
    return {thread: (label, tuple(sorted(parts.items()))) for thread, parts in keys.items()}


def _items(value: Any) -> list[list[Any]]:
    found: list[list[Any]] = json.loads(value) if isinstance(value, str) else value
    return found


def list_thread_bytes(
    read: PgRead, layout: PostgresLayout, threads: Sequence[str] | None
) -> list[ThreadBytes]:
    """These threads' bytes per checkpoint in this layout (every thread's when None), oldest first."""
    where, params = _among(threads)
    checkpoints = _per_thread(
        read,
        "SELECT thread_id, json_agg(json_build_array(checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
        "pg_column_size(checkpoint), pg_column_size(metadata), metadata ->> 'source', metadata ->> 'step', "
        "CASE WHEN checkpoint_ns = '' THEN (SELECT COALESCE(json_agg(json_build_array(v.key, v.value)), '[]') "
        "FROM jsonb_each_text(checkpoint -> 'channel_versions') AS v) END) "
        f"ORDER BY checkpoint_ns, checkpoint_id) FROM {layout.table('checkpoints')} {where} GROUP BY thread_id",
        params,
    )
    blobs = _grouped(
        read,
        "SELECT thread_id, json_agg(json_build_array(checkpoint_ns, channel, version, "
        f"COALESCE(pg_column_size(blob), 0))) FROM {layout.table('checkpoint_blobs')} {where} GROUP BY thread_id",
        params,
    )
    writes = _grouped(
        read,
        "SELECT thread_id, json_agg(json_build_array(checkpoint_ns, checkpoint_id, size)) FROM ("
        "SELECT thread_id, checkpoint_ns, checkpoint_id, sum(COALESCE(pg_column_size(blob), 0)) AS size "
        f"FROM {layout.table('checkpoint_writes')} {where} GROUP BY thread_id, checkpoint_ns, checkpoint_id) w "
        "GROUP BY thread_id",
        params,
    )
    label = store_label(layout)
    out: list[ThreadBytes] = []
    for thread, items in checkpoints:
        tid = str(thread)
        out.append(_thread(tid, _items(items), blobs.pop(tid, []), writes.pop(tid, []), label, layout.layout))
    # Rows of a thread with no checkpoint at all: its bytes all the same.
    for tid in blobs.keys() | writes.keys():
        rest = sum(int(r[3]) for r in blobs.get(tid, [])) + sum(int(r[2]) for r in writes.get(tid, []))
        out.append(ThreadBytes(tid, label, layout.layout, (), other_bytes=rest))
    return out


def _per_thread(read: PgRead, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """A fleet query's rows, one per thread: with no row cap, since every thread counts and a cap would
    drop threads from the fleet's bytes."""
    return read.rows(sql, params, capped=False)


def _grouped(read: PgRead, sql: str, params: tuple[Any, ...]) -> dict[str, list[list[Any]]]:
    return {str(thread): _items(items) for thread, items in _per_thread(read, sql, params)}


def _thread(
    thread: str,
    items: list[list[Any]],
    blob_rows: list[list[Any]],
    write_rows: list[list[Any]],
    label: str,
    layout: str,
) -> ThreadBytes:
    written = {(str(ns), str(cid)): int(size or 0) for ns, cid, size in write_rows}
    other = 0
    root_blobs: dict[str, int] = {}
    for ns, channel, version, size in blob_rows:
        if ns == "":
            root_blobs[blob_key(str(channel), str(version))] = int(size)
        else:
            other += int(size)
    named: dict[str, int] = {}  # every blob a root checkpoint names, and its size
    checkpoints: list[CheckpointBytes] = []
    for ns, cid, parent, size, meta, source, step, versions in items:
        if ns != "":
            other += int(size) + int(meta) + written.pop((str(ns), str(cid)), 0)
            continue
        refs = frozenset(
            key
            for channel, version in versions or ()
            if (key := blob_key(str(channel), str(version))) in root_blobs
        )
        first_here = [key for key in refs if key not in named]
        for key in first_here:
            named[key] = root_blobs[key]
        checkpoints.append(
            CheckpointBytes(
                checkpoint_id=str(cid),
                parent_id=str(parent) if parent is not None else None,
                checkpoint=int(size),
                metadata=int(meta),
                writes=written.pop(("", str(cid)), 0),
                blobs=sum(root_blobs[key] for key in first_here),
                source=str(source) if source is not None else None,
                blob_refs=refs,
                step=int(step) if isinstance(step, str) and step.lstrip("-").isdigit() else None,
            )
        )
    other += sum(size for key, size in root_blobs.items() if key not in named) + sum(written.values())
    return ThreadBytes(thread, label, layout, tuple(checkpoints), blob_sizes=named, other_bytes=other)


def channel_bytes(
    read: PgRead, layout: PostgresLayout, thread_id: str, checkpoint_id: str | None
) -> tuple[str | None, list[ChannelBytes]]:
    """(the checkpoint measured, per channel bytes) of one root checkpoint, the head by default."""
    if checkpoint_id is None:
        row = read.one(
            f"SELECT max(checkpoint_id) FROM {layout.table('checkpoints')} "
            "WHERE thread_id = %s AND checkpoint_ns = ''",
            (thread_id,),
        )
        checkpoint_id = str(row[0]) if row and row[0] is not None else None
        if checkpoint_id is None:
            return None, []
    here = "c.thread_id = %s AND c.checkpoint_ns = '' AND c.checkpoint_id = %s"
    if (
        read.one(f"SELECT 1 FROM {layout.table('checkpoints')} c WHERE {here}", (thread_id, checkpoint_id))
        is None
    ):
        return None, []
    inline = {
        str(k): int(n or 0)
        for k, n in read.rows(
            "SELECT v.key, pg_column_size(v.value) FROM "
            f"{layout.table('checkpoints')} c CROSS JOIN LATERAL jsonb_each(c.checkpoint -> 'channel_values') v "
            f"WHERE {here}",
            (thread_id, checkpoint_id),
        )
    }
    blobs = {
        str(k): int(n or 0)
        for k, n in read.rows(
            "SELECT v.channel, sum(COALESCE(pg_column_size(b.blob), 0)) FROM "
            f"{layout.table('checkpoints')} c "
            "CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version) "
            f"JOIN {layout.table('checkpoint_blobs')} b ON b.thread_id = c.thread_id "
            "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.channel AND b.version = v.version "
            f"WHERE {here} GROUP BY v.channel",
            (thread_id, checkpoint_id),
        )
    }
    writes = {
        str(k): int(n or 0)
        for k, n in read.rows(
            f"SELECT channel, sum(COALESCE(pg_column_size(blob), 0)) FROM {layout.table('checkpoint_writes')} "
            "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s GROUP BY channel",
            (thread_id, checkpoint_id),
        )
    }
    channels = sorted(inline.keys() | blobs.keys() | writes.keys())
    return checkpoint_id, [
        ChannelBytes(c, inline.get(c, 0), blobs.get(c, 0), writes.get(c, 0)) for c in channels
    ]


def _mycel_tables(layout: PostgresLayout) -> tuple[str, tuple[Any, ...]]:
    """The condition on pg_class `c` (joined to its namespace `n`) that picks the layout's Mycel tables."""
    # Dev's schema `agent` is Mycel dev's own (side tables too); main's search_path schema may hold
    # anything else, so only the saver's tables are Mycel's there.
    if layout.layout == "dev":
        return "n.nspname = %s AND c.relkind IN ('r', 'p')", (layout.schema,)
    return (
        "n.nspname = %s AND c.relkind IN ('r', 'p') AND c.relname = ANY(%s)",
        (layout.schema, list(_CHECKPOINT_TABLES)),
    )


def schema_bytes(read: PgRead, layout: PostgresLayout) -> int:
    """The bytes of the layout's Mycel tables, TOAST and indexes included: one catalog query, cheap enough
    for every scrape (store_space's total, without its table by table)."""
    where, params = _mycel_tables(layout)
    found = read.one(
        "SELECT COALESCE(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c "
        f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {where}",
        params,
    )
    return int(found[0]) if found else 0


def store_space(read: PgRead, layout: PostgresLayout, location: str) -> StoreSpace:
    """One schema's Mycel tables: each table's pg_table_size (TOAST included) and each index's size."""
    where, params = _mycel_tables(layout)
    tables = read.rows(
        "SELECT c.relname, pg_table_size(c.oid), pg_total_relation_size(c.oid) FROM pg_class c "
        f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {where} ORDER BY c.relname",
        params,
    )
    indexes = read.rows(
        "SELECT i.relname, pg_total_relation_size(i.oid) FROM pg_index x "
        "JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
        f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {where} ORDER BY i.relname",
        params,
    )
    spaces = [TableSpace(str(name), "table", int(size or 0), None) for name, size, _ in tables]
    spaces += [TableSpace(str(name), "index", int(size or 0), None) for name, size in indexes]
    return StoreSpace(
        store=store_label(layout),
        engine="postgresql",
        location=location,
        file_bytes=sum(int(total or 0) for *_, total in tables),
        wal_bytes=None,
        free_bytes=None,
        tables=tuple(spaces),
        measured_by="pg_total_relation_size",
    )

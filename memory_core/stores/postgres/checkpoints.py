"""AsyncPostgresSaver's checkpoints read with plain SQL (never the saver's get_tuple/list, whose msgpack
hook imports classes): one thread's skeleton, payloads with their channel blobs, heads and metadata.

Every query names its schema (PostgresLayout.table) and Mycel's namespace ''. A checkpoint's channels
are the `checkpoint_blobs` rows its `channel_versions` point at (reference mycel-dev.md §2.3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memory_core.stores.backend import Payload
from memory_core.stores.checkpoints import CheckpointMeta, meta_from_row
from memory_core.stores.decode import (
    POSTGRES_CHECKPOINT,
    UnreadableBlob,
    decode_metadata,
    pack_postgres_checkpoint,
)
from memory_core.stores.postgres.connect import PgRead
from memory_core.stores.postgres.layout import PostgresLayout
from memory_core.stores.redact import redact
from memory_core.stores.series import WriteRow


def _blob_join(layout: PostgresLayout) -> str:
    # The blob rows of checkpoint `c`: one per channel version it names.
    return (
        f"CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version) "
        f"JOIN {layout.table('checkpoint_blobs')} b ON b.thread_id = c.thread_id "
        "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.channel AND b.version = v.version"
    )


def skeleton(read: PgRead, layout: PostgresLayout, thread_id: str) -> list[CheckpointMeta]:
    """Every checkpoint of the thread, oldest first; size is the JSON text plus its blobs' bytes."""
    rows = read.rows(
        "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, "
        "octet_length(c.checkpoint::text) + COALESCE((SELECT sum(octet_length(b.blob)) "
        "FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS v(channel, version) "
        f"JOIN {layout.table('checkpoint_blobs')} b ON b.thread_id = c.thread_id "
        "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.channel AND b.version = v.version), 0), NULL "
        f"FROM {layout.table('checkpoints')} c WHERE c.thread_id = %s AND c.checkpoint_ns = '' "
        "ORDER BY c.checkpoint_id",
        (thread_id,),
    )
    return [meta_from_row(r) for r in rows]


def meta(read: PgRead, layout: PostgresLayout, thread_id: str, checkpoint_id: str) -> CheckpointMeta | None:
    row = read.one(
        "SELECT checkpoint_id, parent_checkpoint_id, type, octet_length(checkpoint::text), metadata::text "
        f"FROM {layout.table('checkpoints')} WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s",
        (thread_id, checkpoint_id),
    )
    return meta_from_row(row) if row else None


def head_id(read: PgRead, layout: PostgresLayout, thread_id: str) -> str | None:
    """The greatest id, as the saver's own "latest" query picks it."""
    row = read.one(
        f"SELECT max(checkpoint_id) FROM {layout.table('checkpoints')} WHERE thread_id = %s AND checkpoint_ns = ''",
        (thread_id,),
    )
    return str(row[0]) if row and row[0] is not None else None


def has_thread(read: PgRead, layout: PostgresLayout, thread_id: str) -> bool:
    return (
        read.one(
            f"SELECT 1 FROM {layout.table('checkpoints')} WHERE thread_id = %s AND checkpoint_ns = '' LIMIT 1",
            (thread_id,),
        )
        is not None
    )


def payloads(
    read: PgRead, layout: PostgresLayout, pairs: Sequence[tuple[str, str]]
) -> list[tuple[str, str, Payload]]:
    """(thread id, checkpoint id, payload) for many pairs: two queries, whatever their number."""
    if not pairs:
        return []
    threads, ids = [p[0] for p in pairs], [p[1] for p in pairs]
    wanted = (
        f"FROM {layout.table('checkpoints')} c JOIN unnest(%s::text[], %s::text[]) AS w(thread_id, checkpoint_id) "
        "ON c.thread_id = w.thread_id AND c.checkpoint_id = w.checkpoint_id AND c.checkpoint_ns = '' "
    )
    heads = read.rows(f"SELECT c.thread_id, c.checkpoint_id, c.checkpoint::text {wanted}", (threads, ids))
    blobs: dict[tuple[str, str], list[tuple[str, str | None, bytes | None]]] = {}
    for thread_id, checkpoint_id, channel, kind, blob in read.rows(
        f"SELECT c.thread_id, c.checkpoint_id, b.channel, b.type, b.blob {wanted}{_blob_join(layout)} "
        "ORDER BY b.channel",
        (threads, ids),
    ):
        blobs.setdefault((thread_id, checkpoint_id), []).append(
            (channel, kind, bytes(blob) if blob else None)
        )
    out: list[tuple[str, str, Payload]] = []
    for thread_id, checkpoint_id, text in heads:
        packed = pack_postgres_checkpoint(str(text).encode(), blobs.get((thread_id, checkpoint_id), []))
        out.append((str(thread_id), str(checkpoint_id), (POSTGRES_CHECKPOINT, packed)))
    return out


def metadata(
    read: PgRead, layout: PostgresLayout, thread_id: str, only: Sequence[str]
) -> dict[str, tuple[Mapping[str, Any], str | None]]:
    """Redacted metadata by checkpoint id (main's carries api_key)."""
    out: dict[str, tuple[Mapping[str, Any], str | None]] = {}
    for checkpoint_id, raw in read.rows(
        f"SELECT checkpoint_id, metadata::text FROM {layout.table('checkpoints')} "
        "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = ANY(%s)",
        (thread_id, list(only)),
    ):
        try:
            out[str(checkpoint_id)] = (redact(decode_metadata(str(raw).encode())), None)
        except UnreadableBlob as exc:
            out[str(checkpoint_id)] = ({}, str(exc))
    return out


def thread_keys(
    read: PgRead, layout: PostgresLayout, thread_id: str | None
) -> list[tuple[str, int, str, int]]:
    """(thread id, checkpoint count, head id, stored bytes of checkpoints, metadata and blobs) per thread.

    Bytes are pg_column_size, as storage_facts.py counts them: with `writes_bytes`, a thread's total is
    its ThreadBytes.total (one accounting)."""
    where, params = ("AND thread_id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(
        "SELECT k.thread_id, k.n, k.head, k.size + COALESCE(b.size, 0) FROM ("
        "SELECT thread_id, count(*) AS n, max(checkpoint_id) AS head, "
        "sum(pg_column_size(checkpoint) + pg_column_size(metadata)) AS size "
        f"FROM {layout.table('checkpoints')} WHERE checkpoint_ns = '' {where} GROUP BY thread_id) k "
        "LEFT JOIN (SELECT thread_id, sum(COALESCE(pg_column_size(blob), 0)) AS size "
        f"FROM {layout.table('checkpoint_blobs')} WHERE checkpoint_ns = '' {where} GROUP BY thread_id) b "
        "ON b.thread_id = k.thread_id",
        params * 2,
    )
    return [(str(r[0]), int(r[1]), str(r[2]), int(r[3] or 0)) for r in rows]


def head_models(read: PgRead, layout: PostgresLayout, pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The model named in each head's metadata (main's graph writes it; dev's `{source, step}` does not)."""
    rows = read.rows(
        f"SELECT c.thread_id, c.metadata ->> 'model' FROM {layout.table('checkpoints')} c "
        "JOIN unnest(%s::text[], %s::text[]) AS w(thread_id, checkpoint_id) "
        "ON c.thread_id = w.thread_id AND c.checkpoint_id = w.checkpoint_id AND c.checkpoint_ns = ''",
        ([p[0] for p in pairs], [p[1] for p in pairs]),
    )
    return {str(t): str(m) for t, m in rows if m is not None}


def writes_bytes(read: PgRead, layout: PostgresLayout, thread_id: str | None) -> dict[str, int]:
    """Per thread, the bytes outside its root checkpoints' key, summed afresh: every write (a task's grow
    under an unchanged head) and the checkpoints and blobs of other namespaces (sub-graphs)."""
    where, params = ("AND thread_id = %s", (thread_id,)) if thread_id is not None else ("", ())
    rows = read.rows(
        "SELECT thread_id, sum(size) FROM ("
        f"SELECT thread_id, COALESCE(pg_column_size(blob), 0) AS size FROM {layout.table('checkpoint_writes')} "
        f"WHERE true {where} UNION ALL "
        "SELECT thread_id, pg_column_size(checkpoint) + pg_column_size(metadata) "
        f"FROM {layout.table('checkpoints')} WHERE checkpoint_ns != '' {where} UNION ALL "
        f"SELECT thread_id, COALESCE(pg_column_size(blob), 0) FROM {layout.table('checkpoint_blobs')} "
        f"WHERE checkpoint_ns != '' {where}) o GROUP BY thread_id",
        params * 3,
    )
    return {str(t): int(n or 0) for t, n in rows}


def fingerprint(read: PgRead, layout: PostgresLayout) -> tuple[object, ...]:
    """What changes with any saver write: checkpoint and write counts and the newest id."""
    row = read.one(
        f"SELECT (SELECT count(*) FROM {layout.table('checkpoints')}), "
        f"(SELECT max(checkpoint_id) FROM {layout.table('checkpoints')}), "
        f"(SELECT count(*) FROM {layout.table('checkpoint_writes')})"
    )
    return tuple(row or ())


def message_writes(
    read: PgRead, layout: PostgresLayout, thread_id: str, only: Sequence[str] | None = None
) -> list[WriteRow]:
    """The `messages` channel's write deltas of every step, or of the steps stored under `only`'s
    checkpoints (main's graph writes them; the series rebuilds states from them instead of decoding every
    checkpoint's whole list, the search index reads a thread's new steps)."""
    among, params = ("AND checkpoint_id = ANY(%s)", (list(only),)) if only is not None else ("", ())
    rows = read.rows(
        "SELECT checkpoint_id, task_id, task_path, idx, type, blob "
        f"FROM {layout.table('checkpoint_writes')} "
        f"WHERE thread_id = %s AND checkpoint_ns = '' AND channel = 'messages' {among}",
        (thread_id, *params),
    )
    return [WriteRow(str(r[0]), str(r[1]), str(r[2] or ""), int(r[3]), r[4], bytes(r[5])) for r in rows]


def channel_blobs(
    read: PgRead, layout: PostgresLayout, pairs: Sequence[tuple[str, str]], channel: str
) -> dict[str, tuple[str | None, bytes | None]]:
    """One channel's (type, blob) at each (thread, checkpoint): a small read beside the head's messages."""
    if not pairs:
        return {}
    rows = read.rows(
        f"SELECT c.thread_id, b.type, b.blob FROM {layout.table('checkpoints')} c "
        "JOIN unnest(%s::text[], %s::text[]) AS w(thread_id, checkpoint_id) "
        "ON c.thread_id = w.thread_id AND c.checkpoint_id = w.checkpoint_id AND c.checkpoint_ns = '' "
        f"JOIN {layout.table('checkpoint_blobs')} b ON b.thread_id = c.thread_id "
        "AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = %s "
        "AND b.version = c.checkpoint -> 'channel_versions' ->> %s",
        ([p[0] for p in pairs], [p[1] for p in pairs], channel, channel),
    )
    return {str(t): (kind, bytes(blob) if blob else None) for t, kind, blob in rows}

"""The thread list: every thread any store knows, aggregated in SQL (reference §9, "thread discovery").

Each thread's checkpoint count and head id come from the primary-key index; what its checkpoints hold under
that key (bytes, the head's message count and model) is derived once and kept (derived.py). Only a moved
head is touched, and only to count its messages with a decoder that skips every message body; bytes come
from `length()`, which SQLite answers from each record's header. Aggregates over every thread come back as
one JSON text (`rows_as_json`), so reads running side by side never hand the GIL over row by row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import nullcontext
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from memory_core.records import ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.decode import UnreadableBlob, count_checkpoint_messages, decode_metadata
from memory_core.stores.rows import masked_or_none
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.thread_list.derived import DerivedFacts, HeadFacts
from memory_core.stores.times import from_epoch


class ThreadInfo(NamedTuple):
    """A `threads` row with its member's name, as Mycel's thread_naming computes display names."""

    thread_id: str
    member_id: str | None
    name: str | None
    model: str | None
    sandbox_type: str | None
    cwd: str | None
    created_at: datetime | None


def _filter(column: str, thread_id: str | None, *, first: bool = True) -> tuple[str, tuple[Any, ...]]:
    if thread_id is None:
        return "", ()
    return f"{'WHERE' if first else 'AND'} {column} = ?", (thread_id,)


KeyedBytes = Mapping[str, tuple[int, str, int]]  # thread id -> (checkpoints, head id, bytes)
_NO_KEY = (0, "", 0)
_CHECKPOINT_SIZE = "SUM(COALESCE(length(checkpoint), 0) + COALESCE(length(metadata), 0))"


def checkpoint_heads(
    db: ReadOnlyDB,
    thread_id: str | None = None,
    *,
    known: DerivedFacts | None = None,
    summed: Callable[[], KeyedBytes] | None = None,
) -> dict[str, HeadFacts]:
    """Per thread: checkpoint count and head id, the checkpoints' bytes, and the head's message count and model.

    The keys come from one pass over the primary-key index, which holds thread, id and rowid, so it never
    reads the table. Facts `known` under the same key are reused (checkpoints are only ever appended, so the
    same count and head mean the same rows); only threads that moved have their head decoded and their
    bytes summed. `summed` may give bytes read beside this call (`checkpoint_bytes`): each is used only where
    its key matches this snapshot's.
    """
    if not db.require_table("checkpoints"):
        return {}
    # SQLite gives the bare `rowid` of the MAX() row, so moved heads are then fetched by rowid.
    keys = _per_thread(db, thread_id, "rowid")
    found, moved = _known_and_moved(keys, known)
    if moved:
        # Lists built at the same time in one process wait for one derivation, then reuse what it kept.
        with known.deriving if known is not None else nullcontext():
            if known is not None:
                again, moved = _known_and_moved(moved, known)
                found.update(again)
            if moved:
                new = _derive(db, moved, len(keys), summed, thread_id)
                if known is not None:
                    known.remember(new)
                found.update(new)
    return found


Key = Sequence[Any]  # (thread id, checkpoint count, head id, head rowid)


def _known_and_moved(
    keys: Iterable[Key], known: DerivedFacts | None
) -> tuple[dict[str, HeadFacts], list[Key]]:
    found: dict[str, HeadFacts] = {}
    moved: list[Key] = []
    for key in keys:
        facts = known.lookup(key[0], key[1], key[2]) if known is not None else None
        if facts is None:
            moved.append(key)
        else:
            found[key[0]] = facts
    return found, moved


def _derive(
    db: ReadOnlyDB,
    moved: list[Key],
    threads: int,
    summed: Callable[[], KeyedBytes] | None,
    thread_id: str | None,
) -> dict[str, HeadFacts]:
    heads = _head_facts(db, [rowid for *_, rowid in moved])
    keyed = summed() if summed is not None else {}
    stale = [thread for thread, count, head, _ in moved if keyed.get(thread, _NO_KEY)[:2] != (count, head)]
    # When most threads are stale, one pass over every thread costs less than a lookup each.
    fresh = _bytes_of(db, stale if 2 * len(stale) < threads else None, thread_id) if stale else {}
    facts: dict[str, HeadFacts] = {}
    for thread, count, head, _ in moved:
        messages, model = heads.get(head, (None, None))
        size = fresh[thread] if thread in fresh else keyed[thread][2]
        # An empty head needs no decoding to know Mycel's estimate of it.
        facts[thread] = HeadFacts(count, head, size, messages, model, 0 if messages == 0 else None)
    return facts


def checkpoint_bytes(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, tuple[int, str, int]]:
    """Per thread, in one pass: checkpoint count and head id (the key) with the bytes of checkpoints and
    metadata. length() is answered from each record's header, never the blob, but it visits every row."""
    if not db.require_table("checkpoints"):
        return {}
    rows = _per_thread(db, thread_id, _CHECKPOINT_SIZE)
    return {thread: (count, head, total or 0) for thread, count, head, total in rows}


def _per_thread(db: ReadOnlyDB, thread_id: str | None, extra: str) -> list[list[Any]]:
    """Per thread: id, checkpoint count and head id (the key facts are kept under), with one more value.

    The key alone is answered by the primary-key index; `extra` decides whether rows are visited too.
    """
    where, params = _filter("thread_id", thread_id, first=False)
    return db.rows_as_json(
        "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS count, CAST(MAX(checkpoint_id) AS TEXT) AS head, "
        f"{extra} AS extra FROM checkpoints WHERE checkpoint_ns = '' {where} GROUP BY thread_id",
        params,
        columns=("thread", "count", "head", "extra"),
    )


def _bytes_of(db: ReadOnlyDB, threads: list[str] | None, thread_id: str | None) -> dict[str, int]:
    """Bytes of checkpoints and metadata per thread: of `threads`, or of every thread when None."""
    if threads is None:
        where, params = _filter("thread_id", thread_id, first=False)
    else:
        where, params = "AND thread_id IN (SELECT value FROM json_each(?))", (json.dumps(threads),)
    rows = db.rows_as_json(
        f"SELECT CAST(thread_id AS TEXT) AS thread, {_CHECKPOINT_SIZE} AS total "
        f"FROM checkpoints WHERE checkpoint_ns = '' {where} GROUP BY thread_id",
        params,
        columns=("thread", "total"),
    )
    return {thread: total or 0 for thread, total in rows}


def _head_facts(db: ReadOnlyDB, rowids: list[int]) -> dict[str, tuple[int | None, str | None]]:
    """Head checkpoint id -> (message count, model), decoding no message body."""
    heads: dict[str, tuple[int | None, str | None]] = {}
    # `model` is read by SQLite's JSON functions; only metadata that is not JSON (older savers wrote
    # msgpack) comes back as a blob for Python to decode.
    for head, type_, blob, model, other in db.rows(
        "SELECT CAST(checkpoint_id AS TEXT), type, checkpoint, "
        "CASE WHEN is_json AND json_type(meta, '$.model') = 'text' THEN json_extract(meta, '$.model') END, "
        "CASE WHEN NOT is_json THEN metadata END FROM (SELECT checkpoint_id, type, checkpoint, metadata, "
        "CAST(metadata AS TEXT) AS meta, json_valid(CAST(metadata AS TEXT)) AS is_json FROM checkpoints "
        "WHERE rowid IN (SELECT value FROM json_each(?)))",
        (json.dumps(rowids),),
    ):
        heads[head] = (count_checkpoint_messages(type_, blob), _model_of(other) if other else model)
    return heads


def _model_of(metadata: Any) -> str | None:
    try:
        model = decode_metadata(metadata).get("model")
    except UnreadableBlob:
        return None
    return model if isinstance(model, str) else None


def writes_bytes(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, int]:
    """Per thread, the bytes outside its root checkpoints, summed afresh: every write (a task's writes are
    recorded under the current head, so they grow without the checkpoint key moving) and the checkpoints
    of other namespaces (sub-graphs), which move no root key either. With the keyed bytes, this is the
    thread's `ThreadBytes.total` (stores/storage_facts.py): one accounting."""
    found: dict[str, int] = {}
    if db.has_table("writes"):
        where, params = _filter("thread_id", thread_id)
        for thread, total in db.rows_as_json(
            "SELECT CAST(thread_id AS TEXT) AS thread, SUM(COALESCE(length(value), 0)) AS total "
            f"FROM writes {where} GROUP BY thread_id",
            params,
            columns=("thread", "total"),
        ):
            found[thread] = total or 0
    if db.has_table("checkpoints"):
        where, params = _filter("thread_id", thread_id, first=False)
        for thread, total in db.rows_as_json(
            f"SELECT CAST(thread_id AS TEXT) AS thread, {_CHECKPOINT_SIZE} AS total "
            f"FROM checkpoints WHERE checkpoint_ns != '' {where} GROUP BY thread_id",
            params,
            columns=("thread", "total"),
        ):
            found[thread] = found.get(thread, 0) + (total or 0)
    return found


def thread_infos(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, ThreadInfo]:
    """The `threads` table (Mycel's or leonai's layout) with display names."""
    if not db.require_table("threads"):
        return {}
    cols = set(db.columns("threads"))
    has_members = "name" in db.columns("members")
    has_entities = {"thread_id", "name"} <= set(db.columns("entities"))

    def text(column: str, present: bool) -> str:
        return f"CAST({column} AS TEXT)" if present else "NULL"

    outputs = {
        **{c: text(f"t.{c}", c in cols) for c in ("id", "member_id", "model", "sandbox_type", "cwd")},
        # Epoch seconds as whole microseconds: SQLite's JSON would print a REAL with 15 digits only.
        "created_us": "CASE WHEN typeof(t.created_at) IN ('integer', 'real') "
        "THEN CAST(round(t.created_at * 1e6) AS INTEGER) END"
        if "created_at" in cols
        else "NULL",
        "is_main": "t.is_main" if {"is_main", "branch_index"} <= cols else "NULL",
        "branch_index": "t.branch_index" if {"is_main", "branch_index"} <= cols else "NULL",
        "member_name": text("m.name", has_members),
        # leonai had one entity per thread, named "{member}-{seq} ({sandbox})"; Mycel has one per agent.
        "entity_name": text("e.name", has_entities),
    }
    join = "LEFT JOIN members m ON m.id = t.member_id" if has_members else ""
    entity_join = "LEFT JOIN entities e ON e.thread_id = t.id" if has_entities else ""
    where, params = _filter("t.id", thread_id)
    rows = db.rows_as_json(
        f"SELECT {', '.join(f'{sql} AS {name}' for name, sql in outputs.items())} "
        f"FROM threads t {join} {entity_join} {where}",
        params,
        columns=tuple(outputs),
    )
    out: dict[str, ThreadInfo] = {}
    for tid, member, model, sandbox, cwd, created_us, is_main, branch_index, mname, ename in rows:
        out[tid] = ThreadInfo(
            thread_id=tid,
            member_id=member,
            name=masked_or_none(display_name(mname, is_main, branch_index) or ename),
            model=model,
            sandbox_type=sandbox,
            cwd=cwd,
            created_at=from_epoch(created_us / 1e6) if created_us is not None else None,
        )
    return out


def display_name(member_name: str | None, is_main: Any, branch_index: Any) -> str | None:
    """Mycel's computed names: the member's name for its main thread, "{name} · 分身{n}" for a branch."""
    if not member_name or is_main is None:
        return None
    if is_main:
        return member_name
    return f"{member_name} · 分身{branch_index}"


_NEVER = float("-inf")
_NO_SUMMARIES = (0, False)
_NO_CHECKPOINTS = HeadFacts(0, "", 0, None, None)  # a thread known only to other stores: no checkpoint yet
_NO_INFO = ThreadInfo("", None, None, None, None, None, None)


# A pure function of the id (no store in its key), so not a Memo: see memory_core/memo.py.
@lru_cache(maxsize=200_000)
def _head_time(checkpoint_id: str) -> tuple[datetime | None, float]:
    found = time_of_checkpoint_id(checkpoint_id) if checkpoint_id else None
    return found, found.timestamp() if found else _NEVER


def combine(
    heads: Mapping[str, HeadFacts],
    infos: Mapping[str, ThreadInfo],
    summaries: Mapping[str, tuple[int, bool]],
    queued: Mapping[str, int],
    sandboxes: Mapping[str, str | None],
    written: Mapping[str, int],
    layouts: Mapping[str, str] | None = None,
) -> list[ThreadRow]:
    """One row per thread known to any store, newest activity first; zero counts where nothing is stored."""
    keyed: list[tuple[float, str, ThreadRow]] = []
    for thread_id in heads.keys() | infos.keys() | summaries.keys() | queued.keys():
        info = infos.get(thread_id, _NO_INFO)
        head = heads.get(thread_id, _NO_CHECKPOINTS)
        updated, stamp = _head_time(head.head_checkpoint_id)
        if updated is None and info.created_at is not None:
            updated = info.created_at
            stamp = updated.timestamp()
        summary_count, active = summaries.get(thread_id, _NO_SUMMARIES)
        row = ThreadRow(
            thread_id=thread_id,
            messages=head.messages or 0,
            checkpoints=head.checkpoints,
            head_checkpoint_id=head.head_checkpoint_id or None,
            updated_at=updated,
            name=info.name,
            model=head.model or info.model,
            configured_model=info.model,
            member_id=info.member_id,
            sandbox_type=info.sandbox_type,
            cwd=info.cwd,
            estimated_tokens=head.estimated_tokens,
            bytes_on_disk=head.checkpoint_bytes + written.get(thread_id, 0),
            summaries=summary_count,
            active_summary=active,
            queued=queued.get(thread_id, 0),
            sandbox_state=sandboxes.get(thread_id),
            layout=(layouts or {}).get(thread_id, "main"),
            breaker_failures=head.breaker_failures,
            breaker_open=bool(head.breaker_open),
        )
        keyed.append((stamp, thread_id, row))
    keyed.sort(reverse=True)
    return [row for _stamp, _id, row in keyed]

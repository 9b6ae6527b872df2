"""The thread list: every thread any store knows, aggregated in SQL (reference §9, "thread discovery").

Only the head checkpoint of each thread is touched, and only to count its messages with a decoder that
skips every message body; bytes come from `length()`, which SQLite answers from the record header.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, MutableMapping
from datetime import datetime
from functools import lru_cache
from typing import Any, NamedTuple

from memory_core.records import ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.decode import UnreadableBlob, count_checkpoint_messages, decode_metadata
from memory_core.stores.sqlite import ReadOnlyDB
from memory_core.stores.times import from_epoch


class CheckpointAggregate(NamedTuple):
    checkpoints: int
    head_checkpoint_id: str
    bytes: int
    messages: int | None = None
    model: str | None = None


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


def writes_bytes(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, int]:
    """Per thread, the bytes of its pending/intermediate writes."""
    if not db.has_table("writes"):
        return {}
    where, params = _filter("thread_id", thread_id)
    rows = db.rows(
        f"SELECT thread_id, SUM(COALESCE(length(value), 0)) FROM writes {where} GROUP BY thread_id", params
    )
    return {str(r[0]): int(r[1] or 0) for r in rows}


HeadInfo = tuple[int | None, str | None]  # (message count, model) of a head checkpoint


def checkpoint_aggregates(
    db: ReadOnlyDB, thread_id: str | None = None, *, heads: MutableMapping[str, HeadInfo] | None = None
) -> dict[str, CheckpointAggregate]:
    """Per thread: checkpoint count, head id, bytes of checkpoints + metadata, head message count and model.

    `heads` caches (count, model) by head checkpoint id across calls: a checkpoint never changes, so only
    heads not seen before are fetched and counted.
    """
    if not db.require_table("checkpoints"):
        return {}
    heads = {} if heads is None else heads
    where, params = _filter("thread_id", thread_id, first=False)
    # One pass over the primary-key index; SQLite gives the bare `rowid` of the MAX() row, so new heads
    # are then fetched by rowid. length() reads the record header only, never the blob.
    rows = db.rows(
        "SELECT thread_id, COUNT(*), MAX(checkpoint_id), rowid, "
        "SUM(COALESCE(length(checkpoint), 0) + COALESCE(length(metadata), 0)) "
        f"FROM checkpoints WHERE checkpoint_ns = '' {where} GROUP BY thread_id",
        params,
    )
    unseen = [r[3] for r in rows if str(r[2]) not in heads]
    if unseen:
        for head, type_, blob, metadata in db.rows(
            "SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints "
            "WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(unseen),),
        ):
            heads[str(head)] = (count_checkpoint_messages(type_, blob), _model_of(metadata))
    out: dict[str, CheckpointAggregate] = {}
    for thread, count, head, _rowid, size in rows:
        messages, model = heads.get(str(head), (None, None))
        out[str(thread)] = CheckpointAggregate(
            checkpoints=int(count),
            head_checkpoint_id=str(head),
            bytes=int(size or 0),
            messages=messages,
            model=model,
        )
    return out


def _model_of(metadata: Any) -> str | None:
    try:
        model = decode_metadata(metadata).get("model")
    except UnreadableBlob:
        return None
    return model if isinstance(model, str) else None


def thread_infos(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, ThreadInfo]:
    """The `threads` table (Mycel's or leonai's layout) with display names."""
    if not db.require_table("threads"):
        return {}
    cols = db.columns("threads")
    has_members = "name" in db.columns("members")
    branch = "t.is_main, t.branch_index" if {"is_main", "branch_index"} <= set(cols) else "NULL, NULL"
    member_name = "m.name" if has_members else "NULL"
    join = "LEFT JOIN members m ON m.id = t.member_id" if has_members else ""
    entity_name, entity_join = "NULL", ""
    if {"thread_id", "name"} <= set(db.columns("entities")):
        # leonai had one entity per thread, named "{member}-{seq} ({sandbox})"; Mycel has one per agent.
        entity_name, entity_join = "e.name", "LEFT JOIN entities e ON e.thread_id = t.id"
    select = ", ".join(
        f"t.{c}" if c in cols else "NULL"
        for c in ("id", "member_id", "model", "sandbox_type", "cwd", "created_at")
    )
    where, params = _filter("t.id", thread_id)
    rows = db.rows(
        f"SELECT {select}, {branch}, {member_name}, {entity_name} FROM threads t {join} {entity_join} {where}",
        params,
    )
    out: dict[str, ThreadInfo] = {}
    for tid, member, model, sandbox, cwd, created, is_main, branch_index, mname, ename in rows:
        out[str(tid)] = ThreadInfo(
            thread_id=str(tid),
            member_id=member,
            name=display_name(mname, is_main, branch_index) or ename,
            model=model,
            sandbox_type=sandbox,
            cwd=cwd,
            created_at=from_epoch(created),
        )
    return out


def display_name(member_name: str | None, is_main: Any, branch_index: Any) -> str | None:
    """Mycel's computed names: the member's name for its main thread, "{name} · 分身{n}" for a branch."""
    if not member_name or is_main is None:
        return None
    if is_main:
        return member_name
    return f"{member_name} · 分身{branch_index}"


@lru_cache(maxsize=200_000)
def _head_time(checkpoint_id: str) -> tuple[datetime | None, float]:
    found = time_of_checkpoint_id(checkpoint_id)
    return found, found.timestamp() if found else float("-inf")


def combine(
    aggregates: Mapping[str, CheckpointAggregate],
    infos: Mapping[str, ThreadInfo],
    summaries: Mapping[str, tuple[int, bool]],
    queued: Mapping[str, int],
    sandboxes: Mapping[str, str | None],
    *,
    written: Mapping[str, int] | None = None,
) -> list[ThreadRow]:
    """One row per thread known to any store, newest activity first; zero counts where nothing is stored."""
    ids = set(aggregates) | set(infos) | set(summaries) | set(queued)
    written = written or {}
    keyed: list[tuple[float, str, ThreadRow]] = []
    for thread_id in ids:
        agg = aggregates.get(thread_id)
        info = infos.get(thread_id)
        summary_count, active = summaries.get(thread_id, (0, False))
        updated, stamp = _head_time(agg.head_checkpoint_id) if agg else (None, float("-inf"))
        if updated is None and info is not None and info.created_at is not None:
            updated, stamp = info.created_at, info.created_at.timestamp()
        row = ThreadRow(
            thread_id=thread_id,
            messages=(agg.messages or 0) if agg else 0,
            checkpoints=agg.checkpoints if agg else 0,
            head_checkpoint_id=agg.head_checkpoint_id if agg else None,
            updated_at=updated,
            name=info.name if info else None,
            model=(agg.model if agg and agg.model else None) or (info.model if info else None),
            configured_model=info.model if info else None,
            member_id=info.member_id if info else None,
            sandbox_type=info.sandbox_type if info else None,
            cwd=info.cwd if info else None,
            bytes_on_disk=(agg.bytes if agg else 0) + written.get(thread_id, 0),
            summaries=summary_count,
            active_summary=active,
            queued=queued.get(thread_id, 0),
            sandbox_state=sandboxes.get(thread_id),
        )
        keyed.append((stamp, thread_id, row))
    keyed.sort(reverse=True)
    rows = [row for _stamp, _id, row in keyed]
    return rows

"""Rollback and undo on PostgreSQL: one new head checkpoint, written through LangGraph's AsyncPostgresSaver.aput.

The plan, report, audit and summary rules are the SQLite path's (rollback.py, rollback_actions.py); only
the write differs. Under the thread's advisory lock (postgres/write_txn.py) we check the head the
preview saw, read the target's channels ourselves (never the saver's aget_tuple: its msgpack hook imports
whatever a blob names), and hand them to `aput` on that same connection, so the check and the write are
one transaction. Recipes (reference mycel-dev.md §7):

- dev (schema `agent`, Mycel's QueryLoop): all six channels get new versions; the values are the
  target's, except `memory_compaction_state` (the breaker: the head's is kept, so a rollback neither
  re-opens nor silently closes it) and `pending_permission_requests` (the head's: the target's would
  resurrect stale prompts). Parent = the head; metadata {"source": "update", "step": len(messages)}.
- main (LangGraph graph channels): the target's checkpoint with a new id; the channels holding values get
  one new version above every version the thread used; parent = the head; metadata as the SQLite writer.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ormsgpack
import psycopg
from psycopg import errors

from memory_core.breaker import BREAKER_CHANNEL
from memory_core.rollback import (
    ROLLBACK_METADATA_KEY,
    RollbackApplied,
    RollbackRefused,
    head_fingerprint,
    running_status,
)
from memory_core.stores.postgres.connect import mask_url
from memory_core.stores.postgres.layout import PostgresLayout
from memory_core.stores.postgres.write_txn import latest_run_events, lock_thread, write_transaction
from memory_core.stores.write.rollback_writer import (
    _begin_immediate,
    _keep_ext,
    _set_summaries_active,
)

# Mycel dev keeps these from the head, not from the target (see the module docstring).

KEPT_FROM_HEAD = (BREAKER_CHANNEL, "pending_permission_requests")
_TIMEOUT_S = 5.0


@dataclass
class _Stored:
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    values: dict[str, Any] = field(default_factory=dict)  # channel -> value, opaque extensions kept


def _channel_value(kind: str | None, blob: bytes | None, channel: str) -> tuple[bool, Any]:
    """(present, value) of one blob row; extensions stay opaque bytes the saver re-encodes unchanged."""
    if kind == "empty":
        return False, None
    if kind == "null":
        return True, None
    if kind in ("bytes", "bytearray") and blob is not None:
        return True, bytes(blob)
    if kind == "msgpack" and blob is not None:
        try:
            return True, ormsgpack.unpackb(bytes(blob), ext_hook=_keep_ext, option=ormsgpack.OPT_NON_STR_KEYS)
        except (ormsgpack.MsgpackDecodeError, ValueError) as exc:
            raise RollbackRefused(f"channel {channel!r} cannot be decoded: {exc}") from exc
    raise RollbackRefused(f"channel {channel!r} is stored as {kind!r}, which a rollback does not copy")


async def _head(conn: psycopg.AsyncConnection[Any], table: str, thread_id: str) -> tuple[str | None, int]:
    cursor = await conn.execute(
        f"SELECT max(checkpoint_id), count(*) FROM {table} WHERE thread_id = %s AND checkpoint_ns = ''",
        (thread_id,),
    )
    row = await cursor.fetchone()
    return (str(row[0]) if row and row[0] is not None else None), int(row[1]) if row else 0


async def _stored(
    conn: psycopg.AsyncConnection[Any], layout: PostgresLayout, thread_id: str, checkpoint_id: str
) -> _Stored:
    cursor = await conn.execute(
        f"SELECT checkpoint::text, metadata::text FROM {layout.table('checkpoints')} "
        "WHERE thread_id = %s AND checkpoint_ns = '' AND checkpoint_id = %s",
        (thread_id, checkpoint_id),
    )
    row = await cursor.fetchone()
    if row is None:
        raise RollbackRefused(f"checkpoint {checkpoint_id} does not exist on thread {thread_id}")
    checkpoint, metadata = json.loads(row[0]), json.loads(row[1] or "{}")
    if not isinstance(checkpoint, dict) or not isinstance(metadata, dict):
        raise RollbackRefused(f"checkpoint {checkpoint_id} has an unknown layout")
    inline = checkpoint.get("channel_values")
    stored = _Stored(checkpoint, metadata, dict(inline) if isinstance(inline, dict) else {})
    cursor = await conn.execute(
        "SELECT b.channel, b.type, b.blob FROM jsonb_each_text(%s::jsonb -> 'channel_versions') AS v(channel, version) "
        f"JOIN {layout.table('checkpoint_blobs')} b ON b.thread_id = %s AND b.checkpoint_ns = '' "
        "AND b.channel = v.channel AND b.version = v.version",
        (row[0], thread_id),
    )
    for channel, kind, blob in await cursor.fetchall():
        present, value = _channel_value(kind, blob, str(channel))
        if present:
            stored.values[str(channel)] = value
    return stored


async def _summaries_table(
    conn: psycopg.AsyncConnection[Any], layout: PostgresLayout
) -> tuple[str, bool] | None:
    """Dev's `agent.summaries` and whether its is_active is boolean; None where summaries stay in SQLite.

    The reader's rule (postgres/side_stores.py): dev's table when present, else the SQLite file.
    """
    if layout.layout != "dev":
        return None
    table = layout.table("summaries")
    cursor = await conn.execute(
        "SELECT format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass(%s) AND a.attname = 'is_active' AND NOT a.attisdropped",
        (table,),
    )
    row = await cursor.fetchone()
    return (table, row[0] == "boolean") if row else None


async def _set_pg_summaries_active(
    conn: psycopg.AsyncConnection[Any], found: tuple[str, bool], summary_ids: Sequence[str], *, active: bool
) -> tuple[str, ...]:
    table, boolean = found
    new, old = (active, not active) if boolean else (int(active), int(not active))
    changed: list[str] = []
    for summary_id in summary_ids:
        cursor = await conn.execute(
            f"UPDATE {table} SET is_active = %s WHERE summary_id = %s AND is_active = %s RETURNING summary_id",
            (new, summary_id, old),
        )
        if await cursor.fetchone():
            changed.append(summary_id)
    return tuple(changed)


def _versions(checkpoint: Mapping[str, Any]) -> dict[str, str]:
    versions = checkpoint.get("channel_versions")
    return {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else {}


def _version_number(version: str) -> int:
    try:
        return int(version.split(".")[0])
    except ValueError:
        return 0


@dataclass(frozen=True, slots=True)
class _NewHead:
    checkpoint: dict[str, Any]
    new_versions: dict[str, str]
    step: int
    notes: dict[str, Any]  # layout-specific additions to the audit note


def _dev_head(saver: Any, target: _Stored, head: _Stored, at: str) -> _NewHead:
    head_versions = _versions(head.checkpoint)
    channels = sorted({*_versions(target.checkpoint), *head_versions})
    values = {ch: v for ch, v in target.values.items() if ch not in KEPT_FROM_HEAD}
    values.update({ch: head.values[ch] for ch in KEPT_FROM_HEAD if ch in head.values})
    new_versions = {ch: saver.get_next_version(head_versions.get(ch), None) for ch in channels}
    messages = values.get("messages")
    step = len(messages) if isinstance(messages, list) else 0
    checkpoint = {
        **head.checkpoint,
        "ts": at,
        "pending_sends": [],
        "versions_seen": head.checkpoint.get("versions_seen") or {},
        "channel_values": values,
        "channel_versions": {**head_versions, **new_versions},
        "updated_channels": list(new_versions),
    }
    return _NewHead(checkpoint, new_versions, step, {"layout": "dev", "breaker": "kept from the head"})


def _main_head(saver: Any, target: _Stored, head: _Stored, at: str) -> _NewHead:
    target_versions = _versions(target.checkpoint)
    every = [*target_versions.values(), *_versions(head.checkpoint).values()]
    newest = max(every, key=_version_number) if every else None
    # One version above any the thread used, as LangGraph bumps the channels a state update writes.
    version = saver.get_next_version(newest, None)
    new_versions = {ch: version for ch in target.values}
    step = target.metadata.get("step")
    checkpoint = {
        **target.checkpoint,
        "ts": at,
        "channel_values": dict(target.values),
        "channel_versions": {**target_versions, **new_versions},
        "updated_channels": list(new_versions),
    }
    return _NewHead(checkpoint, new_versions, (step if isinstance(step, int) else -1) + 1, {"layout": "main"})


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    url: str
    layouts: tuple[PostgresLayout, ...]  # dev first: a thread both hold is dev's


async def _layout_of(
    conn: psycopg.AsyncConnection[Any], where: PostgresTarget, thread_id: str
) -> PostgresLayout:
    for layout in where.layouts:
        cursor = await conn.execute(
            f"SELECT 1 FROM {layout.table('checkpoints')} WHERE thread_id = %s AND checkpoint_ns = '' LIMIT 1",
            (thread_id,),
        )
        if await cursor.fetchone():
            return layout
    raise RollbackRefused(f"thread {thread_id} has no checkpoints in {mask_url(where.url)}")


async def _apply(
    where: PostgresTarget,
    *,
    summary_db: Path | None,
    thread_id: str,
    target_checkpoint_id: str,
    expected_fingerprint: str,
    actor: str,
    action: str,
    deactivate_summary_ids: Sequence[str],
    reactivate_summary_ids: Sequence[str],
    force: bool,
    moment: datetime,
) -> RollbackApplied:
    from langgraph.checkpoint.base.id import uuid6
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    summary_conn: sqlite3.Connection | None = None
    try:
        async with write_transaction(where.url, timeout_s=_TIMEOUT_S) as conn:
            layout = await _layout_of(conn, where, thread_id)
            await lock_thread(conn, layout.schema, thread_id)
            # Under the lock: whatever we read now cannot change before our commit.
            head_id, count = await _head(conn, layout.table("checkpoints"), thread_id)
            if head_id is None:
                raise RollbackRefused(f"thread {thread_id} has no checkpoints")
            seen = head_fingerprint(thread_id=thread_id, head_checkpoint_id=head_id, checkpoint_count=count)
            if seen != expected_fingerprint:
                raise RollbackRefused(
                    "the thread changed since the preview (new head or new checkpoints); preview again"
                )
            if not force:
                # A run that started after the preview may have written no checkpoint yet: its events say so.
                events = await latest_run_events(conn, layout.schema, thread_id)
                busy = running_status(now=moment, newest_checkpoint_at=None, run_events=events)
                if busy.is_running:
                    raise RollbackRefused("running: the thread looks busy — " + "; ".join(busy.reasons))
            target = await _stored(conn, layout, thread_id, target_checkpoint_id)
            head = await _stored(conn, layout, thread_id, head_id)
            # The saver on our connection: its statements join this transaction (its own pipeline() nests
            # inside it), so the lock, the check and the write commit or vanish together. Never setup():
            # that runs migrations on Mycel's database.
            saver = AsyncPostgresSaver(conn=conn)
            build = _dev_head if layout.layout == "dev" else _main_head
            new = build(saver, target, head, moment.isoformat())
            new_id = str(uuid6(clock_seq=new.step))
            if new_id <= head_id:
                raise RollbackRefused(
                    "the clock is behind the newest checkpoint id; refusing to write an older id"
                )
            new.checkpoint["id"] = new_id
            deactivated: tuple[str, ...] = ()
            reactivated: tuple[str, ...] = ()
            pg_summaries = await _summaries_table(conn, layout)
            if pg_summaries is not None:
                # In this transaction: the summaries change with the checkpoint, or not at all.
                deactivated = await _set_pg_summaries_active(
                    conn, pg_summaries, deactivate_summary_ids, active=False
                )
                reactivated = await _set_pg_summaries_active(
                    conn, pg_summaries, reactivate_summary_ids, active=True
                )
            elif summary_db is not None and (deactivate_summary_ids or reactivate_summary_ids):
                if not summary_db.exists():
                    raise RollbackRefused(f"{summary_db} does not exist")
                summary_conn = sqlite3.connect(summary_db, timeout=_TIMEOUT_S, isolation_level=None)
                _begin_immediate(summary_conn, str(summary_db))
                deactivated = _set_summaries_active(summary_conn, deactivate_summary_ids, active=False)
                reactivated = _set_summaries_active(summary_conn, reactivate_summary_ids, active=True)
            note = {
                "action": action,
                "actor": actor,
                "at": moment.isoformat(),
                "previous_head": head_id,
                "target": target_checkpoint_id,
                "deactivated_summaries": list(deactivated),
                "reactivated_summaries": list(reactivated),
                **new.notes,
            }
            metadata: dict[str, Any] = {"source": "update", "step": new.step, ROLLBACK_METADATA_KEY: note}
            if layout.layout != "dev":
                metadata["parents"] = target.metadata.get("parents") or {}
            config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": head_id}}
            await saver.aput(config, new.checkpoint, metadata, new.new_versions)  # type: ignore[arg-type]
    except BaseException:
        # The checkpoint did not commit: neither do the summaries.
        if summary_conn is not None:
            if summary_conn.in_transaction:
                summary_conn.execute("ROLLBACK")
            summary_conn.close()
        raise
    # Leaving the block committed the checkpoint; the summaries follow, as the SQLite writer orders it.
    if summary_conn is not None:
        try:
            summary_conn.execute("COMMIT")
        finally:
            summary_conn.close()
    return RollbackApplied(
        thread_id=thread_id,
        action=action,
        new_head_checkpoint_id=new_id,
        previous_head_checkpoint_id=head_id,
        target_checkpoint_id=target_checkpoint_id,
        deactivated_summary_ids=deactivated,
        reactivated_summary_ids=reactivated,
    )


def apply_postgres_checkpoint_copy(
    where: PostgresTarget,
    *,
    summary_db: Path | None,
    thread_id: str,
    target_checkpoint_id: str,
    expected_fingerprint: str,
    actor: str,
    action: str = "rollback",
    deactivate_summary_ids: Sequence[str] = (),
    reactivate_summary_ids: Sequence[str] = (),
    force: bool = False,
    now: datetime | None = None,
) -> RollbackApplied:
    """Write the rollback (or undo) checkpoint in one locked transaction; refuse if the head moved."""
    if not where.layouts:
        raise RollbackRefused(f"no Mycel checkpoint tables in {mask_url(where.url)}")
    try:
        return asyncio.run(
            _apply(
                where,
                summary_db=summary_db,
                thread_id=thread_id,
                target_checkpoint_id=target_checkpoint_id,
                expected_fingerprint=expected_fingerprint,
                actor=actor,
                action=action,
                deactivate_summary_ids=deactivate_summary_ids,
                reactivate_summary_ids=reactivate_summary_ids,
                force=force,
                moment=now or datetime.now(UTC),
            )
        )
    except errors.InsufficientPrivilege as exc:
        raise RollbackRefused(
            f"the role in {mask_url(where.url)} may not write Mycel's checkpoints ({_first_line(exc)});"
            " nothing was written. Apply with a role that has INSERT on the checkpoint tables."
        ) from None
    except errors.LockNotAvailable:
        raise RollbackRefused(
            "another dashboard is applying a rollback to this thread; preview again"
        ) from None
    except errors.QueryCanceled as exc:
        raise RollbackRefused(
            f"the write took longer than allowed ({_first_line(exc)}); nothing was written"
        ) from None
    except psycopg.Error as exc:
        raise RollbackRefused(f"{mask_url(where.url)}: {_first_line(exc)}; nothing was written") from None
    except sqlite3.Error as exc:
        raise RollbackRefused(f"the summaries could not be updated ({exc}); nothing was written") from None


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

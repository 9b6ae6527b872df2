"""The audited write behind rollback and undo: one new checkpoint, written through LangGraph's own saver.

The new checkpoint copies the target's state and names the target as its parent — what LangGraph writes
when a graph's state is updated from an earlier checkpoint (metadata source "update", step + 1). Being the
newest checkpoint id, it becomes the thread's active state for Mycel and for LangGraph's `get_tuple`.
Nothing is deleted. Summaries that no longer fit are deactivated in the same locked window.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import ormsgpack
from langgraph.checkpoint.base.id import uuid6
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core.rollback import ROLLBACK_METADATA_KEY, RollbackApplied, RollbackRefused, head_fingerprint

# Short: a rollback must never hold Mycel's writers up for long.
_BUSY_TIMEOUT_S = 5.0


def _keep_ext(code: int, data: bytes) -> ormsgpack.Ext:
    # Keep LangGraph's ext payloads as opaque bytes: nothing named by the data is imported, and the
    # saver re-encodes them byte for byte.
    return ormsgpack.Ext(code, data)


@contextmanager
def _write_connection(path: Path) -> Iterator[sqlite3.Connection]:
    if not path.exists():
        raise RollbackRefused(f"{path} does not exist")
    conn = sqlite3.connect(path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        yield conn
    finally:
        conn.close()


def _begin_immediate(conn: sqlite3.Connection, what: str) -> None:
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        raise RollbackRefused(f"{what} is locked by another writer ({exc}); try again in a moment") from exc


def _head(conn: sqlite3.Connection, thread_id: str) -> tuple[str | None, int]:
    row = conn.execute(
        "SELECT max(checkpoint_id), count(*) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
        (thread_id,),
    ).fetchone()
    return row[0], int(row[1])


def _load_target(
    conn: sqlite3.Connection, thread_id: str, checkpoint_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    row = conn.execute(
        "SELECT type, checkpoint, metadata FROM checkpoints"
        " WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
        (thread_id, checkpoint_id),
    ).fetchone()
    if row is None:
        raise RollbackRefused(f"checkpoint {checkpoint_id} does not exist on thread {thread_id}")
    kind, blob, metadata_blob = row
    if kind != "msgpack":
        raise RollbackRefused(
            f"checkpoint {checkpoint_id} is stored as {kind!r}; only msgpack can be copied safely"
        )
    try:
        checkpoint = ormsgpack.unpackb(blob, ext_hook=_keep_ext, option=ormsgpack.OPT_NON_STR_KEYS)
        metadata = json.loads(metadata_blob) if metadata_blob else {}
    except (ormsgpack.MsgpackDecodeError, ValueError) as exc:
        raise RollbackRefused(f"checkpoint {checkpoint_id} cannot be decoded: {exc}") from exc
    if not isinstance(checkpoint, dict) or not isinstance(metadata, dict):
        raise RollbackRefused(f"checkpoint {checkpoint_id} has an unknown layout")
    return checkpoint, metadata


def _set_summaries_active(
    conn: sqlite3.Connection, summary_ids: Sequence[str], *, active: bool
) -> tuple[str, ...]:
    changed: list[str] = []
    for summary_id in summary_ids:
        cursor = conn.execute(
            "UPDATE summaries SET is_active = ? WHERE summary_id = ? AND is_active = ?",
            (1 if active else 0, summary_id, 0 if active else 1),
        )
        if cursor.rowcount:
            changed.append(summary_id)
    return tuple(changed)


def apply_checkpoint_copy(
    *,
    main_db: Path,
    summary_db: Path | None,
    thread_id: str,
    target_checkpoint_id: str,
    expected_fingerprint: str,
    actor: str,
    action: str = "rollback",
    deactivate_summary_ids: Sequence[str] = (),
    reactivate_summary_ids: Sequence[str] = (),
    now: datetime | None = None,
) -> RollbackApplied:
    """Write the rollback (or undo) checkpoint in one short BEGIN IMMEDIATE; refuse if the head moved."""
    moment = now or datetime.now(UTC)
    with ExitStack() as stack:
        conn = stack.enter_context(_write_connection(main_db))
        _begin_immediate(conn, str(main_db))
        committed = False
        summary_conn: sqlite3.Connection | None = None
        try:
            head_id, count = _head(conn, thread_id)
            if head_id is None:
                raise RollbackRefused(f"thread {thread_id} has no checkpoints")
            fingerprint = head_fingerprint(
                thread_id=thread_id, head_checkpoint_id=head_id, checkpoint_count=count
            )
            if fingerprint != expected_fingerprint:
                raise RollbackRefused(
                    "the thread changed since the preview (new head or new checkpoints); preview again"
                )
            checkpoint, target_metadata = _load_target(conn, thread_id, target_checkpoint_id)
            step = target_metadata.get("step")
            step = step if isinstance(step, int) else -1
            new_id = str(uuid6(clock_seq=step + 1))
            if new_id <= head_id:
                raise RollbackRefused(
                    "the clock is behind the newest checkpoint id; refusing to write an older id"
                )

            if deactivate_summary_ids or reactivate_summary_ids:
                if summary_db is None or summary_db == main_db:
                    summary_conn = conn
                else:
                    summary_conn = stack.enter_context(_write_connection(summary_db))
                    _begin_immediate(summary_conn, str(summary_db))
            deactivated = (
                _set_summaries_active(summary_conn, deactivate_summary_ids, active=False)
                if summary_conn
                else ()
            )
            reactivated = (
                _set_summaries_active(summary_conn, reactivate_summary_ids, active=True)
                if summary_conn
                else ()
            )

            checkpoint["id"] = new_id
            checkpoint["ts"] = moment.isoformat()
            metadata: dict[str, Any] = {
                "source": "update",
                "step": step + 1,
                "parents": target_metadata.get("parents") or {},
                ROLLBACK_METADATA_KEY: {
                    "action": action,
                    "actor": actor,
                    "at": moment.isoformat(),
                    "previous_head": head_id,
                    "target": target_checkpoint_id,
                    "deactivated_summaries": list(deactivated),
                    "reactivated_summaries": list(reactivated),
                },
            }
            saver = SqliteSaver(conn)
            # setup() would run `PRAGMA journal_mode=WAL` and CREATE TABLEs on Mycel's file: never here.
            saver.is_setup = True
            config = {
                "configurable": {
                    "thread_id": thread_id,
                    "checkpoint_ns": "",
                    "checkpoint_id": target_checkpoint_id,
                }
            }
            if summary_conn is not None and summary_conn is not conn:
                # Both write locks are held; commit the checkpoint first (the saver commits), then summaries.
                saver.put(config, checkpoint, metadata, {})  # type: ignore[arg-type]
                committed = True
                summary_conn.execute("COMMIT")
            else:
                saver.put(config, checkpoint, metadata, {})  # type: ignore[arg-type]
                committed = True
        finally:
            if not committed:
                for connection in {id(c): c for c in (conn, summary_conn) if c is not None}.values():
                    if connection.in_transaction:
                        connection.execute("ROLLBACK")
    return RollbackApplied(
        thread_id=thread_id,
        action=action,
        new_head_checkpoint_id=new_id,
        previous_head_checkpoint_id=head_id,
        target_checkpoint_id=target_checkpoint_id,
        deactivated_summary_ids=deactivated,
        reactivated_summary_ids=reactivated,
    )

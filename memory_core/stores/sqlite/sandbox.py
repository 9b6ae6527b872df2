"""A thread's sandbox from sandbox.db (reference §2.9).

The durable thread↔lease link is `abstract_terminals` (chat_sessions come and go); leases, instances,
events, snapshots and volumes hang off the leases found there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_core.records import (
    LeaseEvent,
    ResourceSnapshot,
    SandboxInstance,
    SandboxLease,
    SandboxSession,
    SandboxState,
    SandboxTerminal,
    SandboxVolume,
)
from memory_core.stores.rows import json_payload, masked, masked_or_none
from memory_core.stores.sqlite.connect import ReadOnlyDB
from memory_core.stores.times import from_local_iso

_EVENTS_PER_LEASE = 200


def _col(cols: tuple[str, ...], name: str) -> str:
    return name if name in cols else "NULL"


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def state_label(desired: str | None, observed: str | None) -> str | None:
    """Mycel's monitor badge text: the observed state, or "observed -> desired" while they differ."""
    if observed is None and desired is None:
        return None
    if desired and observed != desired:
        return f"{observed or 'unknown'} -> {desired}"
    return observed or desired


def sandbox_states(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, str | None]:
    """Per thread, the state label of the lease of its newest terminal (for the thread list)."""
    if not (db.has_table("abstract_terminals") and db.has_table("sandbox_leases")):
        return {}
    where, params = ("WHERE t.thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    rows = db.rows(
        "SELECT t.thread_id, l.desired_state, l.observed_state FROM abstract_terminals t "
        f"JOIN sandbox_leases l ON l.lease_id = t.lease_id {where} ORDER BY t.created_at, t.rowid",
        params,
    )
    return {str(r[0]): state_label(r[1], r[2]) for r in rows}


def get_sandbox(db: ReadOnlyDB, thread_id: str) -> SandboxState | None:
    """Everything sandbox.db knows about one thread; None when it has no terminal."""
    if not db.require_table("abstract_terminals"):
        return None
    pointer = None
    if db.has_table("thread_terminal_pointers"):
        pointer = db.one(
            "SELECT active_terminal_id, default_terminal_id FROM thread_terminal_pointers WHERE thread_id = ?",
            (thread_id,),
        )
    active_id, default_id = (pointer[0], pointer[1]) if pointer else (None, None)
    terminals = tuple(
        SandboxTerminal(
            terminal_id=str(r[0]),
            lease_id=str(r[1]),
            cwd=masked(str(r[2])),
            state_version=r[3],
            is_active=r[0] == active_id,
            is_default=r[0] == default_id,
            created_at=from_local_iso(r[4]),
            updated_at=from_local_iso(r[5]),
        )
        for r in db.rows(
            "SELECT terminal_id, lease_id, cwd, state_version, created_at, updated_at FROM abstract_terminals "
            "WHERE thread_id = ? ORDER BY created_at, rowid",
            (thread_id,),
        )
    )
    if not terminals:
        return None
    lease_ids = list(dict.fromkeys(t.lease_id for t in terminals))
    leases = _leases(db, lease_ids)
    active_lease = next((t.lease_id for t in terminals if t.is_active), terminals[-1].lease_id)
    chosen = next((lease for lease in leases if lease.lease_id == active_lease), None)
    return SandboxState(
        thread_id=thread_id,
        state=state_label(chosen.desired_state, chosen.observed_state) if chosen else None,
        leases=leases,
        instances=_instances(db, lease_ids),
        terminals=terminals,
        sessions=_sessions(db, thread_id),
        lease_events=_events(db, lease_ids),
        snapshots=_snapshots(db, lease_ids),
        volumes=_volumes(db, [lease.volume_id for lease in leases if lease.volume_id]),
    )


def _leases(db: ReadOnlyDB, lease_ids: list[str]) -> tuple[SandboxLease, ...]:
    if not lease_ids or not db.require_table("sandbox_leases"):
        return ()
    c = db.columns("sandbox_leases")
    rows = db.rows(
        "SELECT lease_id, provider_name, desired_state, observed_state, "
        f"{_col(c, 'instance_status')}, current_instance_id, {_col(c, 'status')}, {_col(c, 'volume_id')}, "
        f"{_col(c, 'recipe_id')}, last_error, created_at, updated_at FROM sandbox_leases "
        f"WHERE lease_id IN ({_marks(lease_ids)})",
        lease_ids,
    )
    return tuple(
        SandboxLease(
            lease_id=str(r[0]),
            provider_name=str(r[1]),
            desired_state=r[2],
            observed_state=r[3],
            instance_status=r[4],
            current_instance_id=r[5],
            status=r[6],
            volume_id=r[7],
            recipe_id=r[8],
            last_error=masked_or_none(r[9]),
            created_at=from_local_iso(r[10]),
            updated_at=from_local_iso(r[11]),
        )
        for r in rows
    )


def _instances(db: ReadOnlyDB, lease_ids: list[str]) -> tuple[SandboxInstance, ...]:
    if not lease_ids or not db.has_table("sandbox_instances"):
        return ()
    rows = db.rows(
        "SELECT instance_id, lease_id, provider_session_id, status, created_at, last_seen_at FROM sandbox_instances "
        f"WHERE lease_id IN ({_marks(lease_ids)}) ORDER BY created_at",
        lease_ids,
    )
    return tuple(
        SandboxInstance(str(r[0]), str(r[1]), str(r[2]), r[3], from_local_iso(r[4]), from_local_iso(r[5]))
        for r in rows
    )


def _sessions(db: ReadOnlyDB, thread_id: str) -> tuple[SandboxSession, ...]:
    if not db.has_table("chat_sessions"):
        return ()
    rows = db.rows(
        "SELECT chat_session_id, terminal_id, lease_id, status, started_at, last_active_at, ended_at, close_reason "
        "FROM chat_sessions WHERE thread_id = ? ORDER BY started_at",
        (thread_id,),
    )
    return tuple(
        SandboxSession(
            str(r[0]),
            str(r[1]),
            str(r[2]),
            str(r[3]),
            from_local_iso(r[4]),
            from_local_iso(r[5]),
            from_local_iso(r[6]),
            masked_or_none(r[7]),
        )
        for r in rows
    )


def _events(db: ReadOnlyDB, lease_ids: list[str]) -> tuple[LeaseEvent, ...]:
    if not lease_ids or not db.has_table("lease_events"):
        return ()
    rows = db.rows(
        "SELECT event_id, lease_id, event_type, source, payload_json, error, created_at FROM lease_events "
        f"WHERE lease_id IN ({_marks(lease_ids)}) ORDER BY created_at DESC",
        lease_ids,
        cap=_EVENTS_PER_LEASE * len(lease_ids),
    )
    return tuple(
        LeaseEvent(
            str(r[0]),
            str(r[1]),
            str(r[2]),
            str(r[3]),
            json_payload(r[4]),
            masked_or_none(r[5]),
            from_local_iso(r[6]),
        )
        for r in rows
    )


def _snapshots(db: ReadOnlyDB, lease_ids: list[str]) -> tuple[ResourceSnapshot, ...]:
    if not lease_ids or not db.has_table("lease_resource_snapshots"):
        return ()
    rows = db.rows(
        "SELECT lease_id, provider_name, observed_state, probe_mode, cpu_used, cpu_limit, memory_used_mb, "
        "memory_total_mb, disk_used_gb, disk_total_gb, probe_error, collected_at FROM lease_resource_snapshots "
        f"WHERE lease_id IN ({_marks(lease_ids)})",
        lease_ids,
    )
    return tuple(
        ResourceSnapshot(
            lease_id=str(r[0]),
            provider_name=str(r[1]),
            observed_state=str(r[2]),
            probe_mode=str(r[3]),
            cpu_used=r[4],
            cpu_limit=r[5],
            memory_used_mb=r[6],
            memory_total_mb=r[7],
            disk_used_gb=r[8],
            disk_total_gb=r[9],
            probe_error=masked_or_none(r[10]),
            collected_at=from_local_iso(r[11]),
        )
        for r in rows
    )


def _volumes(db: ReadOnlyDB, volume_ids: list[str]) -> tuple[SandboxVolume, ...]:
    if not volume_ids or not db.has_table("sandbox_volumes"):
        return ()
    rows = db.rows(
        f"SELECT volume_id, name, source, created_at FROM sandbox_volumes WHERE volume_id IN ({_marks(volume_ids)})",
        volume_ids,
    )
    return tuple(SandboxVolume(str(r[0]), r[1], json_payload(r[2]), from_local_iso(r[3])) for r in rows)

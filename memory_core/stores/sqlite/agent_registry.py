"""Mycel's sub-agent registry: `<config home>/agent_registry.db`, table `agents` (reference §2.10).

Mycel opens this file with bare sqlite3 (rollback journal, no busy timeout) and writes it with
`INSERT OR REPLACE`, so one row per agent id. Only `agent_id` and `thread_id` are needed to place a
sub-agent; the other columns are read when present, so an older or trimmed layout still lists its agents.
"""

from __future__ import annotations

from typing import Any

from memory_core.records import AgentRecord, ProblemKind, StoreProblem
from memory_core.stores.rows import masked
from memory_core.stores.sqlite.connect import ReadOnlyDB, StoreError
from memory_core.stores.times import from_epoch

_REQUIRED = ("agent_id", "thread_id")
_OPTIONAL = ("name", "status", "parent_agent_id", "subagent_type", "created_at")


def _epoch(value: Any) -> Any:
    # REAL affinity stores strftime('%s','now') as a number; a hand-edited row may still hold its text.
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return value


def list_agents(db: ReadOnlyDB) -> list[AgentRecord]:
    """Every registered sub-agent, oldest first (created_at, then rowid: the order Mycel registered them)."""
    if not db.require_table("agents"):
        return []
    columns = db.columns("agents")
    missing = [c for c in _REQUIRED if c not in columns]
    if missing:
        raise StoreError(
            StoreProblem(
                ProblemKind.UNKNOWN_SCHEMA,
                db.store,
                f"{db.path.name}: the agents table has no {', '.join(missing)} column",
                db.path,
            )
        )
    selected = ", ".join([*_REQUIRED, *(c if c in columns else "NULL" for c in _OPTIONAL)])
    order = "created_at, rowid" if "created_at" in columns else "rowid"
    rows = db.rows(f"SELECT {selected} FROM agents ORDER BY {order}")
    return [
        AgentRecord(
            agent_id=str(r[0]),
            thread_id=str(r[1]),
            name=masked(str(r[2])) if r[2] is not None else "",
            status=str(r[3]) if r[3] is not None else "running",
            parent_thread_id=str(r[4]) if r[4] not in (None, "") else None,
            subagent_type=str(r[5]) if r[5] is not None else None,
            created_at=from_epoch(_epoch(r[6])),
        )
        for r in rows
        if r[1] is not None
    ]

"""Sub-agents of the demo home: a parent thread's two sub-agents and the registry that names them.

Mycel registers a sub-agent in `<config home>/agent_registry.db` (status `running`), runs it on thread
`subagent-<agent_id>` (checkpoints in leon.db, no `threads` row), then sets its status to `completed` or
`error` (reference §2.10). One demo sub-agent ran to completion; the other failed before its first
checkpoint, so only the registry knows it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memory_core.demo.determinism import DemoClock, SeededIds
from memory_core.demo.graph import build_thread
from memory_core.demo.scripts import Human, Reply, ThreadScript, ToolUse, Turn

# Mycel's storage/providers/sqlite/agent_registry_repo.py, verbatim.
AGENTS_DDL = """
CREATE TABLE IF NOT EXISTS agents (
    agent_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'running',
    parent_agent_id TEXT,
    subagent_type TEXT,
    created_at REAL DEFAULT (strftime('%s', 'now'))
);
CREATE INDEX IF NOT EXISTS idx_thread ON agents(thread_id);
"""


@dataclass(frozen=True, slots=True)
class AgentsTableRow:
    """One `agents` row as Mycel writes it; `parent_agent_id` holds the parent's THREAD id."""

    agent_id: str
    name: str
    thread_id: str
    status: str
    parent_agent_id: str | None
    subagent_type: str | None
    created_at: float  # whole seconds, as strftime('%s', 'now') gives them


def write_agent_registry(path: Path, rows: Iterable[AgentsTableRow]) -> None:
    """Write `agents` rows the way Mycel does: bare sqlite3 (rollback journal), INSERT OR REPLACE with
    status `running`, then the final status in its own UPDATE."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.executescript(AGENTS_DDL)
        for row in rows:
            with conn:
                # created_at is given rather than defaulted, so the demo is the same on every run.
                conn.execute(
                    "INSERT OR REPLACE INTO agents "
                    "(agent_id, name, thread_id, status, parent_agent_id, subagent_type, created_at) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (
                        row.agent_id,
                        row.name,
                        row.thread_id,
                        "running",
                        row.parent_agent_id,
                        row.subagent_type,
                        row.created_at,
                    ),
                )
            if row.status != "running":
                with conn:
                    conn.execute("UPDATE agents SET status=? WHERE agent_id=?", (row.status, row.agent_id))
    finally:
        conn.close()


def _survey_script() -> ThreadScript:
    task = Human(
        "Survey the greenhouse sensor logs from last night and list every station that reported a gap.",
        {},
    )
    grep = ToolUse(
        "Grep",
        {"pattern": "gap", "path": "logs/"},
        output="logs/station-03.log:112: gap 00:40-01:05\nlogs/station-07.log:88: gap 02:10-02:12",
    )
    return ThreadScript(
        "anthropic",
        "claude-sonnet-4-5-20250929",
        "anthropic",
        (
            Turn(
                task,
                (
                    Reply("Searching the logs for gaps.", (grep,)),
                    Reply("Two stations reported gaps: station 3 (25 min) and station 7 (2 min)."),
                ),
            ),
        ),
        web_run=False,
    )


def write_subagents(
    folder: Path, parent_thread_id: str | None, *, seed: int, clock: DemoClock
) -> tuple[AgentsTableRow, ...]:
    """Two sub-agents of `parent_thread_id`: one completed, with checkpoints written through the real
    graph into leon.db; one whose registration failed before any checkpoint. Replaces the registry;
    writes none without a parent (a demo home whose threads never ran)."""
    ids = SeededIds(seed, namespace="subagents")
    registry = folder / "agent_registry.db"
    for suffix in ("", "-journal"):
        Path(f"{registry}{suffix}").unlink(missing_ok=True)
    if parent_thread_id is None:
        return ()
    completed_id, failed_id = ids.hex(8), ids.hex(8)
    completed = AgentsTableRow(
        completed_id,
        "sensor-gap-survey",
        f"subagent-{completed_id}",
        "completed",
        parent_thread_id,
        "explore",
        float(int(clock.now_epoch())),
    )
    build_thread(folder / "leon.db", completed.thread_id, _survey_script(), seed=seed, clock=clock)
    clock.advance(40.0)
    failed = AgentsTableRow(
        failed_id,
        "archive-snapshots",
        f"subagent-{failed_id}",
        "error",
        parent_thread_id,
        "general-purpose",
        float(int(clock.now_epoch())),
    )
    rows = (completed, failed)
    write_agent_registry(registry, rows)
    return rows

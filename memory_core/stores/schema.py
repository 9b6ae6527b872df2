"""Schema detection: which layout of each Mycel file this is, in words a status page can show (§9)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memory_core.records import ProblemKind, StoreProblem
from memory_core.stores.locations import StoreRole

CHECKPOINT_COLUMNS = frozenset(
    {"thread_id", "checkpoint_ns", "checkpoint_id", "parent_checkpoint_id", "type", "checkpoint", "metadata"}
)
POSTGRES_TABLES = frozenset({"checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"})


def checkpoint_layout_problem(tables: Mapping[str, tuple[str, ...]]) -> str | None:
    """Why the checkpoints in these tables cannot be read (a phrase after the file name), or None."""
    postgres = sorted(POSTGRES_TABLES & set(tables))
    if postgres:
        return (
            f"has LangGraph's Postgres-style layout ({', '.join(postgres)}), not the SQLite saver's; "
            "its checkpoints are not read"
        )
    columns = set(tables.get("checkpoints", ()))
    if not columns or columns >= CHECKPOINT_COLUMNS:
        return None
    missing = sorted(CHECKPOINT_COLUMNS - columns)
    older = " (thread_ts instead of checkpoint_id)" if "thread_ts" in columns else ""
    return (
        f"has an older LangGraph checkpoints layout{older}: no {', '.join(missing)} "
        f"column{'s' if len(missing) > 1 else ''}; only the SQLite saver's current layout (what Mycel "
        "writes) is read, so its checkpoints are not read"
    )


def describe_file(
    role: StoreRole, path: Path, tables: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, ...], StoreProblem | None]:
    """Remarks about the layout, and a problem when the layout is one the reader cannot use."""
    notes: list[str] = []
    problem: StoreProblem | None = None
    if role is StoreRole.MAIN:
        why = checkpoint_layout_problem(tables)
        if why is not None:
            problem = StoreProblem(ProblemKind.UNKNOWN_SCHEMA, role.value, f"{path.name} {why}", path)
        if "writes" in tables:
            if "task_path" in tables["writes"]:
                notes.append("writes has task_path (newer langgraph-checkpoint-sqlite layout)")
            else:
                notes.append(
                    "writes without task_path (langgraph-checkpoint-sqlite 3.0 layout, as Mycel pins)"
                )
        elif "checkpoints" in tables:
            notes.append("no writes table: every checkpoint is decoded in full")
        if "threads" in tables and "branch_index" not in tables["threads"]:
            notes.append("threads without is_main/branch_index (leonai layout)")
        for table in ("summaries", "file_operations"):
            if table in tables:
                notes.append(f"{table} here too (agents built without a storage container)")
    if role is StoreRole.QUEUE and "message_queue" in tables:
        columns = set(tables["message_queue"])
        if {"sender_id", "sender_entity_id"} <= columns:
            notes.append("message_queue has sender_id and sender_entity_id (upgraded leonai file)")
        elif "sender_entity_id" in columns:
            notes.append("message_queue uses sender_entity_id (leonai layout)")
    if (
        role is StoreRole.SANDBOX
        and "sandbox_leases" in tables
        and "volume_id" not in tables["sandbox_leases"]
    ):
        notes.append("sandbox_leases without recipe/volume columns (leonai layout)")
    return tuple(notes), problem

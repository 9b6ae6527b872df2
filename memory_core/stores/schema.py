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


def describe_file(
    role: StoreRole, path: Path, tables: Mapping[str, tuple[str, ...]]
) -> tuple[tuple[str, ...], StoreProblem | None]:
    """Remarks about the layout, and a problem when the layout is one the reader cannot use."""
    notes: list[str] = []
    problem: StoreProblem | None = None
    if role is StoreRole.MAIN:
        if POSTGRES_TABLES & set(tables):
            problem = StoreProblem(
                ProblemKind.UNKNOWN_SCHEMA,
                role.value,
                f"{path.name} has LangGraph's Postgres-style tables ({', '.join(sorted(POSTGRES_TABLES & set(tables)))})",
                path,
            )
        elif "checkpoints" in tables and not set(tables["checkpoints"]) >= CHECKPOINT_COLUMNS:
            problem = StoreProblem(
                ProblemKind.UNKNOWN_SCHEMA,
                role.value,
                f"{path.name}: checkpoints has unexpected columns",
                path,
            )
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

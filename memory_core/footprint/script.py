"""A retention plan as a SQL script the operator runs with Mycel stopped: SQLite (sqlite3) and PostgreSQL (psql).

The dashboard never deletes Mycel's history itself. The script carries its own guards, so a stale one (Mycel
wrote more since the plan) can never delete a head, a fork point or a rollback or undo target: every DELETE
also requires that the row is older than its thread's newest checkpoint now, that it is not now the parent
of two or more checkpoints, and that no dashboard rollback now names it.
"""

# ruff: noqa: S608 - this module writes SQL text for a person to run: every value in it goes through
# literal() (escaped, NUL refused) and every identifier through _ident(); nothing here executes it.
from __future__ import annotations

import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memory_core.footprint.retention import ALWAYS_KEPT, RetentionPlan, ThreadRetention

# Long IN lists are split so no statement grows past what a shell or a server parses comfortably.
_CHUNK = 500


class ScriptError(ValueError):
    """A plan that cannot be written as SQL safely (an id holding NUL)."""


@dataclass(frozen=True, slots=True)
class ScriptTarget:
    """Where the script runs: a SQLite file, or a PostgreSQL database with a schema per store label."""

    engine: str  # "sqlite" | "postgresql"
    location: str  # the file's path, or the masked URL (never the password)
    schemas: Mapping[str, str] | None = None  # PostgreSQL: ThreadBytes.store label -> schema


def literal(text: str, *, engine: str) -> str:
    """`text` as a SQL string literal; control characters are spelled with char()/chr() so no line of the
    script can be read by sqlite3 or psql as one of their own commands."""
    if "\x00" in text:
        raise ScriptError(f"an id holds a NUL character and cannot be written as SQL: {text!r}")
    char = "char" if engine == "sqlite" else "chr"
    parts: list[str] = []
    plain = ""
    for ch in text:
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            if plain:
                parts.append("'" + plain.replace("'", "''") + "'")
                plain = ""
            parts.append(f"{char}({ord(ch)})")
        else:
            plain += ch
    if plain or not parts:
        parts.append("'" + plain.replace("'", "''") + "'")
    return parts[0] if len(parts) == 1 else "(" + " || ".join(parts) + ")"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _comment(text: str) -> str:
    # Control characters spelled out: an id can never end the comment line and start a command.
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)


def retention_script(plan: RetentionPlan, target: ScriptTarget) -> str:
    """The whole script: header, one transaction of guarded DELETEs, then the VACUUM that returns the space."""
    touched = [t for t in plan.touched if _in_target(t, target)]
    lines = _header(plan, target, touched)
    if target.engine == "sqlite":
        lines += _sqlite_body(touched)
    else:
        lines += _postgres_body(touched, target)
    return "\n".join(lines) + "\n"


def _in_target(thread: ThreadRetention, target: ScriptTarget) -> bool:
    return target.engine == "sqlite" or (target.schemas is not None and thread.store in target.schemas)


def _header(plan: RetentionPlan, target: ScriptTarget, touched: Sequence[ThreadRetention]) -> list[str]:
    frees = sum(t.frees_bytes for t in touched)
    drops = sum(len(t.drops) for t in touched)
    if target.engine == "sqlite":
        path = shlex.quote(target.location)
        backup = f"sqlite3 {path} \".backup '{target.location}.before-retention'\""
        run = f"sqlite3 -bail {path} < plan.sql"
    else:
        schemas = sorted(set((target.schemas or {}).values()))
        tables = " ".join(f"-t {shlex.quote(f'{s}.{n}')}" for s in schemas for n in _PG_TABLES)
        backup = (
            f"pg_dump {shlex.quote(target.location)} {tables} -Fc -f mycel-checkpoints.before-retention.dump"
        )
        run = f"psql {shlex.quote(target.location)} -X -v ON_ERROR_STOP=1 -f plan.sql"
    head = [
        "-- Mycel retention plan, written by the Mycel Memory Dashboard (a dry-run until you run it).",
        f"-- Planned at {plan.planned_at.isoformat()} from {_comment(target.location)} ({target.engine}).",
        f"-- Policy: {_comment(plan.policy.describe())}.",
        f"-- Frees {frees} bytes of rows: {drops} checkpoints dropped in {len(touched)} threads.",
        f"-- {ALWAYS_KEPT}",
        "-- Every DELETE re-checks that at run time, so a stale script cannot touch them even if Mycel wrote",
        "-- more since the plan; a checkpoint the guards spare keeps its writes too.",
        "--",
        "-- RUN WITH MYCEL STOPPED, AND BACK UP FIRST:",
        f"--   {_comment(backup)}",
        f"--   {_comment(run)}",
    ]
    for t in touched:
        head.append(
            f"--   thread {_comment(t.thread_id)}: drops {len(t.drops)}, keeps {len(t.keeps)}, "
            f"frees {t.frees_bytes} bytes"
        )
    return [*head, ""]


_T = TypeVar("_T")


def _chunks(ids: Sequence[_T]) -> Iterator[Sequence[_T]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


# -- SQLite: Mycel's leon.db (checkpoints, writes) ------------------------------------------------------


def _sqlite_guards(thread: str, column: str) -> str:
    """Spare, at run time, the thread's newest checkpoint, fork points and rollback/undo targets."""
    meta = "CAST(m.metadata AS TEXT)"
    return (
        f"  AND {column} < (SELECT max(h.checkpoint_id) FROM checkpoints h"
        f" WHERE h.thread_id = {thread} AND h.checkpoint_ns = '')\n"
        f"  AND {column} NOT IN (SELECT f.parent_checkpoint_id FROM checkpoints f"
        f" WHERE f.thread_id = {thread} AND f.checkpoint_ns = '' AND f.parent_checkpoint_id IS NOT NULL"
        " GROUP BY f.parent_checkpoint_id HAVING count(*) >= 2)\n"
        f"  AND {column} NOT IN (SELECT json_extract({meta}, '$.mycel_dashboard.' || k.key)"
        f" FROM checkpoints m, (SELECT 'target' AS key UNION ALL SELECT 'previous_head') k"
        f" WHERE m.thread_id = {thread} AND m.checkpoint_ns = '' AND json_valid({meta})"
        f" AND json_extract({meta}, '$.mycel_dashboard.' || k.key) IS NOT NULL)"
    )


def _sqlite_body(touched: Sequence[ThreadRetention]) -> list[str]:
    lines = ["BEGIN IMMEDIATE;", ""]
    for t in touched:
        thread = literal(t.thread_id, engine="sqlite")
        lines.append(f"-- thread {_comment(t.thread_id)}: {len(t.drops)} checkpoints")
        for ids in _chunks(t.drops):
            listed = ", ".join(literal(i, engine="sqlite") for i in ids)
            # Writes first: their guards read the checkpoints as they still are.
            for table in ("writes", "checkpoints"):
                lines.append(
                    f"DELETE FROM {table} WHERE thread_id = {thread} AND checkpoint_ns = ''"
                    f" AND checkpoint_id IN ({listed})\n{_sqlite_guards(thread, table + '.checkpoint_id')};"
                )
        lines.append("")
    lines += [
        "COMMIT;",
        "",
        "-- Deleted rows only become free pages; VACUUM rewrites the file so the space returns to the disk.",
        "VACUUM;",
        "PRAGMA wal_checkpoint(TRUNCATE);",
    ]
    return lines


# -- PostgreSQL: the saver's three tables, in the schema of the thread's layout --------------------------

_PG_TABLES = ("checkpoints", "checkpoint_writes", "checkpoint_blobs")


def _pg_guards(table: str, thread: str, column: str) -> str:
    return (
        f"  AND {column} < (SELECT max(h.checkpoint_id) FROM {table} h"
        f" WHERE h.thread_id = {thread} AND h.checkpoint_ns = '')\n"
        f"  AND {column} NOT IN (SELECT f.parent_checkpoint_id FROM {table} f"
        f" WHERE f.thread_id = {thread} AND f.checkpoint_ns = '' AND f.parent_checkpoint_id IS NOT NULL"
        " GROUP BY f.parent_checkpoint_id HAVING count(*) >= 2)\n"
        f"  AND {column} NOT IN (SELECT m.metadata->'mycel_dashboard'->>k.key FROM {table} m,"
        " (VALUES ('target'), ('previous_head')) AS k(key)"
        f" WHERE m.thread_id = {thread} AND m.checkpoint_ns = ''"
        " AND m.metadata->'mycel_dashboard'->>k.key IS NOT NULL)"
    )


def _postgres_body(touched: Sequence[ThreadRetention], target: ScriptTarget) -> list[str]:
    schemas = target.schemas or {}
    lines = ["BEGIN;", ""]
    for t in touched:
        schema = _ident(schemas[t.store])
        checkpoints, writes, blobs = (f"{schema}.{n}" for n in _PG_TABLES)
        thread = literal(t.thread_id, engine="postgresql")
        lines.append(
            f"-- thread {_comment(t.thread_id)} ({t.layout}, {_comment(t.store)}): {len(t.drops)} checkpoints"
        )
        for ids in _chunks(t.drops):
            listed = ", ".join(literal(i, engine="postgresql") for i in ids)
            for table, column in (
                (writes, f"{writes}.checkpoint_id"),
                (checkpoints, f"{checkpoints}.checkpoint_id"),
            ):
                lines.append(
                    f"DELETE FROM {table} WHERE thread_id = {thread} AND checkpoint_ns = ''"
                    f" AND checkpoint_id IN ({listed})\n{_pg_guards(checkpoints, thread, column)};"
                )
        for pairs in _chunks([_blob_pair(k) for k in t.frees_blobs]):
            listed = ", ".join(
                f"({literal(c, engine='postgresql')}, {literal(v, engine='postgresql')})" for c, v in pairs
            )
            # Blobs are shared: delete a version only when no checkpoint left in the thread names it.
            lines.append(
                f"DELETE FROM {blobs} b WHERE b.thread_id = {thread} AND b.checkpoint_ns = ''"
                f" AND (b.channel, b.version) IN ({listed})\n"
                f"  AND NOT EXISTS (SELECT 1 FROM {checkpoints} c WHERE c.thread_id = b.thread_id"
                " AND c.checkpoint_ns = b.checkpoint_ns"
                " AND c.checkpoint->'channel_versions'->>b.channel = b.version);"
            )
        lines.append("")
    lines += [
        "COMMIT;",
        "",
        "-- Plain VACUUM only marks the space reusable inside the tables; VACUUM FULL rewrites them and",
        "-- returns it to the operating system, holding an ACCESS EXCLUSIVE lock on each table while it runs",
        "-- (nothing can read them meanwhile: another reason to stop Mycel). It cannot run in a transaction.",
    ]
    for schema in sorted({schemas[t.store] for t in touched}):
        for name in _PG_TABLES:
            lines.append(f"VACUUM FULL {_ident(schema)}.{name};")
    return lines


def _blob_pair(key: str) -> tuple[str, str]:
    # The inverse of facts.blob_key(): channel names hold no NUL.
    channel, _, version = key.partition("\x00")
    return channel, version

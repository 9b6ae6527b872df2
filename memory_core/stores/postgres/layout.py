"""Which of Mycel's checkpoint layouts a PostgreSQL database holds (reference mycel-dev.md §2).

- dev: AsyncPostgresSaver's tables in schema `agent` (Mycel dev's QueryLoop: six channels, all in
  `checkpoint_blobs`, no parent ids, metadata `{source, step}`);
- main: the same saver's tables in whatever schema the URL's search_path selects first (Mycel main with
  LEON_STORAGE_STRATEGY=supabase: graph channels, primitives inline in `channel_values`).

A database in the middle of a migration holds both; each is labelled. Only the layouts of
langgraph-checkpoint-postgres 3.0 are read: another version's migrations are refused, not misread.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.records import ProblemKind, StoreProblem
from memory_core.stores.postgres.connect import PgRead

DEV_SCHEMA = "agent"
# `checkpoint_migrations` rows 0..9 after langgraph-checkpoint-postgres 3.0's setup() (reference §2.2).
KNOWN_MIGRATION = 9
_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")
_COLUMNS = {
    "checkpoints": {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "checkpoint",
        "metadata",
    },
    "checkpoint_blobs": {"thread_id", "checkpoint_ns", "channel", "version", "type", "blob"},
}


@dataclass(frozen=True, slots=True)
class PostgresLayout:
    schema: str
    layout: str  # "dev" or "main"
    migration: int | None  # the highest `checkpoint_migrations.v`

    @property
    def label(self) -> str:
        return f"{self.layout} (schema {self.schema})"

    def table(self, name: str) -> str:
        """A schema-qualified table name: no reliance on the session's search_path (PgBouncer)."""
        return f'"{self.schema.replace(chr(34), chr(34) * 2)}".{name}'


def detect_layouts(read: PgRead) -> tuple[list[PostgresLayout], list[StoreProblem]]:
    """Every Mycel layout in the database (dev first), and why a candidate was refused."""
    # pg_catalog, not information_schema: the latter hides tables we may not read, which would turn a
    # missing GRANT into "no such table". The search_path rides on the same answer (every read asks this
    # first, so a round trip saved here is saved on each); a row with no table when no table matched.
    found = read.rows(
        "SELECT current_schemas(false), t.* FROM (SELECT 1) AS one LEFT JOIN ("
        "SELECT n.nspname, c.relname, (SELECT array_agg(a.attname::text) FROM pg_attribute a "
        "WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), "
        "has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') "
        "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relname = ANY(%s) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')) AS t ON true",
        (list(_TABLES),),
        capped=False,  # one row per Mycel table in the database: bounded by its schemas
    )
    search_path = [str(s) for s in found[0][0]] if found else []
    by_schema: dict[str, dict[str, set[str]]] = {}
    unreadable: dict[str, list[str]] = {}
    for _, schema, table, columns, readable in found:
        if schema is None:
            continue  # the one row of a database with no such table
        by_schema.setdefault(str(schema), {})[str(table)] = set(columns or ())
        if not readable:
            unreadable.setdefault(str(schema), []).append(str(table))
    candidates: list[tuple[str, str]] = []
    if DEV_SCHEMA in by_schema:
        candidates.append((DEV_SCHEMA, "dev"))
    main_schema = next((s for s in search_path if s in by_schema and s != DEV_SCHEMA), None)
    if main_schema is not None:
        candidates.append((main_schema, "main"))
    layouts: list[PostgresLayout] = []
    problems: list[StoreProblem] = []
    for schema, name in candidates:
        if schema in unreadable:
            tables = ", ".join(f"{schema}.{t}" for t in sorted(unreadable[schema]))
            denied = f"this role may not SELECT from {tables} (see the README's read-only role)"
            problems.append(
                StoreProblem(ProblemKind.DENIED, "main", f"{name} layout in schema {schema}: {denied}")
            )
            continue
        why = _refusal(read, schema, by_schema[schema])
        if why is None:
            layouts.append(PostgresLayout(schema, name, KNOWN_MIGRATION))  # _refusal refuses any other
        else:
            problems.append(
                StoreProblem(ProblemKind.UNKNOWN_SCHEMA, "main", f"{name} layout in schema {schema}: {why}")
            )
    if not candidates:
        where = ", ".join(search_path) or "(empty)"
        problems.append(
            StoreProblem(
                ProblemKind.MISSING_TABLE,
                "main",
                f"no LangGraph checkpoints table in schema {DEV_SCHEMA} or the search_path ({where})",
            )
        )
    return layouts, problems


def _refusal(read: PgRead, schema: str, tables: dict[str, set[str]]) -> str | None:
    for table, needed in _COLUMNS.items():
        if table not in tables:
            return f"no {table} table"
        lacking = sorted(needed - tables[table])
        if lacking:
            return f"{table} lacks {', '.join(lacking)} (not langgraph-checkpoint-postgres 3.0's layout)"
    if "checkpoint_migrations" not in tables:
        return "no checkpoint_migrations table (not written by AsyncPostgresSaver.setup())"
    version = _migration(read, schema)
    if version != KNOWN_MIGRATION:
        return (
            f"checkpoint_migrations is at v{version}; this dashboard reads the layout of "
            f"langgraph-checkpoint-postgres 3.0 (v{KNOWN_MIGRATION})"
        )
    return None


def _migration(read: PgRead, schema: str) -> int | None:
    row = read.one(f"SELECT max(v) FROM {PostgresLayout(schema, '', None).table('checkpoint_migrations')}")
    return int(row[0]) if row and row[0] is not None else None

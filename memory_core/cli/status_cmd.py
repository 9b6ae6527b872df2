"""`mycel-memory status [--json]`: which engine holds each of Mycel's stores, where (passwords masked),
in which schema and layout.

Checkpoints are in PostgreSQL when LEON_POSTGRES_URL is set (dev's schema `agent`, main's search_path
schema, or both during a migration), else in leon.db; the other stores are SQLite files for now.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.cli.common import CliError, print_json
from memory_core.cli.table import print_table
from memory_core.records import StoreProblem
from memory_core.stores.locations import MycelLocations, StoreRole, resolve_locations

_TIMEOUT_S = 5.0


def store_lines(locations: MycelLocations) -> list[dict[str, Any]]:
    """One line per store: engine, location, schema, layout, LangGraph migration, problem."""
    lines: list[dict[str, Any]] = []
    if locations.postgres_url:
        from memory_core.stores.postgres.backend import PostgresBackend  # psycopg only when it is used

        backend = PostgresBackend(locations, query_timeout_s=_TIMEOUT_S, row_cap=1000)
        layouts, problems = backend.layouts()
        for layout in layouts:
            lines.append(
                _line(
                    "checkpoints",
                    "postgresql",
                    backend.masked_url,
                    layout.schema,
                    layout.layout,
                    layout.migration,
                )
            )
        for problem in problems:
            lines.append(_line("checkpoints", "postgresql", backend.masked_url, None, None, None, problem))
    for role, path in locations.databases().items():
        if role is StoreRole.MAIN and locations.postgres_url and not path.exists():
            continue  # leon.db is then only a side store Mycel may never have made
        name = "main (sqlite)" if role is StoreRole.MAIN else None
        present = None if path.exists() else "absent"
        lines.append(_line(role.value, "sqlite", str(path), None, name, None, note=present))
    return lines


def _line(
    store: str,
    engine: str,
    location: str,
    schema: str | None,
    layout: str | None,
    migration: int | None,
    problem: StoreProblem | None = None,
    *,
    note: str | None = None,
) -> dict[str, Any]:
    return {
        "store": store,
        "engine": engine,
        "location": location,
        "schema": schema,
        "layout": layout,
        "migration": migration,
        "problem": problem.message if problem is not None else note,
        "problem_kind": problem.kind.value if problem is not None else None,
    }


def postgres_unreadable(locations: MycelLocations) -> StoreProblem | None:
    """Why no checkpoint layout can be read at LEON_POSTGRES_URL (None when one can, or it is unset)."""
    if not locations.postgres_url:
        return None
    from memory_core.stores.postgres.backend import PostgresBackend

    layouts, problems = PostgresBackend(locations, query_timeout_s=_TIMEOUT_S, row_cap=1000).layouts()
    return problems[0] if not layouts and problems else None


def run_status(args: argparse.Namespace) -> int:
    lines = store_lines(resolve_locations())
    if args.json:
        print_json(lines)
    else:
        print_table(
            ("STORE", "ENGINE", "SCHEMA", "LAYOUT", "LOCATION", "PROBLEM"),
            [
                (
                    line["store"],
                    line["engine"],
                    line["schema"] or "",
                    line["layout"] or "",
                    line["location"],
                    line["problem"] or "",
                )
                for line in lines
            ],
        )
    failed = [line for line in lines if line["store"] == "checkpoints" and line["problem_kind"]]
    if failed and not any(line["store"] == "checkpoints" and not line["problem_kind"] for line in lines):
        raise CliError(failed[0]["problem"])
    return 0

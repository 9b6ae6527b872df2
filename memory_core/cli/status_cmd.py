"""`mycel-memory status [--json]`: which engine holds each of Mycel's stores, where (passwords masked),
in which schema and layout.

Checkpoints are in PostgreSQL when LEON_POSTGRES_URL is set (dev's schema `agent`, main's search_path
schema, or both during a migration), else in leon.db; the other stores are SQLite files for now.
"""

from __future__ import annotations

import argparse

from memory_core.app.status import store_lines
from memory_core.cli.common import CliError, print_json
from memory_core.cli.table import print_table
from memory_core.stores.locations import resolve_locations


def run_status(args: argparse.Namespace) -> int:
    locations = resolve_locations()
    lines = store_lines(locations)
    index = args.fleet_index()
    if index is not None:
        from memory_core.app.fleet_index import index_line
        from memory_core.stores.reader import MycelReader

        lines.append(index_line(MycelReader(locations), index))
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

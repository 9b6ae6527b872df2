"""What every reading subcommand does first and last: open the reader the environment names, refuse when
no Mycel data is there, and print the problems met on stderr (JSON stays on stdout)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable

from memory_core.app.kept_reports import Kept, indexed_report
from memory_core.cli.table import printable
from memory_core.records import StoreProblem, loud_messages
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list.derived import default_folder


def open_reader(*, row_cap: int = 100_000) -> MycelReader:
    """The reader of the Mycel home the environment names (LEON_DB_PATH, LEON_POSTGRES_URL…)."""
    return MycelReader(resolve_locations(), facts_folder=default_folder(os.environ), row_cap=row_cap)


def kept_report(args: argparse.Namespace, reader: MycelReader, report: str) -> Kept | None:
    """A Context report as the dashboard's fleet index last summed it (what its tab shows), None without an
    index or a sum; the CLI leaves any catching up to the dashboard's builder."""
    index = args.fleet_index()
    if index is None:
        return None
    return indexed_report(reader, index, report, read_later=lambda full: None)


def warn(problems: Iterable[StoreProblem]) -> None:
    warn_lines(loud_messages(problems))


def warn_lines(lines: Iterable[str]) -> None:
    for line in dict.fromkeys(lines):
        print(f"mycel-memory: warning: {printable(line)}", file=sys.stderr)

"""What every reading subcommand does first and last: open the reader the environment names, refuse when
no Mycel data is there, and print the problems met on stderr (JSON stays on stdout)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from memory_core.cli.common import CliError
from memory_core.cli.table import printable
from memory_core.records import StoreProblem, loud_messages
from memory_core.stores.locations import MycelLocations, resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list.derived import default_folder


def open_reader() -> MycelReader:
    """The reader of the Mycel home the environment names (LEON_DB_PATH, LEON_POSTGRES_URL…)."""
    return MycelReader(resolve_locations(), facts_folder=default_folder(os.environ))


def require_data(locations: MycelLocations) -> None:
    """No Mycel file at all where the variables point: say where we looked, rather than list nothing."""
    if locations.postgres_url:
        from memory_core.cli.status_cmd import postgres_unreadable

        # Checkpoints in PostgreSQL: no readable layout there is the error, said as the server said it.
        problem = postgres_unreadable(locations)
        if problem is not None:
            raise CliError(problem.message)
        return
    if not any(path.exists() for path in locations.databases().values()):
        raise CliError(
            f"no Mycel data: {locations.main} does not exist (set LEON_DB_PATH to Mycel's leon.db; "
            "LEON_SANDBOX_DB_PATH and LEON_QUEUE_DB_PATH for the other stores)"
        )


def warn(problems: Iterable[StoreProblem]) -> None:
    warn_lines(loud_messages(problems))


def warn_lines(lines: Iterable[str]) -> None:
    for line in dict.fromkeys(lines):
        print(f"mycel-memory: warning: {printable(line)}", file=sys.stderr)

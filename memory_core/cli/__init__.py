"""`mycel-memory`: the engine from the command line, for scripts and CI.

Every subcommand's arguments are defined in `parsers.py`; its handler lives in its own module, imported
only when that command runs, and returns the exit code. Errors a user can cause end with one clear line
on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memory_core.app.audit import AuditSink, NoAuditSink
from memory_core.app.errors import AppError, BadValue
from memory_core.cli import parsers

if TYPE_CHECKING:  # the index's module only when a command opens it
    from memory_core.app.fleet_index import FleetIndexStore


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mycel-memory",
        description="Inspect and steer the memory of Mycel agents (pruning, compaction, checkpoints).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parsers.add_subcommands(subparsers)
    return parser


def _handler(name: str) -> Callable[[argparse.Namespace], int]:
    module, function = name.split(":")
    found: Callable[[argparse.Namespace], int] = getattr(importlib.import_module(module), function)
    return found


def main(
    argv: Sequence[str] | None = None,
    *,
    audit: AuditSink | None = None,
    fleet_index: Callable[[], FleetIndexStore | None] | None = None,
) -> int:
    """Run one command; `audit` records the audited writes (none: they are refused, see NoAuditSink);
    `fleet_index` opens the dashboard's fleet index when a command can use it (none: lists in memory)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.audit = audit or NoAuditSink()
    args.fleet_index = fleet_index or (lambda: None)
    try:
        code: int = _handler(args.handler)(args)
    except BadValue as exc:
        print(f"mycel-memory: error: {exc.spelled('--' + exc.option.replace('_', '-'))}", file=sys.stderr)
        return 2
    except AppError as exc:
        print(f"mycel-memory: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())

"""`mycel-memory`: the engine from the command line, for scripts and CI.

Each subcommand lives in its own module with `register(subparsers)`; a handler returns the exit code.
Errors a user can cause end with one clear line on stderr and a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from memory_core.cli import common

_SUBCOMMAND_MODULES = ("plan", "threads", "actions", "config_cmd")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mycel-memory",
        description="Inspect and steer the memory of Mycel agents (pruning, compaction, checkpoints).",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    import importlib

    for name in _SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(f"memory_core.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"memory_core.cli.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except common.CliError as exc:
        print(f"mycel-memory: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())

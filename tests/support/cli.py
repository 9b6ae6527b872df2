"""The one way a test runs `mycel-memory`: in this process, through the engine's command line
(memory_core.cli.main), with pytest's capsys holding what it prints.

The console script (mycel_dashboard.cli:main) is the same function with the dashboard's audit log as its sink,
which only a write reaches; here writes go to a KeptAuditLog, and a test of the dashboard's log calls the
console script's main itself. A test that needs a whole process (the
exit status as a shell sees it, what gets imported, argv as bytes) runs `python -m memory_core` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from memory_core.app.audit import AuditSink
from memory_core.app.fleet_index import FleetIndexStore
from memory_core.cli import main
from tests.support.audit import KeptAuditLog


class CliRun(NamedTuple):
    code: int
    out: str
    err: str


def run_cli(
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    audit: AuditSink | None = None,
    fleet_index: Callable[[], FleetIndexStore | None] | None = None,
) -> CliRun:
    """`mycel-memory ARGV`: its exit code and what it printed to stdout and to stderr. Its audited writes
    go to `audit` (a KeptAuditLog of its own when not given); `fleet_index` opens the dashboard's fleet
    index as the console script does (none: the command reads the stores)."""
    capsys.readouterr()  # what ran before is not this command's output
    code = main(list(argv), audit=audit if audit is not None else KeptAuditLog(), fleet_index=fleet_index)
    out, err = capsys.readouterr()
    return CliRun(code, out, err)


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """`mycel-memory ARGV`, ARGV holding --json, which must exit 0: its output, parsed."""
    assert "--json" in argv, f"{argv} prints no JSON"
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    return json.loads(out)


def kept_main(argv: list[str], audit: KeptAuditLog | None = None) -> int:
    """`mycel-memory ARGV`'s exit code, printing as it does; its audited writes go to `audit` (a
    KeptAuditLog of its own when not given)."""
    return main(argv, audit=audit if audit is not None else KeptAuditLog())

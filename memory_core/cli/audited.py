"""How a command writes what the audit log must know of first: its intent recorded, then the write, then
its outcome (memory_core/app/audit.py); a write whose intent cannot be recorded is not made."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from memory_core.app.audit import Audited, AuditRecord, audited_write, shell_actor
from memory_core.cli.common import CliError
from memory_core.cli.reading import warn_lines
from memory_core.cli.table import printable

T = TypeVar("T")


def actor_of(args: argparse.Namespace) -> str:
    """`--actor` when given, else the shell user."""
    return str(getattr(args, "actor", None) or shell_actor())


def run_audited(
    args: argparse.Namespace,
    intent: AuditRecord,
    write: Callable[[], T],
    *,
    outcome: Callable[[T], tuple[str, Mapping[str, Any]]],
    refusals: tuple[type[Exception], ...] = (),
) -> T:
    """`write()` under `args.audit`, the sink the entry point supplied; says so when its outcome could
    not be recorded (the write stands)."""
    done: Audited[T] = audited_write(args.audit, intent, write, outcome=outcome, refusals=refusals)
    note = done.note()
    if note is not None:
        warn_lines([note])
    return done.value


def write_text_audited(
    args: argparse.Namespace,
    *,
    action: str,
    text: str,
    output: str | None,
    message: str,
    summary: Mapping[str, Any],
    thread_id: str = "",
) -> None:
    """Write `text` to `output` (stdout for None or "-"), recorded in the audit log first."""
    to_stdout = output in (None, "-")
    where = "stdout" if to_stdout else str(Path(str(output)).resolve())
    intent = AuditRecord(
        action=action, actor=actor_of(args), target=where, thread_id=thread_id, message=message, after=summary
    )

    def write() -> None:
        if to_stdout:
            sys.stdout.write(text)
        else:
            Path(str(output)).write_text(text, encoding="utf-8")

    try:
        run_audited(args, intent, write, outcome=lambda _: (message, summary))
    except OSError as exc:
        raise CliError(f"cannot write {printable(str(output))}: {exc.strerror or exc}") from None
    if not to_stdout:
        print(f"mycel-memory: wrote {printable(where)} (recorded in the audit log)", file=sys.stderr)

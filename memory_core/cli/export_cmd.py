"""`mycel-memory export THREAD_ID [--format json|md] [--checkpoint ID] [-o FILE]`: a thread taken elsewhere.

The bundle is memory_core/app/export.py's (redacted, self-contained), the transcript its Markdown. The
export is recorded in the dashboard's audit log first, as `retention --export` does: an export that
cannot be recorded is not written.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.app.audit import AuditRecord, shell_actor
from memory_core.app.export import FORMATS, ExportError, export_bundle, export_summary, export_text
from memory_core.app.status import require_data
from memory_core.cli.common import CliError
from memory_core.cli.reading import open_reader
from memory_core.cli.table import printable


def run_export(args: argparse.Namespace) -> int:
    if args.format not in FORMATS:
        raise CliError(f"--format: must be json or md, got {printable(repr(args.format))}")
    reader = open_reader()
    require_data(reader.locations)
    try:
        bundle = export_bundle(
            reader, args.thread_id, checkpoint_id=args.checkpoint, exported_at=datetime.now(UTC)
        )
    except ExportError as exc:
        raise CliError(printable(str(exc))) from None
    text = export_text(bundle, args.format)
    where = "stdout" if args.output in (None, "-") else str(Path(args.output).resolve())
    actor = str(args.actor or shell_actor())
    summary = export_summary(bundle, args.format)
    _record(args, actor, where, summary)
    if where == "stdout":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        _record(args, actor, where, summary, failed=f"could not write: {exc.strerror or exc}")
        raise CliError(f"cannot write {printable(args.output)}: {exc.strerror or exc}") from None
    print(
        f"mycel-memory: wrote the export to {printable(where)} (recorded in the audit log)", file=sys.stderr
    )
    return 0


def _record(
    args: argparse.Namespace, actor: str, where: str, summary: dict[str, Any], *, failed: str | None = None
) -> None:
    message = f"thread exported as {summary['format']}: {summary['messages']} messages at {summary['checkpoint_id']}"
    args.audit.record(
        AuditRecord(
            action="export",
            actor=actor,
            target=where,
            message=message,
            after=summary,
            thread_id=args.thread_id,
            failed=failed,
        )
    )

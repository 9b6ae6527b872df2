"""`mycel-memory export THREAD_ID [--format json|md] [--checkpoint ID] [-o FILE]`: a thread taken elsewhere.

The bundle is memory_core/app/export.py's (redacted, self-contained), the transcript its Markdown. The
export is recorded in the dashboard's audit log first, as `retention --export` does: an export that
cannot be recorded is not written.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.app.export import ExportError, export_bundle
from memory_core.cli.audit_log import record_export
from memory_core.cli.common import CliError
from memory_core.cli.reading import open_reader, require_data
from memory_core.cli.table import printable
from memory_core.export.markdown import bundle_markdown

FORMATS = ("json", "md")


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
    actor = str(args.actor or f"cli:{os.environ.get('USER') or getpass.getuser()}")
    summary = export_summary(bundle, args.format)
    _record(actor, args.thread_id, where, summary)
    if where == "stdout":
        sys.stdout.write(text)
        return 0
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        _record(actor, args.thread_id, where, summary, failed=f"could not write: {exc.strerror or exc}")
        raise CliError(f"cannot write {printable(args.output)}: {exc.strerror or exc}") from None
    print(
        f"mycel-memory: wrote the export to {printable(where)} (recorded in the audit log)", file=sys.stderr
    )
    return 0


def export_text(bundle: dict[str, Any], fmt: str) -> str:
    """The file's text: the bundle as JSON, or its Markdown transcript (the page downloads the same)."""
    if fmt == "md":
        return bundle_markdown(bundle)
    return json.dumps(bundle, ensure_ascii=False, indent=2) + "\n"


def export_summary(bundle: dict[str, Any], fmt: str) -> dict[str, Any]:
    """What the audit row keeps of an export: which checkpoint, how much, in which format."""
    return {
        "format": fmt,
        "checkpoint_id": bundle["checkpoint_id"],
        "messages": len(bundle["messages"]),
        "calls": len(bundle["calls"]),
        "summaries": len(bundle["summaries"]),
    }


def _record(
    actor: str, thread_id: str, where: str, summary: dict[str, Any], *, failed: str | None = None
) -> None:
    message = f"thread exported as {summary['format']}: {summary['messages']} messages at {summary['checkpoint_id']}"
    record_export(
        "export", actor, target=where, message=message, after=summary, thread_id=thread_id, failed=failed
    )

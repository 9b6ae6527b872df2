"""`mycel-memory export THREAD_ID [--format json|md] [--checkpoint ID] [-o FILE]`: a thread taken elsewhere.

The bundle is memory_core/app/export.py's (redacted, self-contained), the transcript its Markdown. The
export is recorded in the dashboard's audit log first, as `retention --export` does: an export that
cannot be recorded is not written.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from memory_core.app.export import FORMATS, ExportError, export_bundle, export_summary, export_text
from memory_core.app.status import require_data
from memory_core.cli.audited import write_text_audited
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
    summary = export_summary(bundle, args.format)
    write_text_audited(
        args,
        action="export",
        text=export_text(bundle, args.format),
        output=args.output,
        message=f"thread exported as {args.format}: {summary['messages']} messages at {summary['checkpoint_id']}",
        summary=summary,
        thread_id=args.thread_id,
    )
    return 0

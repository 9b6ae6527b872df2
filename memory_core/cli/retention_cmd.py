"""`mycel-memory retention --keep-last K | --heads-only | --idle-days D [--json] [--export FILE]`: a dry-run.

Plans the policy (memory_core/app/retention.py, as the retention page shows it) and prints what each
thread frees, keeps (and why) and drops. Nothing is deleted: --export writes the plan as a SQL script to run
with Mycel stopped, and records the export in the dashboard's audit log first; an export that cannot be
recorded is not written.
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_core import figures
from memory_core.app.retention import RetentionDryRun, retention_dry_run
from memory_core.app.status import require_data
from memory_core.cli.audited import write_text_audited
from memory_core.cli.common import CliError, print_json
from memory_core.cli.reading import open_reader, warn
from memory_core.cli.table import one_line, print_table, short_id
from memory_core.footprint.retention import (
    ALWAYS_KEPT,
    NO_WHOLE_THREADS,
    RetentionPolicy,
    RetentionPolicyError,
    export_summary,
    plan_as_dict,
)
from memory_core.footprint.script import ScriptError, retention_script

# The terminal shows the threads that free the most; --json has every one.
_TOP = 20


def policy_from_flags(args: argparse.Namespace) -> RetentionPolicy:
    try:
        return RetentionPolicy.parse(
            keep_last=args.keep_last, heads_only=args.heads_only, idle_days=args.idle_days
        )
    except RetentionPolicyError as exc:
        raise CliError(str(exc)) from None


def run_retention(args: argparse.Namespace) -> int:
    policy = policy_from_flags(args)
    reader = open_reader()
    require_data(reader.locations)
    run = retention_dry_run(reader, policy)
    warn(run.problems)
    if args.export is not None:
        _export(args, run)
    data = plan_as_dict(run.plan)
    if args.export == "-":
        return 0  # stdout holds the script
    if args.json:
        print_json(data)
        return 0
    _print_plan(data)
    return 0


def _print_plan(data: dict[str, Any]) -> None:
    totals = data["totals"]
    print(f"Policy: {data['policy_text']}.")
    print(
        f"Frees {figures.size(totals['frees_bytes'])} ({figures.size_exact(totals['frees_bytes'])}): drops "
        f"{figures.count(totals['drops'])} checkpoints in {figures.count(totals['threads_touched'])} of "
        f"{figures.count(totals['threads'])} threads, keeps {figures.count(totals['keeps'])}."
    )
    print(ALWAYS_KEPT)
    print(NO_WHOLE_THREADS)
    print("Nothing is deleted: export the script (--export FILE) and run it with Mycel stopped.")
    touched = [t for t in data["threads"] if t["drops"]]
    if not touched:
        return
    print()
    rows = []
    for t in touched[:_TOP]:
        reasons: dict[str, int] = {}
        for kept in t["keeps"]:
            reasons[kept["reason"]] = reasons.get(kept["reason"], 0) + 1
        lost = t["unreachable"]
        rows.append(
            [
                short_id(t["thread_id"]),
                figures.size(t["frees_bytes"]),
                figures.count(len(t["drops"])),
                figures.count(len(t["keeps"])),
                one_line("; ".join(f"{why} x{n}" if n > 1 else why for why, n in reasons.items()), 60),
                figures.count(
                    len(lost["file_operations"]) + len(lost["run_events"]) + len(lost["summaries"])
                ),
            ]
        )
    print_table(["THREAD", "FREES", "DROPS", "KEEPS", "KEPT BECAUSE", "UNREACHABLE"], rows)
    if len(touched) > _TOP:
        print(f"… and {figures.count(len(touched) - _TOP)} more threads (--json lists every one)")


def _export(args: argparse.Namespace, run: RetentionDryRun) -> None:
    try:
        script = retention_script(run.plan, run.target)
    except ScriptError as exc:
        raise CliError(str(exc)) from None
    summary = export_summary(run.plan, engine=run.target.engine, location=run.target.location)
    write_text_audited(
        args,
        action="retention_export",
        text=script,
        output=args.export,
        message=f"retention script exported: {summary['totals']['drops']} checkpoints to drop",
        summary=summary,
    )

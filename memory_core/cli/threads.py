"""`mycel-memory threads` and `mycel-memory thread THREAD_ID`: the fleet list and one thread's detail
(memory_core/app/fleet.py, memory_core/app/thread.py), printed."""

from __future__ import annotations

import argparse
from typing import Any

from memory_core import figures
from memory_core.app.errors import UnknownThread
from memory_core.app.fleet import fleet_rows
from memory_core.app.inputs import parse_rules_name
from memory_core.app.status import missing_checkpoints, require_data
from memory_core.app.thread import thread_detail
from memory_core.cli.common import CliError, print_json
from memory_core.cli.reading import open_reader, warn, warn_lines
from memory_core.cli.table import one_line, print_table, printable, short_id
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite.connect import EVERY_ROW


def run_threads(args: argparse.Namespace) -> int:
    reader = open_reader(row_cap=EVERY_ROW)  # every thread is listed: no row cap decides what a fleet holds
    require_data(reader.locations)
    rows, problems = _listed(reader, args)
    missing = missing_checkpoints(reader.locations)
    if missing is not None and not rows:
        raise CliError(missing)  # one line, exit 2: an empty list would say "no threads", not "wrong path"
    warn(problems)
    if missing is not None:
        # Summaries, queued items or sandboxes elsewhere still name threads: listed, but said apart.
        warn_lines([f"{missing}; the threads below are only those the other stores name"])
    if args.json:
        print_json(rows)
        return 0
    print_table(
        ("THREAD", "NAME", "MODEL", "MSGS", "CKPTS", "SUMM", "QUEUED", "BYTES", "UPDATED"),
        [
            (
                short_id(r["thread_id"]),
                r["name"] or "",
                r["model"] or "",
                figures.count(r["messages"]),
                figures.count(r["checkpoints"]),
                f"{figures.count(r['summaries'])}{'*' if r['active_summary'] else ''}",
                figures.count(r["queued"]),
                figures.size(r["bytes_on_disk"]),
                r["updated_at"][:19],
            )
            for r in rows
        ],
    )
    if not rows:
        print("(no threads)")
    elif any(r["active_summary"] for r in rows):
        print("SUMM: summary rows of the thread; * one of them is active (Mycel's context starts with it)")
    return 0


def _listed(reader: MycelReader, args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[StoreProblem]]:
    """From the dashboard's fleet index when it is built (the same one the pages read), else in memory."""
    index = args.fleet_index()
    if index is not None:
        from memory_core.app.fleet_index import indexed_fleet_rows

        found = indexed_fleet_rows(reader, index)
        if found is not None:
            return found
    return fleet_rows(reader)


def run_thread(args: argparse.Namespace) -> int:
    reader = open_reader()
    require_data(reader.locations)
    try:
        found = thread_detail(reader, args.thread_id, rules=parse_rules_name(args.rules))
    except UnknownThread as exc:
        warn(exc.problems)
        raise
    warn(found.problems)
    warn_lines(found.warnings)
    row, data = found.row, found.data
    if args.json:
        print_json(found.answer())
        return 0
    overtaken = data["rollback_overtaken"]
    if overtaken is not None:
        warn_lines(
            [
                f"the rollback {overtaken['rollback_checkpoint_id']} by {overtaken['actor']} is no "
                f"longer active: the agent went on from {overtaken['continued_from']}"
            ]
        )
    _print_thread(row, data)
    return 0


def _print_thread(row: ThreadRow, data: dict[str, Any]) -> None:
    print(printable(f"thread   {row.thread_id}  {row.name or ''}"))
    print(printable(f"model    {row.model or '-'}"))
    print(
        printable(
            f"head     {row.head_checkpoint_id or '-'}  ({figures.count(row.checkpoints)} checkpoints, "
            f"{figures.size(row.bytes_on_disk)})"
        )
    )
    print()
    print(f"messages at the head ({len(data['messages'])})")
    print_table(
        ("#", "TYPE", "ID", "CHARS", "EST", "TIKTOKEN"),
        [
            (
                m["index"],
                m["type"],
                m["id"] or "",
                figures.count(m["chars"]),
                figures.count(m["estimated_tokens"]),
                figures.count(m["tiktoken_tokens"]),
            )
            for m in data["messages"]
        ],
    )
    print()
    print(f"checkpoints, newest first ({len(data['checkpoints'])})")
    print_table(
        ("CHECKPOINT", "PARENT", "STEP", "SOURCE", "MSGS", "EST", "TIKTOKEN", "INPUT"),
        [
            (
                c["checkpoint_id"],
                c["parent_checkpoint_id"] or "",
                "" if c["step"] is None else c["step"],
                c["source"] or "",
                "unreadable" if not c["readable"] else figures.count(c["messages"]),
                "" if c["estimated_tokens"] is None else figures.count(c["estimated_tokens"]),
                "" if c["tiktoken_tokens"] is None else figures.count(c["tiktoken_tokens"]),
                "" if c["input_tokens"] is None else figures.count(c["input_tokens"]),
            )
            for c in data["checkpoints"]
        ],
    )
    print()
    print(f"summaries ({len(data['summaries'])})")
    print_table(
        ("SUMMARY", "UP TO", "ACTIVE", "SPLIT", "STORE"),
        [
            (s["summary_id"], s["compact_up_to_index"], s["is_active"], s["is_split_turn"], s["store"])
            for s in data["summaries"]
        ],
    )
    print()
    print(f"queue ({len(data['queue'])})")
    print_table(
        ("ID", "TYPE", "CONTENT"),
        [(q["id"], q["notification_type"], one_line(q["content"])) for q in data["queue"]],
    )

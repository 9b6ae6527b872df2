"""`mycel-memory threads` and `mycel-memory thread THREAD_ID`: Mycel's threads from the command line.

Reads the same environment variables as Mycel (LEON_DB_PATH, LEON_SANDBOX_DB_PATH, LEON_QUEUE_DB_PATH…).
Problems met while reading (a missing file, a damaged checkpoint) go to stderr; JSON stays on stdout.
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memory_core.cli.common import CliError, print_json
from memory_core.messages import Message
from memory_core.records import ProblemKind, StoreProblem, ThreadRow
from memory_core.rollback import overtaken_rollback
from memory_core.stores.derived import default_folder
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.tokens import content_chars, default_counter, estimate_message_tokens

# Files that are often simply absent; saying so on every command would bury real problems.
_QUIET_KINDS = (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)


def _reader() -> MycelReader:
    return MycelReader(resolve_locations(), facts_folder=default_folder(os.environ))


def _warn(problems: Iterable[StoreProblem]) -> None:
    for problem in dict.fromkeys(problems):
        if problem.kind not in _QUIET_KINDS:
            print(f"mycel-memory: warning: {problem.message}", file=sys.stderr)


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def thread_json(row: ThreadRow) -> dict[str, Any]:
    return {
        "thread_id": row.thread_id,
        "messages": row.messages,
        "checkpoints": row.checkpoints,
        "head_checkpoint_id": row.head_checkpoint_id,
        "updated_at": _iso(row.updated_at),
        "summaries": row.summaries,
        "active_summary": row.active_summary,
        "queued": row.queued,
        "name": row.name,
        "model": row.model,
        "bytes_on_disk": row.bytes_on_disk,
        "sandbox_state": row.sandbox_state,
    }


def run_threads(args: argparse.Namespace) -> int:
    result = _reader().list_threads()
    _warn(result.problems)
    rows = [thread_json(r) for r in result.value]
    if args.json:
        print_json(rows)
        return 0
    _print_table(
        ("THREAD", "NAME", "MODEL", "MSGS", "CKPTS", "SUMM", "QUEUED", "BYTES", "UPDATED"),
        [
            (
                r["thread_id"],
                r["name"] or "",
                r["model"] or "",
                r["messages"],
                r["checkpoints"],
                f"{r['summaries']}{'*' if r['active_summary'] else ''}",
                r["queued"],
                f"{r['bytes_on_disk']:,}",
                r["updated_at"][:19],
            )
            for r in rows
        ],
    )
    if not rows:
        print("(no threads)")
    return 0


def _message_json(index: int, message: Message, count: Any) -> dict[str, Any]:
    return {
        "index": index,
        "type": message.type.value,
        "id": message.id,
        "chars": content_chars(message.content),
        "estimated_tokens": estimate_message_tokens(message),
        "tiktoken_tokens": count(message.text),
    }


def run_thread(args: argparse.Namespace) -> int:
    reader = _reader()
    thread_id: str = args.thread_id
    found = reader.get_thread(thread_id)
    if found.value is None:
        _warn(found.problems)
        raise CliError(f"unknown thread {thread_id!r}: no Mycel store has it")
    row = found.value
    problems: list[StoreProblem] = list(found.problems)
    state = reader.get_state(thread_id) if row.head_checkpoint_id else None
    checkpoints = reader.list_checkpoints(thread_id)
    summaries = reader.list_summaries(thread_id)
    queue = reader.list_queue(thread_id)
    for part in (state, checkpoints, summaries, queue):
        if part is not None:
            problems.extend(part.problems)
    _warn(problems)
    count = default_counter().count
    messages = state.value.messages if state is not None and state.value is not None else ()
    data: dict[str, Any] = {
        "thread_id": row.thread_id,
        "head_checkpoint_id": row.head_checkpoint_id,
        "name": row.name,
        "model": row.model,
        "messages": [_message_json(i, m, count) for i, m in enumerate(messages)],
        "checkpoints": [
            {
                "checkpoint_id": c.checkpoint_id,
                "parent_checkpoint_id": c.parent_checkpoint_id,
                "step": c.step,
                "source": c.source,
                "messages": c.messages,
                "estimated_tokens": c.estimated_tokens,
                "tiktoken_tokens": c.tiktoken_tokens,
                "input_tokens": c.input_tokens,
                "created_at": _iso(c.created_at),
                "readable": c.readable,
            }
            for c in checkpoints.value
        ],
        "summaries": [
            {
                "summary_id": s.summary_id,
                "compact_up_to_index": s.compact_up_to_index,
                "is_active": s.is_active,
                "is_split_turn": s.is_split_turn,
                "compacted_at": s.compacted_at,
                "created_at": _iso(s.created_at),
                "store": s.store,
            }
            for s in summaries.value
        ],
        "queue": [
            {"id": q.id, "content": q.content, "notification_type": q.notification_type, "source": q.source}
            for q in queue.value
        ],
    }
    overtaken = overtaken_rollback(checkpoints.value)
    data["rollback_overtaken"] = (
        None
        if overtaken is None
        else {
            "rollback_checkpoint_id": overtaken.rollback_checkpoint_id,
            "target": overtaken.target or None,
            "at": overtaken.at,
            "actor": overtaken.actor,
            "continued_from": overtaken.continued_from,
        }
    )
    if args.json:
        print_json(data)
        return 0
    if overtaken is not None:
        print(
            f"mycel-memory: warning: the rollback {overtaken.rollback_checkpoint_id} by {overtaken.actor} is no "
            f"longer active: the agent went on from {overtaken.continued_from}",
            file=sys.stderr,
        )
    _print_thread(row, data)
    return 0


def _print_thread(row: ThreadRow, data: dict[str, Any]) -> None:
    print(f"thread   {row.thread_id}  {row.name or ''}")
    print(f"model    {row.model or '-'}")
    print(
        f"head     {row.head_checkpoint_id or '-'}  ({row.checkpoints} checkpoints, {row.bytes_on_disk:,} bytes)"
    )
    print()
    print(f"messages at the head ({len(data['messages'])})")
    _print_table(
        ("#", "TYPE", "ID", "CHARS", "EST", "TIKTOKEN"),
        [
            (m["index"], m["type"], m["id"] or "", m["chars"], m["estimated_tokens"], m["tiktoken_tokens"])
            for m in data["messages"]
        ],
    )
    print()
    print(f"checkpoints, newest first ({len(data['checkpoints'])})")
    _print_table(
        ("CHECKPOINT", "PARENT", "STEP", "SOURCE", "MSGS", "EST", "TIKTOKEN", "INPUT"),
        [
            (
                c["checkpoint_id"],
                c["parent_checkpoint_id"] or "",
                "" if c["step"] is None else c["step"],
                c["source"] or "",
                "unreadable" if not c["readable"] else c["messages"],
                "" if c["estimated_tokens"] is None else c["estimated_tokens"],
                "" if c["tiktoken_tokens"] is None else c["tiktoken_tokens"],
                "" if c["input_tokens"] is None else c["input_tokens"],
            )
            for c in data["checkpoints"]
        ],
    )
    print()
    print(f"summaries ({len(data['summaries'])})")
    _print_table(
        ("SUMMARY", "UP TO", "ACTIVE", "SPLIT", "STORE"),
        [
            (s["summary_id"], s["compact_up_to_index"], s["is_active"], s["is_split_turn"], s["store"])
            for s in data["summaries"]
        ],
    )
    print()
    print(f"queue ({len(data['queue'])})")
    _print_table(
        ("ID", "TYPE", "CONTENT"),
        [(q["id"], q["notification_type"], _one_line(q["content"])) for q in data["queue"]],
    )


def _one_line(text: str, width: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _width(text: str) -> int:
    # CJK characters (分身 in branch names) take two terminal columns.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(_width(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        padded = (cell + " " * (width - _width(cell)) for cell, width in zip(row, widths, strict=True))
        print("  ".join(padded).rstrip())

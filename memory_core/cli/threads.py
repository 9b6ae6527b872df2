"""`mycel-memory threads` and `mycel-memory thread THREAD_ID`: Mycel's threads from the command line.

Reads the same environment variables as Mycel (LEON_DB_PATH, LEON_SANDBOX_DB_PATH, LEON_QUEUE_DB_PATH…).
Problems met while reading (a missing file, a damaged checkpoint) go to stderr; JSON stays on stdout.
Only what reading needs is imported here (never LangGraph: tests/core/test_cli_imports.py). What `thread`
derives from the checkpoints is kept in the facts folder, so the next run reads no checkpoint payload.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory_core.call_record.evidence import Configured
from memory_core.cli.calls_cmd import memory_facts
from memory_core.cli.common import UnknownThread, print_json
from memory_core.cli.reading import open_reader, require_data, warn, warn_lines
from memory_core.cli.table import one_line, print_table, printable, short_id
from memory_core.family import FamilyMember, agents_by_thread, build_family, registered_only_rows
from memory_core.messages import Message
from memory_core.records import AgentRecord, ProblemKind, StoreProblem, ThreadRow, loud_messages
from memory_core.rules.profile import RulesProfile
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list.thread_facts import ThreadFactsFile
from memory_core.tokens import content_chars, default_counter, estimate_message_tokens

# Bump when what `_derive_facts` keeps changes: facts kept by an older version are then derived again.
_FACTS_FORMAT = 3


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
        "layout": row.layout,
    }


def _subagent_json(agent: AgentRecord | None) -> dict[str, Any] | None:
    if agent is None:
        return None
    return {
        "agent_id": agent.agent_id,
        "name": agent.name,
        "status": agent.status,
        "subagent_type": agent.subagent_type,
        "created_at": _iso(agent.created_at),
    }


def _member_json(member: FamilyMember) -> dict[str, Any]:
    return {
        "thread_id": member.thread_id,
        "has_checkpoints": member.has_checkpoints,
        "subagent": _subagent_json(member.agent),
        "children": [_member_json(child) for child in member.children],
    }


def threads_rows(reader: MycelReader) -> tuple[list[dict[str, Any]], list[StoreProblem]]:
    """`threads --json`'s rows (the API's too), and the problems met reading them."""
    result = reader.list_threads()
    agents = reader.list_agents()
    # Sub-agents whose registration failed before any checkpoint are known to the registry alone.
    listed = [*result.value, *registered_only_rows(agents.value, (r.thread_id for r in result.value))]
    registered = agents_by_thread(agents.value)
    rows = [
        {
            **thread_json(r),
            "parent_thread_id": registered[r.thread_id].parent_thread_id
            if r.thread_id in registered
            else None,
            "subagent": _subagent_json(registered.get(r.thread_id)),
        }
        for r in listed
    ]
    return rows, [*result.problems, *agents.problems]


def run_threads(args: argparse.Namespace) -> int:
    reader = open_reader()
    require_data(reader.locations)
    rows, problems = threads_rows(reader)
    warn(problems)
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


def thread_facts(reader: MycelReader, row: ThreadRow, *, rules: RulesProfile | None = None) -> dict[str, Any]:
    """What the thread's checkpoints yield: the head's messages, every checkpoint's series, an overtaken
    rollback, and the warnings met deriving them; kept under the thread's key, derived only when it moved."""
    kept = (
        ThreadFactsFile(reader.store_key, reader.facts_folder)
        if reader.facts_folder is not None and row.head_checkpoint_id is not None
        else None
    )
    from memory_core.cli.calls_cmd import configured, memory_key

    today = configured(reader, row)
    # The tiktoken encoding is part of the key: counts under another encoding are other facts; so are
    # today's config and the summary rows, which the calls depend on.
    key = [
        _FACTS_FORMAT,
        row.checkpoints,
        row.head_checkpoint_id,
        default_counter().encoding_name,
        memory_key(reader, row, today),
        rules.value if rules else None,
    ]
    found = kept.lookup(row.thread_id, key) if kept is not None else None
    if isinstance(found, dict):
        return found
    facts, stable = _derive_facts(reader, row, today, rules)
    if kept is not None and stable:
        kept.remember(row.thread_id, key, facts)
    return facts


def _derive_facts(
    reader: MycelReader, row: ThreadRow, today: Configured, rules: RulesProfile | None = None
) -> tuple[dict[str, Any], bool]:
    """The facts, and whether they may be kept under the row's key (read from exactly those checkpoints,
    and with no problem that could read differently next time, such as a lock or a row cap)."""
    from memory_core.rollback import overtaken_rollback  # only when deriving: a warm run never needs it

    thread_id = row.thread_id
    # The head by its id, so the messages belong to the very checkpoint the key names.
    state = reader.get_state(thread_id, row.head_checkpoint_id) if row.head_checkpoint_id else None
    checkpoints = reader.list_checkpoints(thread_id)
    problems = [*(state.problems if state is not None else ()), *checkpoints.problems]
    messages = state.value.messages if state is not None and state.value is not None else ()
    count = default_counter().count
    overtaken = overtaken_rollback(checkpoints.value)
    facts: dict[str, Any] = {
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
        "rollback_overtaken": None
        if overtaken is None
        else {
            "rollback_checkpoint_id": overtaken.rollback_checkpoint_id,
            "target": overtaken.target or None,
            "at": overtaken.at,
            "actor": overtaken.actor,
            "continued_from": overtaken.continued_from,
        },
        "warnings": loud_messages(problems),
        "memory": memory_facts(
            reader, row, messages, checkpoints.value, row.head_checkpoint_id, today, rules=rules
        ),
    }
    newest = checkpoints.value[0].checkpoint_id if checkpoints.value else None
    stable = (
        len(checkpoints.value) == row.checkpoints
        and newest == row.head_checkpoint_id
        and all(p.kind is ProblemKind.UNREADABLE_CHECKPOINT for p in problems)
    )
    return facts, stable


@dataclass(frozen=True, slots=True)
class ThreadJson:
    """`thread --json`'s object, with what reading it met (the CLI prints those on stderr)."""

    row: ThreadRow
    data: dict[str, Any]
    problems: list[StoreProblem]
    warnings: list[str]


def thread_detail_json(reader: MycelReader, thread_id: str, *, rules: str | None) -> ThreadJson:
    """`thread --json` (the API's too), under `--rules` when given; UnknownThread when no store has it."""
    found = reader.get_thread(thread_id)
    agents = reader.list_agents()
    # A failed registration is a thread only the registry knows: shown with no checkpoints.
    registered = registered_only_rows([a for a in agents.value if a.thread_id == thread_id], ())
    if found.value is None and not registered:
        raise UnknownThread(
            f"unknown thread {printable(repr(thread_id))}: no Mycel store has it",
            problems=[*found.problems, *agents.problems],
        )
    row = found.value or registered[0]
    from memory_core.cli.plan import rules_option

    facts = thread_facts(reader, row, rules=rules_option(rules))
    summaries = reader.list_summaries(thread_id)
    queue = reader.list_queue(thread_id)
    data: dict[str, Any] = {
        "thread_id": row.thread_id,
        "layout": row.layout,
        "head_checkpoint_id": row.head_checkpoint_id,
        "name": row.name,
        "model": row.model,
        **_breaker_json(row),
        "messages": facts["messages"],
        "checkpoints": facts["checkpoints"],
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
        "rollback_overtaken": facts["rollback_overtaken"],
        "family": _family_json(reader, agents.value, thread_id),
        **{k: v for k, v in facts["memory"].items() if k != "calls"},
    }
    problems = [*found.problems, *summaries.problems, *queue.problems, *agents.problems]
    return ThreadJson(row, data, problems, facts["warnings"])


def run_thread(args: argparse.Namespace) -> int:
    reader = open_reader()
    require_data(reader.locations)
    try:
        found = thread_detail_json(reader, args.thread_id, rules=args.rules)
    except UnknownThread as exc:
        warn(exc.problems)
        raise
    warn(found.problems)
    warn_lines(found.warnings)
    row, data = found.row, found.data
    if args.json:
        print_json(data)
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


def _breaker_json(row: ThreadRow) -> dict[str, Any]:
    """Dev's compaction breaker at the head, from the list's head facts; null on a main layout (the key is
    always there, so both layouts' JSON has the same fields)."""
    if row.layout != "dev" or row.breaker_failures is None:
        return {"breaker": None}
    return {"breaker": {"failure_count": row.breaker_failures, "open": row.breaker_open}}


def _family_json(reader: MycelReader, agents: tuple[AgentRecord, ...], thread_id: str) -> dict[str, Any]:
    """The thread's registration, its parent and its sub-agents, recursively (agent_registry.db)."""
    family = build_family(
        agents, thread_id, has_checkpoints=lambda member: reader.head_checkpoint_id(member) is not None
    )
    return {
        "subagent": _subagent_json(family.agent),
        "parent": _member_json(family.parent) if family.parent is not None else None,
        "children": [_member_json(child) for child in family.children],
    }


def _print_thread(row: ThreadRow, data: dict[str, Any]) -> None:
    print(printable(f"thread   {row.thread_id}  {row.name or ''}"))
    print(printable(f"model    {row.model or '-'}"))
    print(
        printable(
            f"head     {row.head_checkpoint_id or '-'}  ({row.checkpoints} checkpoints, {row.bytes_on_disk:,} bytes)"
        )
    )
    print()
    print(f"messages at the head ({len(data['messages'])})")
    print_table(
        ("#", "TYPE", "ID", "CHARS", "EST", "TIKTOKEN"),
        [
            (m["index"], m["type"], m["id"] or "", m["chars"], m["estimated_tokens"], m["tiktoken_tokens"])
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

"""`mycel-memory calls THREAD_ID` and `mycel-memory whatif THREAD_ID`: every model call as Mycel made it,
and the same calls under a proposed config (memory_core/app/thread.py, memory_core/app/whatif.py)."""

from __future__ import annotations

import argparse
from typing import Any

from memory_core import figures
from memory_core.app.errors import UnknownThread
from memory_core.app.inputs import parse_rules_name
from memory_core.app.status import require_data
from memory_core.app.thread import find_thread, thread_facts
from memory_core.app.whatif import Proposal, whatif
from memory_core.cli.common import print_json
from memory_core.cli.reading import open_reader, warn, warn_lines
from memory_core.cli.table import print_table, printable
from memory_core.records import ThreadRow
from memory_core.stores.reader import MycelReader


def _facts(args: argparse.Namespace) -> tuple[MycelReader, ThreadRow, dict[str, Any]]:

    reader = open_reader()
    require_data(reader.locations)
    try:
        row = find_thread(reader, args.thread_id)
    except UnknownThread as exc:
        warn(exc.problems)
        raise
    facts = thread_facts(reader, row, rules=parse_rules_name(args.rules))
    warn_lines(facts["warnings"])
    return reader, row, facts


def run_calls(args: argparse.Namespace) -> int:
    _, _, facts = _facts(args)
    memory = facts["memory"]
    if args.json:
        print_json(memory["calls"])
        return 0
    for line in memory["disagreements"]:
        print(printable(f"note: {line}"))
    for line in memory["assumed"]:
        print(printable(f"assumed: {line}"))
    print_table(
        (
            "CALL",
            "MSG",
            "REQUEST",
            "COMPACTED",
            "SUMMARY",
            "STORED",
            "PRUNED",
            "SENT",
            "TIKTOKEN",
            "PROVIDER",
            "LIMIT",
        ),
        [
            (
                c["call"],
                c["message_index"],
                figures.count(c["request_messages"]),
                ("yes" if c["summary_stored"] else "not stored") if c["compacted"] else "",
                ""
                if c["summary_compact_up_to_index"] is None
                else f"up to {c['summary_compact_up_to_index']}",
                figures.count(c["estimated_tokens"]["stored"]),
                figures.count(c["estimated_tokens"]["after_pruning"]),
                figures.count(c["estimated_tokens"]["sent"]),
                "" if c["tiktoken_tokens"] is None else figures.count(c["tiktoken_tokens"]),
                "" if c["provider_input_tokens"] is None else figures.count(c["provider_input_tokens"]),
                f"{figures.count(c['context_limit'])} ({c['context_limit_source']})",
            )
            for c in memory["calls"]
        ],
    )
    if not memory["calls"]:
        print("(no model call: the head holds no AI message)")
    return 0


def run_whatif(args: argparse.Namespace) -> int:
    reader, row, facts = _facts(args)
    proposal = Proposal.from_text({name: getattr(args, name, None) for name in Proposal.option_names()})
    data = whatif(reader, row, facts, proposal)
    current, proposed = data["current"], data["proposed"]
    if args.json:
        print_json(data)
        return 0
    print(printable(f"what-if for {row.thread_id}: {_proposal_words(proposal)}"))
    if not _proposed(proposal):
        print(
            "no change proposed: both columns are the record (what `mycel-memory calls` prints); "
            "add a setting such as --context-limit N to propose one"
        )
    elif all(_same(a, b) for a, b in zip(current, proposed, strict=True)):
        print("the proposal changes no call: both columns are the record")
    now, then = data["totals"]["current"], data["totals"]["proposed"]
    sent_now, sent_then = now["sent_tokens"], then["sent_tokens"]
    print_table(
        ("CALL", "SENT NOW", "SENT PROPOSED", "CHANGE", "COMPACTED NOW", "COMPACTED PROPOSED"),
        [
            *(
                (
                    a["call"],
                    figures.count(a["estimated_tokens"]["sent"]),
                    figures.count(b["estimated_tokens"]["sent"]),
                    figures.delta(b["estimated_tokens"]["sent"] - a["estimated_tokens"]["sent"]),
                    "yes" if a["compacted"] else "",
                    "yes" if b["compacted"] else "",
                )
                for a, b in zip(current, proposed, strict=True)
            ),
            (
                "TOTAL",
                figures.count(sent_now),
                figures.count(sent_then),
                figures.delta(sent_then - sent_now),
                figures.count(now["compactions"]),
                figures.count(then["compactions"]),
            ),
        ],
    )
    print(
        "tokens are Mycel's estimate (characters ÷ 2) of what each call sent; TOTAL: their sum, compactions counted"
    )
    print(
        f"sent to the summariser over all compactions: {figures.count(now['summariser_chars'])} characters now, "
        f"{figures.count(then['summariser_chars'])} proposed ({figures.delta(then['summariser_chars'] - now['summariser_chars'])})"
    )
    return 0


def _proposed(proposal: Proposal) -> dict[str, object]:
    return {name: value for name in Proposal.option_names() if (value := getattr(proposal, name)) is not None}


def _proposal_words(proposal: Proposal) -> str:
    """ "proposal context_limit=8,000, protect_recent=6", or "no proposal"."""
    given = _proposed(proposal)
    if not given:
        return "no proposal"
    shown = (
        f"{name}={figures.count(value) if isinstance(value, int) else value}" for name, value in given.items()
    )
    return "proposal " + ", ".join(shown)


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        a["estimated_tokens"]["sent"] == b["estimated_tokens"]["sent"] and a["compacted"] == b["compacted"]
    )

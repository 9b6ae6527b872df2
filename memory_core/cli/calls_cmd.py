"""`mycel-memory calls THREAD_ID` and `mycel-memory whatif THREAD_ID`: every model call as Mycel made it,
and the same calls under a proposed config.

The calls are memory_core.app.calls' (the Thread screen's), kept with the thread's other facts
so a warm run decodes no checkpoint. `whatif`'s current side is exactly `calls`; its proposed side is a
replay under the flags' settings (the record itself when no flag changes anything).
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from memory_core.app.calls import calls_of, configured_for, models_of
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.call_record.as_json import call_json, dev_call_json, settings_json
from memory_core.call_record.calls import RecordedCall, checkpoints_holding
from memory_core.call_record.evidence import Configured
from memory_core.cli.common import CliError, UnknownThread, print_json
from memory_core.cli.reading import open_reader, require_data, warn, warn_lines
from memory_core.cli.table import print_table, printable
from memory_core.memo import digest
from memory_core.records import CheckpointRow, ThreadRow
from memory_core.rules.profile import RulesProfile, rules_reason
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter


def configured(reader: MycelReader, row: ThreadRow) -> Configured:
    return configured_for(reader.locations, thread_memory_settings(reader.locations, row))


def memory_key(reader: MycelReader, row: ThreadRow, today: Configured) -> str:
    """What the calls depend on besides the checkpoints: today's config and the summary rows."""
    rows = reader.list_summaries(row.thread_id).value
    return digest(
        today, [(r.summary_id, r.compacted_at, r.compact_up_to_index, len(r.summary_text)) for r in rows]
    )


def memory_facts(
    reader: MycelReader,
    row: ThreadRow,
    messages: tuple[Any, ...],
    checkpoints: list[CheckpointRow],
    head: str | None,
    today: Configured,
    *,
    rules: RulesProfile | None = None,
) -> dict[str, Any]:
    """The thread's calls and the settings in force, as `thread`/`calls` print them, under the rules of
    the thread's layout or `rules`."""
    profile, reason = rules_reason(override=rules, layout=row.layout)
    summaries = tuple(reader.list_summaries(row.thread_id).value)
    calls, inference = calls_of(
        messages,
        summaries,
        checkpoints_holding(checkpoints, head),
        today,
        counter=default_counter(),
        models_by_checkpoint=models_of(checkpoints),
        rules=profile,
    )
    return {
        "calls": [_call_json(c, profile, reason) for c in calls],
        "rules": profile.value,
        "rules_reason": reason,
        **settings_json(inference, calls, rules=profile),
    }


def _call_json(call: RecordedCall, profile: RulesProfile, reason: str) -> dict[str, Any]:
    """A call as `calls --json` prints it; a main-layout thread's under main's rules keeps its keys."""
    data = call_json(call)
    if profile is RulesProfile.DEV:
        data.update(dev_call_json(call))
    if profile is RulesProfile.DEV or reason == "--rules":
        data.update(rules=profile.value, rules_reason=reason)
    return data


def thread_facts(
    reader: MycelReader, thread_id: str, *, rules: str | None
) -> tuple[ThreadRow, dict[str, Any]]:
    """The thread's row and facts (`facts["memory"]["calls"]` is `calls --json`, the API's too), under
    `--rules` when given; UnknownThread when no store has it."""
    from memory_core.cli import threads
    from memory_core.cli.plan import rules_option

    found = reader.get_thread(thread_id)
    if found.value is None:
        raise UnknownThread(
            f"unknown thread {printable(repr(thread_id))}: no Mycel store has it", problems=found.problems
        )
    return found.value, threads.thread_facts(reader, found.value, rules=rules_option(rules))


def _facts(args: argparse.Namespace) -> tuple[MycelReader, ThreadRow, dict[str, Any]]:

    reader = open_reader()
    require_data(reader.locations)
    try:
        row, facts = thread_facts(reader, args.thread_id, rules=args.rules)
    except UnknownThread as exc:
        warn(exc.problems)
        raise
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
                c["request_messages"],
                ("yes" if c["summary_stored"] else "not stored") if c["compacted"] else "",
                ""
                if c["summary_compact_up_to_index"] is None
                else f"up to {c['summary_compact_up_to_index']}",
                c["estimated_tokens"]["stored"],
                c["estimated_tokens"]["after_pruning"],
                c["estimated_tokens"]["sent"],
                "" if c["tiktoken_tokens"] is None else c["tiktoken_tokens"],
                "" if c["provider_input_tokens"] is None else c["provider_input_tokens"],
                f"{c['context_limit']:,} ({c['context_limit_source']})",
            )
            for c in memory["calls"]
        ],
    )
    if not memory["calls"]:
        print("(no model call: the head holds no AI message)")
    return 0


def whatif_json(
    reader: MycelReader, row: ThreadRow, facts: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """`whatif --json` (the API's too): {current, proposed}, the settings from `args`' flags."""
    from memory_core.call_record.calls import replayed
    from memory_core.call_record.dev_calls import dev_replayed
    from memory_core.cli.plan import rules_option, settings_from_flags, trigger_tokens_option
    from memory_core.model_view import newest_active
    from memory_core.replay import replay_calls, simulated_summary_chars
    from memory_core.rules.profile import rules_for

    current = facts["memory"]["calls"]
    profile = rules_option(args.rules) or rules_for(row.layout)
    today = configured(reader, row)
    proposed_settings = settings_from_flags(args, base=today.settings)
    trigger = trigger_tokens_option(args)
    if trigger is not None:
        if profile is not RulesProfile.DEV:
            raise CliError("--trigger-tokens applies only under Mycel dev's rules (--rules dev)")
        proposed_settings = replace(proposed_settings, fixed_trigger_tokens=trigger)
    if proposed_settings == today.settings:
        proposed = current
    else:
        state = reader.get_state(row.thread_id, row.head_checkpoint_id).value
        messages = state.messages if state is not None else ()
        active = newest_active(reader.list_summaries(row.thread_id).value)
        chars = simulated_summary_chars(active.summary_text if active else None)
        checkpoints = reader.list_checkpoints(row.thread_id).value
        holding = checkpoints_holding(checkpoints, row.head_checkpoint_id)
        if profile is RulesProfile.DEV:
            calls = dev_replayed(
                messages, proposed_settings, holding=holding, summary_chars=chars, counter=default_counter()
            )
            reason = "--rules" if args.rules else f"{row.layout} layout"
            proposed = [_call_json(c, profile, reason) for c in calls]
        else:
            replay = replay_calls(
                messages, settings=proposed_settings, summary_chars=chars, counter=default_counter()
            )
            proposed = [call_json(c) for c in replayed(replay, proposed_settings, holding=holding)]
    return {"current": current, "proposed": proposed}


def run_whatif(args: argparse.Namespace) -> int:
    reader, row, facts = _facts(args)
    data = whatif_json(reader, row, facts, args)
    current, proposed = data["current"], data["proposed"]
    if args.json:
        print_json(data)
        return 0
    print_table(
        ("CALL", "SENT NOW", "SENT PROPOSED", "COMPACTED NOW", "COMPACTED PROPOSED"),
        [
            (
                a["call"],
                a["estimated_tokens"]["sent"],
                b["estimated_tokens"]["sent"],
                "yes" if a["compacted"] else "",
                "yes" if b["compacted"] else "",
            )
            for a, b in zip(current, proposed, strict=True)
        ],
    )
    return 0

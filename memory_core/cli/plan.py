"""`mycel-memory plan`: what Mycel's memory middleware would do with a list of messages at one model call."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory_core.app.inputs import parse_count, parse_rules_name
from memory_core.app.whatif import Proposal
from memory_core.cli.common import CliError, print_json
from memory_core.compaction import CompactionPlan, plan_compaction
from memory_core.config import Severity, settings_from_document
from memory_core.export.read import BundleError, BundleInputs, read_bundle
from memory_core.memory_settings import DEFAULT_CONTEXT_LIMIT, MemorySettings
from memory_core.messages import Message, UnknownMessageType, messages_from_dicts
from memory_core.model_view import ActiveSummary
from memory_core.pruning import PruningResult
from memory_core.records import BreakerState
from memory_core.rules.dev import DevCallPlan, plan_dev_call
from memory_core.rules.profile import RulesProfile


def _count(args: argparse.Namespace, name: str, *, minimum: int) -> int | None:
    return parse_count(getattr(args, name), name, minimum=minimum)


def run(args: argparse.Namespace) -> int:
    bundle = read_bundle_file(args.bundle) if args.bundle else None
    rules = parse_rules_name(args.rules) or (bundle.rules if bundle else None)
    if rules is RulesProfile.DEV:
        return _run_dev(args, bundle)
    for flag, value in _DEV_ONLY.items():
        if getattr(args, value):
            raise CliError(f"{flag} applies only under --rules dev")
    messages = bundle.messages if bundle else _read_messages(args.messages)
    settings = settings_from_flags(args, base=bundle.settings if bundle else None)
    plan = plan_compaction(messages, settings=settings)
    if args.json:
        print_json(plan_to_json(plan))
    else:
        sys.stdout.write(render_plan(plan, settings=settings))
    return 0


_DEV_ONLY = {
    "--trigger-tokens": "trigger_tokens",
    "--active-summary": "active_summary",
    "--breaker-failures": "breaker_failures",
    "--breaker-open": "breaker_open",
    "--summarizer-fails": "summarizer_fails",
}


def _run_dev(args: argparse.Namespace, bundle: BundleInputs | None = None) -> int:
    if args.threshold is not None:
        raise CliError(
            "--threshold does not apply under --rules dev (Mycel dev hard-wires 0.7; use --trigger-tokens)"
        )
    messages = bundle.messages if bundle else _read_messages(args.messages)
    settings = settings_from_flags(args, base=bundle.settings if bundle else None)
    trigger = trigger_tokens_option(args)
    if trigger is not None or bundle is None:
        settings = replace(settings, fixed_trigger_tokens=trigger)
    failures = _count(args, "breaker_failures", minimum=0) or 0
    breaker = BreakerState(failures, _bool_option(args.breaker_open, "--breaker-open"))
    summary = _read_active_summary(args.active_summary) if args.active_summary else None
    if bundle is not None:
        # The bundle's breaker and active summary, unless the flags give others.
        given = args.breaker_failures is not None or args.breaker_open is not None
        breaker = breaker if given else bundle.breaker
        summary = summary if args.active_summary else bundle.active_summary
    plan = plan_dev_call(
        messages,
        settings=settings,
        active_summary=summary,
        breaker=breaker,
        summarizer_fails=args.summarizer_fails,
    )
    if args.json:
        print_json(dev_plan_to_json(plan))
    else:
        sys.stdout.write(render_dev_plan(plan))
    return 0


def trigger_tokens_option(args: argparse.Namespace) -> int | None:
    """--trigger-tokens: Mycel dev's absolute trigger, a positive integer (dev's schema refuses 0)."""
    return _count(args, "trigger_tokens", minimum=1)


def _bool_option(text: str | None, flag: str) -> bool:
    if text is None:
        return False
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise CliError(f"{flag}: must be true or false, got {text!r}")


def read_json_input(source: str) -> Any:
    """A JSON document from a file (or stdin for "-"); any failure is one CliError line naming it."""
    name = "stdin" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"cannot read {name}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{name} is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None


def read_bundle_file(source: str) -> BundleInputs:
    """A bundle of `mycel-memory export`, strictly validated; anything else is one CliError line."""
    try:
        return read_bundle(read_json_input(source))
    except BundleError as exc:
        raise CliError(f"{'stdin' if source == '-' else source}: {exc}") from None


def _read_active_summary(path: str) -> ActiveSummary:
    data = read_json_input(path)
    text = data.get("text") if isinstance(data, dict) else None
    index = data.get("compact_up_to_index") if isinstance(data, dict) else None
    if not isinstance(text, str) or not isinstance(index, int) or isinstance(index, bool):
        raise CliError(f'{path} must hold {{"text": string, "compact_up_to_index": integer}}')
    return ActiveSummary(text, index)


def dev_plan_to_json(plan: DevCallPlan) -> dict[str, Any]:
    """`plan --rules dev --json`: main's document plus the trigger view, the attempt and the breaker."""
    return {
        "rules": RulesProfile.DEV.value,
        "estimated_tokens": {
            "stored": plan.stored_tokens,
            "after_pruning": plan.pruned_tokens,
            "trigger_view": plan.trigger_view_tokens,
        },
        "pruning": _pruning_json(plan.pruning),
        "compaction": {
            **_split_json(plan),
            "attempted": plan.attempted,
            "compact_up_to_index": plan.compact_up_to_index,
            "summary_view_applied": plan.view_applied,
            "breaker": {"failure_count": plan.breaker_after.failure_count, "open": plan.breaker_after.open},
            "sent": {"count": len(plan.sent), "from_index": plan.sent_from_index},
        },
    }


def render_dev_plan(plan: DevCallPlan) -> str:
    """A few readable lines of dev's step."""
    view = f" (summarized view: {plan.trigger_view_tokens})" if plan.view_applied else ""
    if plan.compacted:
        verdict = f"compacted up to message {plan.compact_up_to_index}"
    elif plan.attempted:
        verdict = "attempted, nothing compacted" + (
            " (nothing to summarise)" if plan.summarize_count < 2 else ""
        )
    elif plan.should_compact:
        verdict = "over the trigger, but the circuit breaker is open"
    else:
        verdict = "no"
    b = plan.breaker_after
    return (
        "rules: Mycel dev\n"
        f"estimated tokens: stored {plan.stored_tokens}, after pruning {plan.pruned_tokens}{view} "
        f"(trigger above {plan.threshold_tokens})\n"
        f"compaction: {verdict}; summarise {plan.summarize_count}, keep {plan.keep_count}\n"
        f"breaker after the call: {b.failure_count} failure(s), {'open' if b.open else 'closed'}\n"
        f"sent: {len(plan.sent)} message(s), verbatim from message {plan.sent_from_index}\n"
    )


def _read_messages(source: str) -> tuple[Message, ...]:
    name = "stdin" if source == "-" else source
    data = read_json_input(source)
    if not isinstance(data, list):
        raise CliError(f"{name} must hold a JSON list of message objects, not {type(data).__name__}")
    for position, item in enumerate(data):
        if not isinstance(item, Mapping):
            raise CliError(f"message {position} in {name} is not an object")
    try:
        return messages_from_dicts(data, strict=True)
    except UnknownMessageType as exc:
        position = next(i for i, item in enumerate(data) if _is_unknown(item))
        raise CliError(f"message {position} in {name}: {exc} (expected human, ai, tool or system)") from None


def _is_unknown(item: Mapping[str, Any]) -> bool:
    try:
        messages_from_dicts([item], strict=True)
    except UnknownMessageType:
        return True
    return False


def settings_from_flags(args: argparse.Namespace, *, base: MemorySettings | None = None) -> MemorySettings:
    """Settings from the flags over `--runtime-config` over `base` (Mycel's defaults when None)."""
    proposal = Proposal.from_text({name: getattr(args, name, None) for name in _SETTING_FLAGS})
    if args.runtime_config:
        settings = _settings_from_file(args.runtime_config, context_limit=proposal.context_limit)
    elif base is not None:
        settings = base
    else:
        settings = MemorySettings(context_limit=proposal.context_limit or DEFAULT_CONTEXT_LIMIT)
    return proposal.applied_to(settings)


# The memory settings a command line may propose (not --rules or --trigger-tokens: each command reads those).
_SETTING_FLAGS = (
    "context_limit",
    "threshold",
    "soft_trim_chars",
    "hard_clear_threshold",
    "protect_recent",
    "keep_recent_tokens",
)


def _settings_from_file(path: str, *, context_limit: int | None) -> MemorySettings:
    document = read_json_input(path)
    if not isinstance(document, dict):
        raise CliError(f"{path} must hold a JSON object")
    settings, problems = settings_from_document(document, context_limit=context_limit)
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors:
        first = errors[0]
        raise CliError(f"{path}: {first.key_path or 'document'}: {first.message}")
    for problem in problems:
        if problem.severity is Severity.WARNING:
            print(f"mycel-memory: warning: {path}: {problem.key_path}: {problem.message}", file=sys.stderr)
    return settings


def _json_content(message: Message) -> Any:
    return message.content if isinstance(message.content, str) else list(message.content)


def _pruning_json(pruning: PruningResult) -> list[dict[str, Any]]:
    return [
        {
            "index": d.index,
            "type": d.message.type.value,
            "action": d.action.value,
            "content": _json_content(d.message),
        }
        for d in pruning.decisions
    ]


def plan_to_json(plan: CompactionPlan) -> dict[str, Any]:
    """The `plan --json` document (its shape is fixed by issue 2)."""
    return {
        "estimated_tokens": {"stored": plan.stored_tokens, "after_pruning": plan.estimated_tokens},
        "pruning": _pruning_json(plan.pruning),
        "compaction": {**_split_json(plan), "compact_up_to_index": plan.compact_up_to_index},
    }


def _split_json(plan: CompactionPlan | DevCallPlan) -> dict[str, Any]:
    """The trigger and split fields both rules print alike (`compaction` in `plan --json`)."""
    return {
        "threshold_tokens": plan.threshold_tokens,
        "should_compact": plan.should_compact,
        "keep_recent_tokens": plan.keep_recent_tokens,
        "message_tokens": list(plan.message_tokens),
        "summarize_count": plan.summarize_count,
        "keep_count": plan.keep_count,
        "split_turn": plan.split_turn,
        "turn_prefix_count": plan.turn_prefix_count,
    }


def _chars(message: Message) -> str:
    return (
        str(len(message.content)) if isinstance(message.content, str) else f"[{len(message.content)} blocks]"
    )


def render_plan(plan: CompactionPlan, *, settings: MemorySettings) -> str:
    """A readable table of the plan."""
    lines = [
        f"settings: soft_trim_chars={settings.soft_trim_chars} hard_clear_threshold={settings.hard_clear_threshold} "
        f"protect_recent={settings.protect_recent} keep_recent_tokens={settings.keep_recent_tokens} "
        f"context_limit={settings.context_limit} threshold={settings.threshold}",
        f"estimated tokens: stored {plan.stored_tokens}, after pruning {plan.estimated_tokens} "
        f"(trigger above {plan.threshold_tokens})",
        "",
        f"{'#':>4}  {'type':<6}  {'action':<12}  {'chars':>16}  {'tokens':>7}  rule",
    ]
    for decision, tokens in zip(plan.pruning.decisions, plan.message_tokens, strict=True):
        before = decision.original_chars
        after = _chars(decision.message)
        size = f"{before} -> {after}" if decision.action.changes_content else after
        marker = ""
        if plan.compact_up_to_index is not None and decision.index == plan.compact_up_to_index:
            marker = "  <- kept part starts here"
        lines.append(
            f"{decision.index:>4}  {decision.message.type.value:<6}  {decision.action.value:<12}  {size:>16}  "
            f"{tokens:>7}  {decision.rule}{marker}"
        )
    lines.append("")
    verdict = "YES" if plan.would_compact else ("over the trigger, but " if plan.should_compact else "no")
    if plan.should_compact and not plan.would_compact:
        verdict += "fewer than 2 messages to summarise: Mycel sends everything"
    lines.append(f"compaction: {verdict}")
    lines.append(
        f"  keep_recent_tokens {plan.keep_recent_tokens} (effective); summarise {plan.summarize_count}, "
        f"keep {plan.keep_count}"
    )
    if plan.split_turn:
        lines.append(
            f"  split turn: the first {plan.turn_prefix_count} kept message(s) get their own summary"
        )
    if plan.compact_up_to_index is not None:
        lines.append(
            f"  compact_up_to_index {plan.compact_up_to_index}; summariser input {len(plan.conversation_text)} chars"
            + (f" + prefix {len(plan.prefix_text)} chars" if plan.split_turn else "")
            + f"; tokens after ~{plan.tokens_after} (placeholder summary text)"
        )
    return "\n".join(lines) + "\n"

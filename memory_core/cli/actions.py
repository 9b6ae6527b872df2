"""`mycel-memory rollback`, `undo` and `dry-run`: the operator actions, headless.

rollback/undo print the impact report first; they write only without --dry-run, and refuse while the
thread looks busy unless --force. dry-run never writes.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from memory_core import figures
from memory_core.app.audit import AuditRecord
from memory_core.app.calls import dev_next_call
from memory_core.app.errors import UnknownThread
from memory_core.app.inputs import parse_rules_name
from memory_core.app.rollback import (
    UnknownCheckpoint,
    applied_as_dict,
    apply_rollback,
    impact_as_dict,
    preview_rollback,
    preview_undo,
)
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.cli.audited import actor_of, run_audited
from memory_core.cli.common import CliError, print_json
from memory_core.cli.plan import settings_from_flags, trigger_tokens_option
from memory_core.cli.reading import open_reader
from memory_core.compaction import CompactionPlan, plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.rollback import RollbackImpact, RollbackRefused
from memory_core.rules.dev import DevCallPlan
from memory_core.rules.profile import RulesProfile, rules_reason
from memory_core.rules.summariser import planned_requests
from memory_core.stores.reader import MycelReader


def run_rollback(args: argparse.Namespace) -> int:
    reader = open_reader()
    try:
        impact = preview_rollback(reader, args.thread_id, args.target)
    except (UnknownThread, UnknownCheckpoint) as exc:
        raise CliError(str(exc)) from None
    return _finish(args, reader, impact)


def run_undo(args: argparse.Namespace) -> int:
    reader = open_reader()
    try:
        impact = preview_undo(reader, args.thread_id)
    except (UnknownThread, UnknownCheckpoint, RollbackRefused) as exc:
        raise CliError(str(exc)) from None
    return _finish(args, reader, impact)


def _finish(args: argparse.Namespace, reader: MycelReader, impact: RollbackImpact) -> int:
    report = impact_as_dict(impact)
    if args.dry_run:
        _emit(args, report, impact)
        return 0
    intent = AuditRecord(
        action=impact.action,
        actor=actor_of(args),
        target=impact.target_checkpoint_id,
        thread_id=impact.thread_id,
        message=f"{impact.action} to {impact.target_checkpoint_id} (from the command line)",
        before=report,
    )
    try:
        applied = run_audited(
            args,
            intent,
            lambda: apply_rollback(
                reader.locations, impact, actor=actor_of(args), force=args.force, reader=reader
            ),
            outcome=lambda done: (f"new head {done.new_head_checkpoint_id}", applied_as_dict(done)),
            refusals=(RollbackRefused,),
        )
    except RollbackRefused as exc:
        if args.json:
            print_json({**report, "applied": False, "refused": str(exc)})
        raise CliError(f"{impact.action} refused: {exc}") from None
    report.update(applied=True, **applied_as_dict(applied))
    _emit(args, report, impact)
    return 0


def _emit(args: argparse.Namespace, report: dict[str, Any], impact: RollbackImpact) -> None:
    if args.json:
        print_json(report)
        return
    out = sys.stdout
    out.write(f"{impact.action} of thread {impact.thread_id}\n")
    out.write(f"  target   {impact.target_checkpoint_id} ({impact.target_messages} messages)\n")
    out.write(f"  head     {impact.head_checkpoint_id} ({impact.head_messages} messages)\n")
    out.write(f"  leaving the active history: {len(impact.messages_leaving)} message(s)\n")
    for message in impact.messages_leaving[:20]:
        out.write(f"    #{message.index:<4} {message.type.value:<6} {message.preview}\n")
    out.write(f"  later checkpoints kept (not deleted): {len(impact.later_checkpoints)}\n")
    for line in [*impact.warnings, *([impact.sandbox_note] if impact.sandbox_note else [])]:
        out.write(f"  note: {line}\n")
    for refusal in impact.refusals:
        out.write(f"  refusal: {refusal}\n")
    if report.get("applied"):
        out.write(
            f"applied: new head {report['new_head_checkpoint_id']} (was {report['previous_head_checkpoint_id']})\n"
        )
    elif args.dry_run:
        out.write("dry run: nothing written\n")


def run_dry_run(args: argparse.Namespace) -> int:
    if args.bundle is not None:
        return _run_dry_run_bundle(args)
    reader = open_reader()
    row = reader.get_thread(args.thread_id).value
    if row is None:
        raise CliError(f"unknown thread {args.thread_id!r}")
    state = reader.get_state(args.thread_id, args.checkpoint).value
    if state is None:
        where = f"checkpoint {args.checkpoint!r}" if args.checkpoint else "a readable checkpoint"
        raise CliError(f"thread {args.thread_id!r} has no {where}")
    thread_settings = thread_memory_settings(reader.locations, row)
    limit = thread_settings.limit
    settings = settings_from_flags(args, base=thread_settings.settings)
    profile, reason = rules_reason(override=parse_rules_name(args.rules), layout=row.layout)
    trigger = trigger_tokens_option(args)
    if trigger is not None:
        if profile is not RulesProfile.DEV:
            raise CliError("--trigger-tokens applies only under Mycel dev's rules (--rules dev)")
        settings = replace(settings, fixed_trigger_tokens=trigger)
    dev = dev_next_call(reader, row, state.messages, settings) if profile is RulesProfile.DEV else None
    report = _dry_run_report(
        state.messages,
        settings,
        (profile, reason),
        thread_id=args.thread_id,
        checkpoint_id=state.checkpoint.checkpoint_id,
        limit=(limit.value, limit.explanation),
        dev=dev,
    )
    return _print_dry_run(args, report)


def _run_dry_run_bundle(args: argparse.Namespace) -> int:
    """The dry-run of an exported bundle: its messages under its config, no Mycel file read."""
    from memory_core.cli.plan import read_bundle_file
    from memory_core.rules.dev import plan_dev_call

    if args.checkpoint:
        raise CliError("--checkpoint does not apply to a bundle (export that checkpoint with --checkpoint)")
    bundle = read_bundle_file(args.bundle)
    settings = settings_from_flags(args, base=bundle.settings)
    override = parse_rules_name(args.rules)
    profile, reason = (override, "--rules") if override else (bundle.rules, bundle.rules_reason)
    trigger = trigger_tokens_option(args)
    if trigger is not None:
        if profile is not RulesProfile.DEV:
            raise CliError("--trigger-tokens applies only under Mycel dev's rules (--rules dev)")
        settings = replace(settings, fixed_trigger_tokens=trigger)
    dev = None
    if profile is RulesProfile.DEV:
        dev = plan_dev_call(
            bundle.messages, settings=settings, active_summary=bundle.active_summary, breaker=bundle.breaker
        )
    report = _dry_run_report(
        bundle.messages,
        settings,
        (profile, reason),
        thread_id=bundle.thread_id,
        checkpoint_id=bundle.checkpoint_id,
        limit=(bundle.context_limit, bundle.context_limit_source),
        dev=dev,
    )
    return _print_dry_run(args, report)


def _dry_run_report(
    messages: tuple[Message, ...],
    settings: MemorySettings,
    rules: tuple[RulesProfile, str],
    *,
    thread_id: str,
    checkpoint_id: str,
    limit: tuple[int, str],
    dev: DevCallPlan | None,
) -> dict[str, Any]:
    """The dry-run's JSON, from a live thread or a bundle alike."""
    profile, reason = rules
    plan = plan_compaction(messages, settings=settings, keep_newest=profile is RulesProfile.DEV)
    report = dry_run_as_dict(plan, settings=settings, thread_id=thread_id, checkpoint_id=checkpoint_id)
    report.update(rules=profile.value, rules_reason=reason)
    # What Mycel's summariser would get, in the branch's request shape (its prompts sized, not copied).
    requests = planned_requests(plan, rules=profile)
    report["summariser_requests"] = [r.as_json() for r in requests]
    report["summary_request_chars"] = sum(r.chars for r in requests)
    if dev is not None:
        # Dev's own decision, as the dry-run page's card shows it; the split above is dev's too (it keeps
        # the newest message), and so are the summariser requests.
        report["dev"] = dev_decision_as_dict(dev)
        report["would_compact_next_call"] = report["dev"]["compact_up_to_index"] is not None
    report["context_limit_source"] = limit[1] if settings.context_limit == limit[0] else "--context-limit"
    return report


def _print_dry_run(args: argparse.Namespace, report: dict[str, Any]) -> int:
    if not args.show_text:
        report.pop("conversation_text")
        report.pop("prefix_text")
    if args.json:
        print_json(report)
    else:
        _render_dry_run(report)
    return 0


def dry_run_as_dict(
    plan: CompactionPlan, *, settings: MemorySettings, thread_id: str, checkpoint_id: str
) -> dict[str, Any]:
    """The compaction dry-run as JSON-ready data."""
    return {
        "thread_id": thread_id,
        "checkpoint_id": checkpoint_id,
        "context_limit": settings.context_limit,
        "threshold_tokens": plan.threshold_tokens,
        "stored_tokens": plan.stored_tokens,
        "estimated_tokens": plan.estimated_tokens,
        "would_compact_next_call": plan.would_compact,
        "should_compact": plan.should_compact,
        "keep_recent_tokens": plan.keep_recent_tokens,
        "messages": len(plan.pruning.messages),
        "summarize_count": plan.summarize_count,
        "keep_count": plan.keep_count,
        "split_turn": plan.split_turn,
        "turn_prefix_count": plan.turn_prefix_count,
        "compact_up_to_index": plan.compact_up_to_index,
        "tokens_before": plan.estimated_tokens,
        "tokens_after": plan.tokens_after if plan.compact_up_to_index is not None else plan.estimated_tokens,
        "conversation_text_chars": len(plan.conversation_text),
        "conversation_text": plan.conversation_text,
        "prefix_text": plan.prefix_text,
    }


def dev_decision_as_dict(plan: DevCallPlan) -> dict[str, Any]:
    """Mycel dev's middleware decision at the next call (`dry-run --json`'s `dev`)."""
    return {
        "trigger_view_tokens": plan.trigger_view_tokens,
        "view_applied": plan.view_applied,
        "pruned_tokens": plan.pruned_tokens,
        "threshold_tokens": plan.threshold_tokens,
        "should_compact": plan.should_compact,
        "attempted": plan.attempted,
        "summarize_count": plan.summarize_count,
        "keep_count": plan.keep_count,
        "keep_recent_tokens": plan.keep_recent_tokens,
        "compact_up_to_index": plan.compact_up_to_index,
        "breaker_before": {
            "failure_count": plan.breaker_before.failure_count,
            "open": plan.breaker_before.open,
        },
        "breaker_after": {"failure_count": plan.breaker_after.failure_count, "open": plan.breaker_after.open},
    }


def _render_dry_run(report: dict[str, Any]) -> None:
    out = sys.stdout
    verdict = "YES" if report["would_compact_next_call"] else "no"
    out.write(f"compaction dry-run for {report['thread_id']} at {report['checkpoint_id']}\n")
    out.write(
        f"  estimate {figures.count(report['estimated_tokens'])} tokens vs trigger "
        f"{figures.count(report['threshold_tokens'])}"
        f" (limit {figures.count(report['context_limit'])}; {report['context_limit_source']})\n"
    )
    dev = report.get("dev")
    if dev is not None:
        seen = "summarized view" if dev["view_applied"] else "pruned history"
        out.write(
            f"  Mycel dev's rules ({report['rules_reason']}): {seen} {figures.count(dev['trigger_view_tokens'])} "
            f"vs trigger {figures.count(dev['threshold_tokens'])}; breaker {'open' if dev['breaker_before']['open'] else 'closed'}"
            f" ({dev['breaker_before']['failure_count']} failures)\n"
        )
    out.write(f"  Mycel would compact on the next call: {verdict}\n")
    if report["compact_up_to_index"] is None:
        out.write("  nothing to summarise: fewer than two messages fall before the kept part\n")
    else:
        split = f", split turn (prefix of {report['turn_prefix_count']})" if report["split_turn"] else ""
        out.write(
            f"  summarise {figures.count(report['summarize_count'])} message(s), "
            f"keep {figures.count(report['keep_count'])}{split};"
            f" compact_up_to_index {report['compact_up_to_index']}\n"
        )
        out.write(
            f"  tokens {figures.count(report['tokens_before'])} -> {figures.count(report['tokens_after'])} "
            "(summary placeholder included)\n"
        )
        for request in report["summariser_requests"]:
            cap = request["max_tokens"]
            out.write(
                f"  summariser request ({request['purpose']}, Mycel {report['rules']}'s shape): "
                + " + ".join(f"{m['role']} {figures.count(m['chars'])}" for m in request["messages"])
                + f" = {figures.count(request['chars'])} chars"
                + (f", max_tokens {figures.count(cap)}" if cap is not None else "")
                + "\n"
            )
    if "conversation_text" in report:
        out.write("\n" + report["conversation_text"] + "\n")

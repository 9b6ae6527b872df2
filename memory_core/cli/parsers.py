"""Every subcommand's arguments, without importing what runs it.

A command's module is imported only when that command runs (`handler` names it as "module:function"), so
`mycel-memory threads` never loads the rollback writer (LangGraph) or the config engine. Keep this module's
imports to argparse and constants.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memory_core.memory_settings import DEFAULT_CONTEXT_LIMIT

# ConfigLayerName.USER / .PROJECT, spelled out so that parsing arguments does not import memory_core.config
# (tests/core/test_cli_imports.py checks they agree).
CONFIG_LAYERS = ("user", "project")


def add_subcommands(subparsers: Any) -> None:
    """Every subcommand, in the order `mycel-memory --help` lists them."""
    _plan(subparsers)
    _status(subparsers)
    _threads(subparsers)
    _actions(subparsers)
    _config(subparsers)
    _footprint(subparsers)
    _economics(subparsers)
    _around(subparsers)


def _plan(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="pruning decisions and the compaction plan for one model call",
        description=(
            "Show what Mycel's memory middleware does before a model call whose input is the given "
            "messages: which tool results it trims or clears, its token estimates, and where compaction "
            "would cut. Flags override the config file; defaults are Mycel's."
        ),
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--messages", metavar="FILE", help="JSON list of LangChain message dicts ('-' = stdin)"
    )
    source.add_argument(
        "--bundle",
        metavar="FILE",
        help="a bundle from `mycel-memory export`: its messages under its config (flags still override)",
    )
    add_settings_flags(parser, context_limit_default=f"default {DEFAULT_CONTEXT_LIMIT}, or the bundle's")
    # No default: with --bundle the bundle's rules apply unless --rules says otherwise; else main's.
    parser.add_argument(
        "--rules",
        default=None,
        metavar="main|dev",
        help="Mycel's memory rules (default main, or the bundle's)",
    )
    dev = parser.add_argument_group("Mycel dev's rules (with --rules dev)")
    dev.add_argument(
        "--trigger-tokens", metavar="N", help="absolute compaction trigger (default int(0.7 x limit))"
    )
    dev.add_argument("--active-summary", metavar="FILE", help='JSON {"text": ..., "compact_up_to_index": N}')
    dev.add_argument("--breaker-failures", metavar="N", help="failed compactions in a row before the call")
    dev.add_argument(
        "--breaker-open", metavar="true|false", help="whether the breaker is open before the call"
    )
    dev.add_argument("--summarizer-fails", action="store_true", help="every summariser call fails")
    parser.add_argument("--json", action="store_true", help="print the plan as JSON")
    parser.set_defaults(handler="memory_core.cli.plan:run")


def add_rules_flag(parser: argparse.ArgumentParser, *, default: str | None = "main") -> None:
    """--rules main|dev: whose memory rules to apply (commands over a thread default to its layout's)."""
    where = "default main" if default else "default: the thread's layout"
    parser.add_argument(
        "--rules", default=default, metavar="main|dev", help=f"Mycel's memory rules ({where})"
    )


def add_settings_flags(parser: argparse.ArgumentParser, *, context_limit_default: str) -> None:
    """The memory-setting flags shared by `plan` and `dry-run`; they override the config file."""
    parser.add_argument(
        "--runtime-config", metavar="FILE", help="a runtime.json to read memory settings from"
    )
    parser.add_argument("--context-limit", metavar="N", help=f"context window ({context_limit_default})")
    parser.add_argument("--threshold", metavar="F", help="trigger fraction of the limit (Mycel fixes 0.7)")
    parser.add_argument("--soft-trim-chars", metavar="N")
    parser.add_argument("--hard-clear-threshold", metavar="N")
    parser.add_argument("--protect-recent", metavar="N")
    parser.add_argument("--keep-recent-tokens", metavar="N")


def _status(subparsers: Any) -> None:
    status = subparsers.add_parser(
        "status",
        help="where each store is: engine, location, schema, layout",
        description=(
            "Show which engine holds each of Mycel's stores (PostgreSQL at LEON_POSTGRES_URL, or SQLite "
            "files), where (passwords masked), and the checkpoint schema and layout (dev, main, or both)."
        ),
    )
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(handler="memory_core.cli.status_cmd:run_status")

    health = subparsers.add_parser(
        "health",
        help="readiness checks and the counts behind the alerts; exit 1 when one fires",
        description=(
            "Probe each configured store and the fleet index, and count what the shipped alert rules watch "
            "(threads over 90 %% of their window, breakers open, the index's lag). Exit status: 0 nothing "
            "fires, 1 an alert fires (a store down included), 2 the command could not run."
        ),
    )
    health.add_argument("--json", action="store_true", help="print JSON")
    health.set_defaults(handler="memory_core.cli.health_cmd:run_health")


def _threads(subparsers: Any) -> None:
    threads = subparsers.add_parser(
        "threads",
        help="every thread in the Mycel data home",
        description="List every thread any Mycel store knows (checkpoints, threads table, queue, summaries).",
    )
    threads.add_argument("--json", action="store_true", help="print JSON")
    threads.set_defaults(handler="memory_core.cli.threads:run_threads")

    thread = subparsers.add_parser(
        "thread",
        help="one thread: head messages, checkpoints, summaries, queue",
        description="Show one thread: its head checkpoint's messages, every checkpoint, summaries and queue.",
    )
    thread.add_argument("thread_id", metavar="THREAD_ID")
    add_rules_flag(thread, default=None)
    thread.add_argument("--json", action="store_true", help="print JSON")
    thread.set_defaults(handler="memory_core.cli.threads:run_thread")

    calls = subparsers.add_parser(
        "calls",
        help="every model call of a thread as Mycel made it (summary rows first)",
        description=(
            "One line (or JSON object) per model call: the messages Mycel handed the model, whether it "
            "compacted first, the summary in effect, token estimates, and the context limit in force "
            "with where it comes from (inferred from the stored summaries when today's config disagrees)."
        ),
    )
    calls.add_argument("thread_id", metavar="THREAD_ID")
    add_rules_flag(calls, default=None)
    calls.add_argument("--json", action="store_true", help="print JSON")
    calls.set_defaults(handler="memory_core.cli.calls_cmd:run_calls")

    whatif = subparsers.add_parser(
        "whatif",
        help="a thread's model calls as they were, and replayed under proposed settings",
        description=(
            "Print {current, proposed}: current is exactly `calls`; proposed replays the thread under "
            "today's config with the flags applied (equal to current when no flag changes anything)."
        ),
    )
    whatif.add_argument("thread_id", metavar="THREAD_ID")
    add_settings_flags(
        whatif, context_limit_default="default: the thread model's limit, as Mycel resolves it"
    )
    add_rules_flag(whatif, default=None)
    whatif.add_argument(
        "--trigger-tokens", metavar="N", help="Mycel dev's absolute trigger (with dev's rules)"
    )
    whatif.add_argument("--json", action="store_true", help="print JSON")
    whatif.set_defaults(handler="memory_core.cli.calls_cmd:run_whatif")


def _actions(subparsers: Any) -> None:
    rollback = subparsers.add_parser(
        "rollback",
        help="make an earlier checkpoint the thread's active state (append-only, undoable)",
        description=(
            "Roll THREAD_ID back to CHECKPOINT_ID by writing one new checkpoint that copies it (nothing is "
            "deleted). Prints the impact report; --dry-run stops there."
        ),
    )
    rollback.add_argument("thread_id", metavar="THREAD_ID")
    rollback.add_argument("--to", required=True, metavar="CHECKPOINT_ID", dest="target")
    _action_flags(rollback)
    rollback.set_defaults(handler="memory_core.cli.actions:run_rollback")

    undo = subparsers.add_parser(
        "undo",
        help="undo the last rollback (roll forward to the head it replaced)",
        description="Undo the dashboard rollback that is THREAD_ID's active checkpoint.",
    )
    undo.add_argument("thread_id", metavar="THREAD_ID")
    _action_flags(undo)
    undo.set_defaults(handler="memory_core.cli.actions:run_undo")

    dry_run = subparsers.add_parser(
        "dry-run",
        help="what compaction would summarise and keep for a thread (never writes)",
        description=(
            "Plan Mycel's compaction for THREAD_ID's next model call (or at --checkpoint) under its "
            "effective config; flags propose other values."
        ),
    )
    target = dry_run.add_mutually_exclusive_group(required=True)
    target.add_argument("thread_id", nargs="?", metavar="THREAD_ID")
    target.add_argument(
        "--bundle", metavar="FILE", help="plan from a bundle of `mycel-memory export` (no Mycel files needed)"
    )
    dry_run.add_argument(
        "--checkpoint", metavar="CHECKPOINT_ID", help="plan at this checkpoint instead of the head"
    )
    add_settings_flags(
        dry_run, context_limit_default="default: the thread model's limit, as Mycel resolves it"
    )
    add_rules_flag(dry_run, default=None)
    dry_run.add_argument(
        "--trigger-tokens", metavar="N", help="Mycel dev's absolute trigger (with dev's rules)"
    )
    dry_run.add_argument(
        "--show-text", action="store_true", help="print the conversation text the summariser gets"
    )
    dry_run.add_argument("--json", action="store_true", help="print JSON")
    dry_run.set_defaults(handler="memory_core.cli.actions:run_dry_run")


def _action_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dry-run", action="store_true", help="print the impact report and write nothing")
    parser.add_argument("--force", action="store_true", help="act even though the thread looks busy")
    parser.add_argument("--actor", default=None, help="who to record as the actor (default: $USER)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _config(subparsers: Any) -> None:
    config = subparsers.add_parser(
        "config",
        help="Mycel's memory config: effective values with layers, set a value, history",
        description="Show the memory, compaction and spill-buffer values Mycel runs with, the layer each "
        "comes from, the problems found, and the context limit of every model in use.",
    )
    config.add_argument("--json", action="store_true", help="print JSON")
    dev = config.add_mutually_exclusive_group()
    dev.add_argument("--thread", metavar="ID", help="a Mycel dev thread: show its agent's dev profile")
    dev.add_argument("--agent", metavar="ID", help="a Mycel dev agent id (m_…): show its dev profile")
    _project_option(config)
    config.set_defaults(handler="memory_core.cli.config_cmd:run_show")
    actions = config.add_subparsers(dest="config_command", metavar="ACTION")

    set_parser = actions.add_parser(
        "set",
        help="validate one value, show the diff, write it into a layer file",
        description="Set one key in a layer file (nested form, every other key kept, previous version "
        "backed up). VALUE is JSON when it parses, else text; null removes the key.",
    )
    set_parser.add_argument("key", metavar="KEY", help="dotted key, e.g. memory.pruning.soft_trim_chars")
    set_parser.add_argument("value", metavar="VALUE")
    set_parser.add_argument("--layer", choices=CONFIG_LAYERS, required=True)
    set_parser.add_argument("--dry-run", action="store_true", help="show the diff, write nothing")
    set_parser.add_argument("--json", action="store_true", help="print JSON")
    _project_option(set_parser)
    set_parser.set_defaults(handler="memory_core.cli.config_cmd:run_set")

    history = actions.add_parser("history", help="earlier versions of a layer file, newest first")
    history.add_argument("--layer", choices=CONFIG_LAYERS, required=True)
    history.add_argument("--json", action="store_true", help="print JSON")
    _project_option(history)
    history.set_defaults(handler="memory_core.cli.config_cmd:run_history")

    restore = actions.add_parser("restore", help="put an earlier version of a layer file back")
    restore.add_argument("version", metavar="VERSION", help="a name listed by `config history`")
    restore.add_argument("--layer", choices=CONFIG_LAYERS, required=True)
    restore.add_argument("--json", action="store_true", help="print JSON")
    _project_option(restore)
    restore.set_defaults(handler="memory_core.cli.config_cmd:run_restore")


def _project_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project-dir",
        type=Path,
        default=None,
        help="the workspace whose .leon/runtime.json is the project layer "
        "(default: $MYCEL_PROJECT_DIR, else the current directory)",
    )


def _footprint(subparsers: Any) -> None:
    storage = subparsers.add_parser(
        "storage",
        help="bytes on disk per store, thread and checkpoint, their growth per turn and projection",
        description=(
            "Rank every thread by its bytes on disk (checkpoints, metadata, writes, blobs) and by growth; "
            "fit each thread's growth per turn (LangGraph stores the whole message list at every "
            "checkpoint, so a thread grows with the square of its length) and project its size; total "
            "each SQLite file (dbstat) and PostgreSQL schema."
        ),
    )
    storage.add_argument(
        "thread_id", nargs="?", metavar="THREAD_ID", help="one thread's checkpoints and channels"
    )
    storage.add_argument("--turns", metavar="N", help="project each thread N more turns ahead (default 50)")
    storage.add_argument("--json", action="store_true", help="print JSON")
    storage.set_defaults(handler="memory_core.cli.storage_cmd:run_storage")

    retention = subparsers.add_parser(
        "retention",
        help="what a retention policy would free, thread by thread (a dry-run; never deletes)",
        description=(
            "Plan a retention policy and show what it frees per thread, what each thread keeps and why "
            "(the head, every fork point and every dashboard rollback or undo target are always kept), "
            "and what becomes unreachable. Nothing is deleted: --export writes the plan as a SQL script "
            "to run with Mycel stopped, recorded in the audit log."
        ),
    )
    retention.add_argument("--keep-last", metavar="K", help="keep the last K checkpoints of each thread")
    retention.add_argument("--heads-only", action="store_true", help="keep only heads and fork points")
    retention.add_argument(
        "--idle-days",
        metavar="D",
        help="threads idle for D days or more keep only their head and fork points",
    )
    retention.add_argument("--export", metavar="FILE", help="write the plan as a SQL script ('-' = stdout)")
    retention.add_argument("--actor", default=None, help="who to record in the audit log (default: $USER)")
    retention.add_argument("--json", action="store_true", help="print JSON")
    retention.set_defaults(handler="memory_core.cli.retention_cmd:run_retention")

    cost = subparsers.add_parser(
        "cost",
        help="what the provider billed: tokens x Mycel's pricing cache, per thread, model and day",
        description=(
            "Input, output, cache-read and cache-write tokens from every AI message's usage_metadata, "
            "priced as Mycel's monitor prices them (pricing_cache.json), per thread, model and day; "
            "names the calls without usage and the models without a price."
        ),
    )
    cost.add_argument("--since", metavar="DATE", help="only calls on or after DATE (YYYY-MM-DD)")
    cost.add_argument("--until", metavar="DATE", help="only calls on or before DATE (YYYY-MM-DD)")
    cost.add_argument("--json", action="store_true", help="print JSON")
    cost.set_defaults(handler="memory_core.cli.cost_cmd:run_cost")


PAGE_HELP = (
    "print the Context tab's very document as JSON: from the dashboard's fleet index as last summed (its "
    "age said), else walked; long lists cut as the page cuts them"
)


def _economics(subparsers: Any) -> None:
    calibration = subparsers.add_parser(
        "calibration",
        help="Mycel's token estimate against tiktoken and the provider's count, per model",
        description=(
            "Call by call, Mycel's estimate (characters / 2) of what it sent against tiktoken's count and "
            "the provider's input_tokens: the ratio's distribution per model and content kind, the calls "
            "whose real count crossed the limit or the real 70 % line while the estimate did not, and the "
            "context_limit (or dev's trigger_tokens) under which the real fill at the trigger is 70 %."
        ),
    )
    calibration.add_argument("--model", metavar="M", help="only this model's calls")
    calibration.add_argument("--json", action="store_true", help="print JSON")
    calibration.add_argument("--page", action="store_true", help=PAGE_HELP)
    calibration.set_defaults(handler="memory_core.cli.calibration_cmd:run_calibration")

    tools = subparsers.add_parser(
        "tools",
        help="which tools fill the window: share sent, trims, clears, spills, re-requests",
        description=(
            "Per tool name across the fleet: its share of what was sent, results trimmed and cleared and "
            "the characters removed, spills, and how often the agent asked again for what was just "
            "cleared (the sign that pruning is too aggressive)."
        ),
    )
    tools.add_argument("--json", action="store_true", help="print JSON")
    tools.add_argument("--page", action="store_true", help=PAGE_HELP)
    tools.set_defaults(handler="memory_core.cli.tools_cmd:run_tools")

    cache = subparsers.add_parser(
        "cache",
        help="the prompt-cache cost of pruning: where each request's prefix broke, and why",
        description=(
            "For each model call, the longest prefix shared with the previous call's request (after "
            "pruning and the summary), what broke it (a trim, a clear, a compaction, a new summary), and "
            "the tokens re-written to the provider's prompt cache, priced where the pricing cache allows."
        ),
    )
    target = cache.add_mutually_exclusive_group(required=True)
    target.add_argument("thread_id", nargs="?", metavar="THREAD_ID")
    target.add_argument("--all", action="store_true", help="every thread: totals per thread and fleet")
    add_settings_flags(cache, context_limit_default="default: the thread model's limit, as Mycel resolves it")
    cache.add_argument("--json", action="store_true", help="print JSON")
    cache.add_argument("--page", action="store_true", help=PAGE_HELP + " (with --all)")
    cache.set_defaults(handler="memory_core.cli.cache_cmd:run_cache")


def _around(subparsers: Any) -> None:
    search = subparsers.add_parser(
        "search",
        help="full-text search over every thread: messages, tool arguments and outputs, summaries, queue",
        description=(
            "Search the dashboard's own index (never Mycel's files; secrets are redacted before anything is "
            'indexed). "Quoted words" match as a phrase. Each result names its thread, the message\'s index '
            "in the thread's newest checkpoint, and a snippet."
        ),
    )
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--tool", metavar="T", help="only tool calls and results of this tool")
    search.add_argument("--thread", metavar="ID", help="only this thread")
    search.add_argument("--since", metavar="DATE", help="only messages written on or after DATE (YYYY-MM-DD)")
    search.add_argument(
        "--until", metavar="DATE", help="only messages written on or before DATE (YYYY-MM-DD)"
    )
    search.add_argument("--limit", metavar="N", help="at most N results (default 50)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler="memory_core.cli.search_cmd:run_search")

    export = subparsers.add_parser(
        "export",
        help="a thread (or one checkpoint) as a redacted JSON bundle or a Markdown transcript",
        description=(
            "Export THREAD_ID, redacted: --format json gives a self-contained bundle (messages, checkpoints, "
            "summaries, every model call with its pruning decisions, the config in force, integrity "
            "findings) that `plan --bundle` and `dry-run --bundle` read with no Mycel files present; "
            "--format md a readable transcript with the badges and summaries inline. Recorded in the "
            "audit log."
        ),
    )
    export.add_argument("thread_id", metavar="THREAD_ID")
    export.add_argument("--format", default="json", metavar="json|md", help="default json")
    export.add_argument("--checkpoint", metavar="CHECKPOINT_ID", help="this checkpoint instead of the head")
    export.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    export.add_argument("--actor", default=None, help="who to record in the audit log (default: $USER)")
    export.set_defaults(handler="memory_core.cli.export_cmd:run_export")

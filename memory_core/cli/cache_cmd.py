"""`mycel-memory cache THREAD_ID|--all [settings flags] [--json | --page]`: the prompt-cache cost of pruning.

Per call: the prefix shared with the previous request, what broke it and the tokens re-written (priced
where Mycel adds prompt caching and the pricing cache has cache prices); totals per cause. With settings
flags, the same under the proposed config (a replay) beside the current one (the record). The Context
screen's cache tab shows the same dicts (memory_core/app/prompt_cache.py).
"""

from __future__ import annotations

import argparse
from typing import Any

from memory_core.app.cost import pricing_of
from memory_core.app.errors import UnknownThread
from memory_core.app.prompt_cache import (
    KEPT,
    Propose,
    cache_for_page,
    fleet_cache,
    fleet_json,
    thread_cache,
    thread_json,
)
from memory_core.app.status import require_data
from memory_core.cli.common import CliError, print_json
from memory_core.cli.plan import settings_from_flags
from memory_core.cli.reading import kept_report, open_reader, warn, warn_lines
from memory_core.cli.table import print_table, short_id
from memory_core.economics.prompt_cache import CAUSES, Cause
from memory_core.memory_settings import MemorySettings

SETTING_FLAGS = (
    "runtime_config",
    "context_limit",
    "threshold",
    "soft_trim_chars",
    "hard_clear_threshold",
    "protect_recent",
    "keep_recent_tokens",
)


def proposal(args: argparse.Namespace) -> Propose | None:
    """The flags as a proposal over each thread's current settings; None without any flag. Bad values
    fail here, once, before any thread is read."""
    if all(getattr(args, name, None) in (None, "") for name in SETTING_FLAGS):
        return None
    settings_from_flags(args, base=MemorySettings())

    def propose(current: MemorySettings) -> MemorySettings:
        return settings_from_flags(args, base=current)

    return propose


def run_cache(args: argparse.Namespace) -> int:
    propose = proposal(args)
    if args.page and (not args.all or propose is not None):
        raise CliError("--page prints the tab's fleet view: use it with --all and no settings flags")
    reader = open_reader()
    require_data(reader.locations)
    pricing = pricing_of(reader)
    if args.page:
        kept = kept_report(args, reader, KEPT.name)
        print_json(fleet_json(cache_for_page(reader, book=pricing.book, kept=kept, deadline=None), pricing))
        return 0
    if args.all:
        fleet = fleet_cache(reader, book=pricing.book, propose=propose)
        document = fleet_json(fleet, pricing)
        if args.json:
            print_json(document)
            return 0
        warn_lines(pricing.notes)
        _print_fleet(document)
        return 0
    found = reader.get_thread(args.thread_id)
    if found.value is None or found.value.head_checkpoint_id is None:
        warn(found.problems)
        raise UnknownThread.named(args.thread_id)
    cache = thread_cache(reader, found.value, book=pricing.book, propose=propose)
    warn(cache.problems)
    document = thread_json(cache, pricing)
    if args.json:
        print_json(document)
        return 0
    warn_lines(pricing.notes)
    _print_thread(document)
    return 0


def _cause_rows(totals: dict[str, Any]) -> list[tuple[object, ...]]:
    return [
        (cause, t["calls"], t["rewritten_tokens"], t["cost_usd"] or "-")
        for cause, t in totals["by_cause"].items()
    ] + [("TOTAL", totals["calls"], totals["rewritten_tokens"], totals["cost_usd"] or "-")]


def _print_thread(document: dict[str, Any]) -> None:
    print(f"tokens: {document['unit']}. {document['assumption']}")
    print_table(
        ("CALL", "MODEL", "REQUEST", "SHARED", "CAUSE", "REWRITTEN", "COST USD"),
        [
            (
                c["call"],
                c["model"] or "-",
                c["request_messages"],
                "-" if c["shared_prefix_messages"] is None else c["shared_prefix_messages"],
                c["cause"] or "first call",
                c["rewritten_tokens"],
                c["cost_usd"] or ("-" if c["prompt_caching"] else "no caching"),
            )
            for c in document["calls"]
        ],
    )
    _print_totals(document["totals"])


def _print_totals(totals: dict[str, Any]) -> None:
    print()
    if totals["proposed"] is None:
        print_table(("CAUSE", "CALLS", "REWRITTEN", "COST USD"), _cause_rows(totals["current"]))
        return
    now, then = _cause_rows(totals["current"]), _cause_rows(totals["proposed"])
    print_table(
        ("CAUSE", "REWRITTEN NOW", "REWRITTEN PROPOSED", "COST NOW", "COST PROPOSED"),
        [(a[0], a[2], b[2], a[3], b[3]) for a, b in zip(now, then, strict=True)],
    )


def _print_fleet(document: dict[str, Any]) -> None:
    print(f"tokens: {document['unit']}. {document['assumption']}")
    causes = [str(c) for c in CAUSES if c is not Cause.NONE]
    print_table(
        ("THREAD", "CALLS", *(c.upper() for c in causes), "REWRITTEN", "COST USD"),
        [
            (
                short_id(t["thread_id"]),
                t["current"]["calls"],
                *(t["current"]["by_cause"][c]["rewritten_tokens"] for c in causes),
                t["current"]["rewritten_tokens"],
                t["current"]["cost_usd"] or "-",
            )
            for t in document["threads"]
        ],
    )
    _print_totals(document["totals"])

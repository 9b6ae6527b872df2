"""`mycel-memory health [--json]`: the readiness checks and the counts behind the shipped alert rules
(memory_core/app/health.py, the figures /metrics exports), for a cron job without Prometheus.

Exit status: 0 when no alert fires, 1 when one does (a store that does not answer included), 2 when the
command itself could not run (the CLI's usual error)."""

from __future__ import annotations

import argparse

from memory_core import figures as fmt
from memory_core.app.health import ACTIVE_WINDOW, health_json, health_of
from memory_core.cli.common import print_json
from memory_core.cli.reading import open_reader, warn
from memory_core.cli.table import print_table
from memory_core.stores.sqlite.connect import EVERY_ROW

FIRING = 1


def run_health(args: argparse.Namespace) -> int:
    reader = open_reader(row_cap=EVERY_ROW)
    health = health_of(reader, args.fleet_index())
    warn(health.problems)
    if args.json:
        print_json(health_json(health))
    else:
        print_table(
            ("CHECK", "STATE", "DETAIL"),
            [
                (c.name, "ok" if c.ok else c.kind, c.message or (c.kind if c.kind != "ok" else ""))
                for c in health.checks
            ],
        )
        print()
        print_table(
            ("ALERT", "NOW", "FIRING", "WATCHES"),
            [(a.name, fmt.count(a.count), "FIRING" if a.firing else "no", a.says) for a in health.alerts],
        )
        if health.figures is not None:
            found = health.figures
            size = sum(found.bytes_on_disk.values())
            print(
                f"\n{fmt.count(found.total_threads)} threads ({fmt.count(found.active)} active in the last "
                f"{ACTIVE_WINDOW.total_seconds() / 60:.0f} minutes), {fmt.count(found.over_fill)} over 90 % of their "
                f"window, {fmt.count(found.breaker_open)} with the breaker open, {fmt.size(size)} of checkpoints"
            )
    return FIRING if health.firing else 0

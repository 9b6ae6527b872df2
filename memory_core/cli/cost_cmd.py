"""`mycel-memory cost [--since DATE] [--until DATE] [--json]`: tokens x Mycel's pricing cache, per thread,
model and day (memory_core/app/cost.py `fleet_cost`, the Cost screen's very report).

In --json every `cost_usd` is an exact decimal string ("0.3091455"), never a float, so sums agree to
the last digit with Mycel's Decimal arithmetic; it is null where no price applies.
"""

from __future__ import annotations

import argparse

from memory_core import figures
from memory_core.app.cost import cost_document, fleet_cost
from memory_core.app.inputs import parse_day
from memory_core.app.status import require_data
from memory_core.cli.common import CliError, print_json
from memory_core.cli.reading import open_reader, warn, warn_lines
from memory_core.cli.table import print_table, short_id
from memory_core.economics.cost import Line


def run_cost(args: argparse.Namespace) -> int:
    since, until = parse_day(args.since, "since"), parse_day(args.until, "until")
    if since and until and since > until:
        raise CliError(f"--since {since} is after --until {until}")
    reader = open_reader()
    require_data(reader.locations)
    found = fleet_cost(reader, since=since, until=until)
    warn(found.problems)
    warn_lines(found.notes)
    report = found.report
    if args.json:
        print_json(cost_document(found))
        return 0
    print_table(_HEADERS, [_row("TOTAL", report.total)])
    if not report.total.calls and not report.without_usage:
        print("(no model calls in the period)")
        return 0
    print()
    print_table(
        ("MODEL", *_HEADERS[1:], "PRICE KEY", "MATCHED"),
        [
            (
                *_row(m.line.name, m.line),
                m.priced.key if m.priced else "-",
                m.priced.matched_by if m.priced else "no price",
            )
            for m in report.models
        ],
    )
    print()
    print_table(_HEADERS, [_row(short_id(t.name), t) for t in report.threads])
    print()
    print_table(_HEADERS, [_row(d.name, d) for d in report.days])
    for call in report.without_usage:
        where = f"call {call.call}" if call.call else f"{call.branch} message {call.message_id}"
        print(f"no usage: {short_id(call.thread_id)} {where}: {call.no_usage}")
    if report.book is not None and report.total.reasoning_usd:
        print(
            "reasoning tokens at the output price (Mycel's code prices none): "
            f"{figures.money(report.total.reasoning_usd)} ({figures.money_exact(report.total.reasoning_usd)})"
        )
    return 0


_HEADERS = ("", "CALLS", "INPUT", "OUTPUT", "REASONING", "CACHE READ", "CACHE WRITE", "COST")


def _row(name: str, line: Line) -> tuple[object, ...]:
    """Costs to the cent ("<$0.01" under it); --json has each exact."""
    u = line.usage
    counts = (line.calls, u.input, u.output, u.reasoning, u.cache_read, u.cache_write)
    return (name, *(figures.count(n) for n in counts), figures.money(line.cost_usd))

"""`mycel-memory tools [--json | --page]`: per tool name across the fleet, its share of what Mycel sent, results
trimmed and cleared with the characters removed, spills and re-requests after a clear
(memory_core/app/tools.py `fleet_tool_pressure`, the Tool-output pressure screen's very report).
"""

from __future__ import annotations

import argparse

from memory_core import figures
from memory_core.app.status import require_data
from memory_core.app.tools import KEPT, fleet_tool_pressure, tools_document, tools_for_page
from memory_core.cli.common import print_json
from memory_core.cli.reading import kept_report, open_reader, warn
from memory_core.cli.table import print_table, short_id
from memory_core.economics.tool_pressure import UNIT


def run_tools(args: argparse.Namespace) -> int:
    reader = open_reader()
    require_data(reader.locations)
    if args.page:
        page = tools_for_page(reader, kept=kept_report(args, reader, KEPT.name), deadline=None)
        warn(page.problems)
        print_json(page.document)
        return 0
    found = fleet_tool_pressure(reader)
    warn(found.problems)
    report = found.report
    if args.json:
        print_json(tools_document(found))
        return 0
    if not report.tools:
        print(f"(no tool results sent in {report.calls} model calls of {report.threads} threads)")
        return 0
    print_table(
        (
            "TOOL",
            "SENT SHARE",
            "SENT CHARS",
            "RESULTS",
            "TRIMMED",
            "CLEARED",
            "CHARS REMOVED",
            "SPILLS",
            "RE-REQUESTS",
        ),
        [
            (
                line.tool,
                figures.percent(line.sent_share, decimals=1),
                figures.count(line.total.sent_chars),
                figures.count(line.total.results),
                figures.count(line.total.trimmed),
                figures.count(line.total.cleared),
                figures.count(line.total.chars_removed),
                figures.count(line.total.spills),
                figures.count(line.total.re_requests),
            )
            for line in report.tools
        ],
    )
    print(
        f"{figures.count(report.sent_chars)} {UNIT}, over {figures.count(report.calls)} model calls of "
        f"{figures.count(report.threads)} threads"
    )
    if report.re_requests:
        print()
        print_table(
            ("THREAD", "TOOL", "ASKED AGAIN", "CLEARED RESULT", "CLEARED AT", "ASKED AT"),
            [
                (
                    short_id(ask.thread_id),
                    ask.tool,
                    ask.kind,
                    f"message {ask.cleared_index}",
                    f"call {ask.cleared_call}",
                    f"call {ask.asked_call}",
                )
                for ask in report.re_requests
            ],
        )
    return 0

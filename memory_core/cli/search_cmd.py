"""`mycel-memory search QUERY [--tool T] [--thread ID] [--since DATE] [--until DATE] [--limit N] [--json]`:
full-text search over every thread (memory_core/app/search.py, as the Search screen shows it)."""

from __future__ import annotations

import argparse
import sys

from memory_core.app.inputs import parse_bounded, parse_day
from memory_core.app.search import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    QueryError,
    SearchHit,
    SearchIndexError,
    day_after,
    day_start,
    results_json,
    search,
)
from memory_core.app.status import require_data
from memory_core.cli.common import CliError, print_json
from memory_core.cli.reading import open_reader, warn
from memory_core.cli.table import print_table, short_id
from memory_core.stores.locations import StoreRole


def run_search(args: argparse.Namespace) -> int:
    since, until = parse_day(args.since, "since"), parse_day(args.until, "until")
    if since and until and since > until:
        raise CliError(f"--since {since} is after --until {until}")
    limit = parse_bounded(args.limit, "limit", low=1, high=MAX_LIMIT, default=DEFAULT_LIMIT)
    reader = open_reader()
    require_data(reader.locations)
    try:
        results = search(
            reader,
            args.query,
            tool=args.tool or None,
            thread=args.thread or None,
            since=day_start(since) if since else None,
            until=day_after(until) if until else None,
            limit=limit,
        )
    except (QueryError, SearchIndexError) as exc:
        raise CliError(str(exc)) from None
    if not results.hits:
        for problem in results.problems:
            if problem.store == StoreRole.MAIN.value and not problem.expected_absence:
                raise CliError(problem.message)
    warn(results.problems)
    if said := results.refresh.describe():
        print(f"note: {said}", file=sys.stderr)  # on stderr, so --json stays the list
    if results.notice:
        # A very common query ranks only the newest matches: said on stderr, so --json stays the list.
        print(f"note: {results.notice}", file=sys.stderr)
    if args.json:
        print_json(results_json(results))
        return 0
    if not results.hits:
        print("no matches")
        return 0
    print_table(
        ("#", "THREAD", "INDEX", "KIND", "TOOL", "SNIPPET"),
        [
            (h.rank, short_id(h.thread_id), h.index, h.kind, h.tool or "", _marked(h)[:160])
            for h in results.hits
        ],
    )
    if results.more:
        print(f"(more than {limit} matches: narrow the query or raise --limit)")
    return 0


def _marked(hit: SearchHit) -> str:
    # The terminal has no <mark>: the matches are bracketed, the snippet kept on one line.
    text, position = [], 0
    for start, end in hit.marks:
        text += [hit.snippet[position:start], "[", hit.snippet[start:end], "]"]
        position = end
    text.append(hit.snippet[position:])
    return " ".join("".join(text).split())

"""The Cost report from the fleet index: the usage its record pass keeps per thread (RecordTally.usage),
summed and priced by the one summation (economics.cost.group_report), so a warm Cost page costs the period's
sums and one page of threads, never a walk of the fleet's checkpoints.

The index answers once its head pass is complete under the current version (as the Threads list's). A look
first catches up the heads that moved, and the page reads up to INLINE_RECORDS of their records itself, so a
thread that just made a call is priced at once; a fleet that moved more is the background builder's, and the
report says how many threads' calls are as of an older head meanwhile (`records_pending`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Protocol

from memory_core.app.cost import FleetCost, pricing_of
from memory_core.app.fleet_calls import FleetProgress
from memory_core.app.fleet_index import FleetIndexStore, look, store_name
from memory_core.app.fleet_records import build_records
from memory_core.economics.cost import CallUsage, Price, UsageGroup, day_in_period, group_report
from memory_core.stores.reader import MycelReader

THREADS_SHOWN = 50  # the costliest threads a page shows (the rest: the next pages)
UNMETERED_SHOWN = 100  # calls without usage a page names (their count is whole)
INLINE_RECORDS = 20  # records of moved threads a page reads itself before it answers


class CostIndex(Protocol):
    """The fleet index's kept usage, by the database that keeps it (mycel_dashboard/web/fleet_usage.py)."""

    def usage(self, store: str) -> list[UsageGroup]:
        """Every thread's groups summed per (model, day, branch kind); no thread named."""
        ...

    def unmetered_days(self, store: str) -> dict[date | None, int]:
        """Calls without usage per UTC day (None: no time)."""
        ...

    def unmetered(self, store: str, since: date | None, until: date | None, limit: int) -> list[CallUsage]:
        """Up to `limit` calls without usage in the period, newest first."""
        ...

    def costliest(
        self,
        store: str,
        since: date | None,
        until: date | None,
        prices: Mapping[str, Price] | None,
        offset: int,
        limit: int,
    ) -> tuple[int, list[str]]:
        """(threads with usage in the period, one page of their ids by cost at `prices`, then tokens, then id;
        by tokens without prices)."""
        ...

    def thread_usage(self, store: str, thread_ids: Sequence[str]) -> list[UsageGroup]:
        """These threads' own groups."""
        ...


def indexed_cost(
    reader: MycelReader,
    index: FleetIndexStore,
    costs: CostIndex,
    *,
    since: date | None,
    until: date | None,
    offset: int = 0,
    limit: int = THREADS_SHOWN,
    read_later: Callable[[bool], object] = lambda full: None,
) -> FleetCost | None:
    """The Cost report from the index, with one page of threads from `offset`; None when the index cannot
    answer (not built, or under another version): the caller walks the fleet. `read_later(full)` starts the
    background reading of the records left due (and a full pass, when the look asks for one)."""
    freshness = look(reader, index)
    if not freshness.ready:
        return None
    store = store_name(reader)
    if freshness.records_due and INLINE_RECORDS:
        build_records(reader, index, limit=INLINE_RECORDS)  # None: the builder is reading them already
    pending = index.records_pending(store)
    if pending or freshness.needs_builder:
        read_later(freshness.needs_builder)
    pricing = pricing_of(reader)
    book = pricing.book
    summed = group_report(costs.usage(store), (), book, since=since, until=until)
    prices = None
    if book is not None:
        prices = {m.line.name: m.priced.price for m in summed.models if m.priced is not None}
    count, shown = costs.costliest(store, since, until, prices, offset, limit)
    lines = group_report(costs.thread_usage(store, shown), (), book, since=since, until=until).threads
    unmetered = costs.unmetered_days(store)
    report = replace(
        summed,
        threads=lines,
        thread_count=count,
        without_usage=tuple(costs.unmetered(store, since, until, UNMETERED_SHOWN)),
        without_usage_count=sum(n for day, n in unmetered.items() if day_in_period(day, since, until)),
        undated_calls=summed.undated_calls + unmetered.get(None, 0),
    )
    indexed = freshness.state.total if freshness.state is not None else 0
    progress = FleetProgress(analysed=max(0, indexed - pending), pending=0)
    return FleetCost(
        report,
        pricing.path,
        pricing.notes,
        tuple(freshness.problems),
        progress,
        records_pending=pending,
        threads_offset=offset,
    )

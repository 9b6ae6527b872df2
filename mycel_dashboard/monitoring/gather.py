"""The server's Health (memory_core/app/health.py): its own database, each configured store, the fleet
index's lag and the fleet's figures from the index's tallies. A scrape brings the index up to the store
first, as the Threads list does (one question, and at most fleet_index.INLINE_MOVED threads recomputed);
the readiness check only measures."""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import connection

from memory_core.app.cost import pricing_of
from memory_core.app.fleet_index import BUILD_ROW_CAP, build, look, store_name
from memory_core.app.fleet_records import INLINE_RECORDS, build_records
from memory_core.app.health import (
    Check,
    GroupTally,
    Health,
    IndexLag,
    active_from,
    cost_of_usage,
    figures_of,
    index_check,
    index_lag,
    lag_after_look,
    store_bytes,
    store_checks,
)
from memory_core.economics.cost import UsageGroup
from memory_core.records import StoreProblem
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.monitoring.tallies import DashboardFleetTallies
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader, start_builder
from mycel_dashboard.web.source import open_source


def database_check() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # noqa: BLE001 - an unreachable database is the answer, never a 500
        return Check("dashboard database", False, "unreachable", type(exc).__name__)
    return Check("dashboard database", True)


def server_health(*, bring_up: bool) -> Health:
    """Every check and figure; `bring_up`: look at the store first, build a small fleet's index inline."""
    source, reader = open_source()
    checks = [database_check(), *store_checks(source.locations, timeout_s=settings.DASHBOARD_PROBE_TIMEOUT_S)]
    if not all(c.ok for c in checks):
        # No index question to a store or database that failed its probe: it would only wait to fail.
        return Health(None, None, checks)
    index = DashboardFleetIndex()
    problems: list[StoreProblem] = []
    caught_up = _bring_up(reader, index, source.locations, problems) if bring_up else None
    # A look that caught every moved thread up has just asked the store the lag's own question.
    lag = caught_up if caught_up is not None else index_lag(reader, index, problems)
    checks.append(index_check(lag, max_lag_s=settings.DASHBOARD_READY_INDEX_LAG_S))
    figures = None
    if lag.complete:
        groups, usage = kept_tallies(index, store_name(reader))
        figures = figures_of(groups, *cost_of_usage(usage, pricing_of(reader).book))
    return Health(figures, lag, checks, problems, store_bytes(reader, problems))


# The tallies read every indexed row (about a second at 100,000 threads on SQLite: tests/benchmarks/
# bench_metrics.py). A process keeps them while the index's state row is unchanged (the builder and a look
# save it after what they put: its watermark, counts or finish time move) and TALLIES_KEPT_S at most, which
# also bounds what a look's late-committed catch-up, which moves no watermark, may leave unseen, and how
# late a thread that fell idle is counted so (against health.ACTIVE_WINDOW's 10 minutes).
TALLIES_KEPT_S = 30.0
_KEPT: dict[str, tuple[object, float, tuple[list[GroupTally], list[UsageGroup]]]] = {}
_KEPT_LOCK = threading.Lock()


def kept_tallies(index: DashboardFleetIndex, store: str) -> tuple[list[GroupTally], list[UsageGroup]]:
    state = index.state(store)
    key = (state.version, state.watermark, state.finished_at, state.done, state.total) if state else None
    now = time.monotonic()
    with _KEPT_LOCK:
        kept = _KEPT.get(store)
    if kept is not None and kept[0] == key and now - kept[1] < TALLIES_KEPT_S:
        return kept[2]
    tallies = DashboardFleetTallies()
    found = (tallies.tallies(store, active_since=active_from()), tallies.usage(store))
    with _KEPT_LOCK:
        _KEPT[store] = (key, now, found)
    return found


def _bring_up(
    reader: MycelReader, index: DashboardFleetIndex, locations: MycelLocations, problems: list[StoreProblem]
) -> IndexLag | None:
    """Look (and build a small fleet's index); the index's lag when the look left nothing behind."""
    freshness = look(reader, index)
    problems.extend(freshness.problems)
    store = store_name(reader)
    if freshness.ready and not freshness.needs_builder:
        if freshness.records_due:  # the heads it caught up: their records are the background's work
            start_builder(locations, store, full=False)
        return lag_after_look(freshness)
    if not freshness.ready:
        total, _ = reader.backend.newest_heads(problems, limit=1, offset=0, by_id=False, descending=True)
        if total < settings.DASHBOARD_FLEET_INDEX_FROM:
            # A fleet the Threads list would list in memory: its index is built now, at once, and its
            # newest records too; any more are read in the background.
            build(lambda cap: builder_reader(locations, cap), index)
            read = build_records(builder_reader(locations, BUILD_ROW_CAP), index, limit=INLINE_RECORDS)
            if read is not None and read >= INLINE_RECORDS:
                start_builder(locations, store, full=False)
            return None
    start_builder(locations, store)
    return None

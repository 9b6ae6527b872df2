"""The time budget of the fleet report pages (calibration, tool pressure, prompt cache, cost).

A page answers from the fleet index's kept sum when there is one (`kept_report`). Until then, a cold report
over a big fleet takes minutes, past gunicorn's timeout: each page analyses threads newest first until
`DASHBOARD_FLEET_BUDGET_S` has passed, shows what it has, and the next request goes on from there
(memory_core/app/fleet_calls.py keeps every thread's reduction).
"""

from __future__ import annotations

import time

from memory_core.app.fleet_calls import FleetProgress, progress_json
from memory_core.app.fleet_index import store_name
from memory_core.app.kept_reports import Kept, indexed_report
from memory_core.stores.reader import MycelReader
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, start_builder
from mycel_dashboard.web.source import DataSource


def fleet_deadline(budget_s: float) -> float:
    """The `time.monotonic()` time a fleet page stops analysing new threads: a view asks first thing,
    so this is the request's start (the middleware before it only reads the session) plus the budget."""
    return time.monotonic() + budget_s


def progress_context(progress: FleetProgress, *, reload_url: str) -> dict[str, object]:
    """`analysed_threads` and `pending_threads` (as in the CLI's --json), and what the pending note needs."""
    return {**progress_json(progress), "total_threads": progress.total, "reload_url": reload_url}


def kept_report(source: DataSource, reader: MycelReader, report: str) -> Kept | None:
    """The report's documents as the fleet index last summed them (the background reads and sums what moved
    since), None when the index has no sum yet: the page walks the fleet."""
    store = store_name(reader)
    return indexed_report(
        reader,
        DashboardFleetIndex(),
        report,
        read_later=lambda full: start_builder(source.locations, store, full=full),
    )

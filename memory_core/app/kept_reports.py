"""The Context tabs' fleet reports (calibration, tool pressure, prompt cache) kept in the fleet index.

Each report is a reduction of every thread's record summed over the fleet. The record pass
(memory_core/app/fleet_records.py) reads a thread's record once per head for every purpose, so it also
keeps each report's reduction of it (`thread_reductions`, payloads of plain JSON). The builder then sums
them into each report's page documents (`refresh_reports`, one builder across instances), and a page reads
those documents: a warm page costs one row, never a walk of the fleet. Between a thread's move and the
builder's next sum, the page shows the documents as of the sum before and says how far behind they are.

A page document is the report's `--json` with its long lists cut to what a page shows, their lengths kept
(`page_*` in each report's module); `mycel-memory … --json` prints the lists whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memory_core.app.calls import ThreadCalls
from memory_core.app.fleet_calls import FleetProgress, recorded_thread
from memory_core.app.fleet_index import FleetIndexStore, look, store_name
from memory_core.records import ThreadRow
from memory_core.stores.reader import MycelReader

log = logging.getLogger(__name__)

# A report's reduction of one record (JSON), and its page documents from every thread's reduction.
Reduce = Callable[[MycelReader, ThreadRow, ThreadCalls], Any]
Sum = Callable[[Iterator[tuple[str, Any]]], dict[str, Any]]


@dataclass(frozen=True, slots=True)
class KeptReport:
    name: str
    reduce: Reduce
    sum: Sum


def thread_reductions(
    reader: MycelReader, row: ThreadRow, reports: Sequence[KeptReport]
) -> tuple[tuple[str, Any], ...]:
    """Each report's reduction of the thread's record at its head (read once, for them all)."""
    record = recorded_thread(reader, row)
    return tuple((report.name, report.reduce(reader, row, record)) for report in reports)


def refresh_reports(store: str, index: FleetIndexStore, reports: Sequence[KeptReport]) -> int:
    """Sum the reports whose reductions moved since their last sum (the builder's, under its lock); how
    many were summed."""
    summed = 0
    for report in reports:
        state = index.report_state(store, report.name)
        if state is None or state.summed_generation == state.generation:
            continue
        counted = _Counted(index.reductions(store, report.name))
        documents = report.sum(iter(counted))
        index.save_sum(store, report.name, state.generation, counted.count, documents)
        summed += 1
    if summed:
        log.info("fleet index: %d reports of %s summed", summed, store)
    return summed


class _Counted:
    def __init__(self, items: Iterator[tuple[str, Any]]) -> None:
        self.items = items
        self.count = 0

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for item in self.items:
            self.count += 1
            yield item


@dataclass(frozen=True, slots=True)
class Kept:
    """A report's page documents from the index, and how current they are."""

    documents: dict[str, Any]
    progress: FleetProgress  # analysed: the threads summed; pending: none (the sum is whole)
    summed_at: datetime | None
    behind: int  # threads whose records moved since (read, or being read, in the background)
    resumming: bool  # reductions moved since the sum: the builder sums again

    def note(self) -> dict[str, object]:
        """What a page says of the documents' age (in its context, and the CLI's --json)."""
        return {
            "kept_as_of": self.summed_at.astimezone(UTC).isoformat() if self.summed_at else None,
            "kept_behind_threads": self.behind,
            "kept_summing_again": self.resumming,
        }


def kept_documents(store: str, index: FleetIndexStore, report: str, *, records_pending: int) -> Kept | None:
    """The report's documents as last summed, None before the first sum (the page walks the fleet)."""
    state = index.report_state(store, report)
    if state is None or state.documents is None:
        return None
    return Kept(
        state.documents,
        FleetProgress(analysed=state.analysed, pending=0),
        state.summed_at,
        behind=records_pending,
        resumming=state.summed_generation != state.generation,
    )


def indexed_report(
    reader: MycelReader, index: FleetIndexStore, report: str, *, read_later: Callable[[bool], object]
) -> Kept | None:
    """The report's documents from the index when it can answer, after a look (which catches up the heads
    that moved); None when it cannot yet (not built, or never summed): the page walks the fleet. Records and
    sums left to do are the background's (`read_later(full)`)."""
    freshness = look(reader, index)
    if not freshness.ready:
        return None
    store = store_name(reader)
    pending = index.records_pending(store)
    kept = kept_documents(store, index, report, records_pending=pending)
    if kept is None or pending or kept.resumming or freshness.needs_builder:
        read_later(freshness.needs_builder)
    return kept

"""The kept fleet reports' reductions and sums (memory_core/app/kept_reports.py) in the dashboard's database:
FleetReduction per thread, FleetReport per report with its generation, bumped in the transaction that
writes or drops reductions, so a sum knows whether it is behind."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import F

from memory_core.app.fleet_index import KeptState, RecordTally
from mycel_dashboard.models import FleetReduction, FleetReport, FleetThread

_CHUNK = 2_000  # reductions read per query when summing


def put_reductions(store: str, tallies: Sequence[tuple[str, RecordTally]]) -> None:
    """Keep each tally's reductions (replacing the thread's earlier ones), in the caller's transaction."""
    rows = [
        FleetReduction(store=store, report=report, thread_id=thread_id, head=tally.head, payload=payload)
        for thread_id, tally in tallies
        for report, payload in tally.reports
    ]
    if not rows:
        return
    threads = sorted({row.thread_id for row in rows})
    for start in range(0, len(threads), _CHUNK):
        FleetReduction.objects.filter(store=store, thread_id__in=threads[start : start + _CHUNK]).delete()
    FleetReduction.objects.bulk_create(rows, batch_size=500)
    _moved(store, {row.report for row in rows})


def drop_reductions(store: str, thread_ids: Sequence[str]) -> None:
    """Forget the reductions of threads the store no longer holds."""
    with transaction.atomic():
        gone = FleetReduction.objects.filter(store=store, thread_id__in=list(thread_ids))
        reports = set(gone.values_list("report", flat=True).distinct())
        if reports:
            gone.delete()
            _moved(store, reports)


def _moved(store: str, reports: set[str]) -> None:
    for report in sorted(reports):  # one order, so two writers never wait on each other's rows
        FleetReport.objects.get_or_create(store=store, report=report)
        FleetReport.objects.filter(store=store, report=report).update(generation=F("generation") + 1)


def report_state(store: str, report: str) -> KeptState | None:
    row = FleetReport.objects.filter(store=store, report=report).first()
    if row is None:
        return None
    return KeptState(row.generation, row.summed_generation, row.summed_at, row.analysed, row.documents)


def reductions(store: str, report: str) -> Iterator[tuple[str, Any]]:
    """Every kept reduction of the report, newest activity first as the fleet is walked (a sum in another
    order would round its floats otherwise), fetched in chunks."""
    order = FleetThread.objects.filter(store=store).order_by(
        F("updated_at").desc(nulls_last=True), "thread_id"
    )
    thread_ids = list(order.values_list("thread_id", flat=True))
    for start in range(0, len(thread_ids), _CHUNK):
        part = thread_ids[start : start + _CHUNK]
        found = dict(
            FleetReduction.objects.filter(store=store, report=report, thread_id__in=part).values_list(
                "thread_id", "payload"
            )
        )
        for thread_id in part:
            if thread_id in found:
                yield thread_id, found[thread_id]


def save_sum(store: str, report: str, generation: int, analysed: int, documents: dict[str, Any]) -> None:
    FleetReport.objects.filter(store=store, report=report).update(
        summed_generation=generation, summed_at=datetime.now(UTC), analysed=analysed, documents=documents
    )

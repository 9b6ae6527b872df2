"""The fleet index in the dashboard's own database (FleetIndexStore of memory_core/app/fleet_index.py),
and the builder that fills it in the background.

Every instance and worker sharing the database shares the index. One builder runs at a time across all
of them: a session advisory lock when the database is PostgreSQL, a lease on the store's state row on
SQLite (renewed at each step of the build, so a builder that died is replaced once its lease ran out).
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, fields
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q, QuerySet

from memory_core.app.context_reports import CONTEXT_REPORTS
from memory_core.app.fleet_index import (
    BUILD_ROW_CAP,
    RECOMPACTS,
    FleetIndexStore,
    FootprintSums,
    IndexedThread,
    IndexQuery,
    IndexState,
    KeptState,
    RecordTally,
    build,
)
from memory_core.app.fleet_records import build_records
from memory_core.app.kept_reports import refresh_reports
from memory_core.app.storage import StorageSort
from memory_core.app.thread_settings import thread_model
from memory_core.economics.cost import CallUsage, UsageGroup
from memory_core.footprint.growth import Footprint
from memory_core.records import ThreadRow
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.models import FleetIndexState, FleetThread
from mycel_dashboard.web.fleet_reports import (
    drop_reductions,
    put_reductions,
    reductions,
    report_state,
    save_sum,
)
from mycel_dashboard.web.fleet_storage import footprint_columns, footprint_of, footprint_sums, footprints
from mycel_dashboard.web.fleet_usage import drop_usage, put_usage, usage_of

log = logging.getLogger(__name__)

# Records read between two sums of the Context reports while a record pass runs (at 100,000 threads on
# PostgreSQL: a sum every ~20 min of reading, each ~30 s).
SUM_EVERY = 20_000
LEASE = timedelta(minutes=2)  # a SQLite builder that stops renewing is replaced after this
_STATE_FIELDS = ("version", "complete", "watermark", "done", "total", "started_at", "finished_at", "error")
_ROW_FIELDS = tuple(f.name for f in fields(ThreadRow))
_SAVE_BATCH = 1000


def _row_json(row: ThreadRow) -> dict[str, Any]:
    data = asdict(row)
    data["updated_at"] = row.updated_at.isoformat() if row.updated_at else None
    return data


def _row_of(data: dict[str, Any]) -> ThreadRow:
    values = {k: v for k, v in data.items() if k in _ROW_FIELDS}
    if values.get("updated_at"):
        values["updated_at"] = datetime.fromisoformat(values["updated_at"])
    return ThreadRow(**values)


def _key(text: str | None) -> str | None:
    return text.lower() if text else None


class DashboardFleetIndex(FleetIndexStore):
    """The index's tables (FleetThread, FleetIndexState) through the ORM."""

    def __init__(self) -> None:
        self._holder = f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"

    def state(self, store: str) -> IndexState | None:
        found = FleetIndexState.objects.filter(store=store).first()
        if found is None or not found.version:
            return None
        return IndexState(store, **{name: getattr(found, name) for name in _STATE_FIELDS})

    def save_state(self, state: IndexState) -> None:
        values: dict[str, Any] = {name: getattr(state, name) for name in _STATE_FIELDS}
        if self._leasing(state.store):
            values["lease_until"] = datetime.now(UTC) + LEASE
        FleetIndexState.objects.update_or_create(store=state.store, defaults=values)

    def indexed_heads(
        self, store: str, thread_ids: Iterable[str] | None
    ) -> dict[str, tuple[str | None, int, str]]:
        columns = ("thread_id", "head_checkpoint_id", "checkpoints", "version")
        if thread_ids is None:
            rows: Iterable[tuple[Any, ...]] = FleetThread.objects.filter(store=store).values_list(*columns)
            return {t: (h, n, v) for t, h, n, v in rows}
        wanted = list(thread_ids)
        found: dict[str, tuple[str | None, int, str]] = {}
        for start in range(0, len(wanted), _SAVE_BATCH):
            part = wanted[start : start + _SAVE_BATCH]
            for t, h, n, v in FleetThread.objects.filter(store=store, thread_id__in=part).values_list(
                *columns
            ):
                found[t] = (h, n, v)
        return found

    def put(self, store: str, threads: Sequence[IndexedThread]) -> None:
        objects = [self._model(store, t) for t in threads]
        for start in range(0, len(objects), _SAVE_BATCH):
            with transaction.atomic():
                FleetThread.objects.bulk_create(
                    objects[start : start + _SAVE_BATCH],
                    update_conflicts=True,
                    unique_fields=["store", "thread_id"],
                    # A thread's record tally stays when its head moves: the record pass replaces it.
                    update_fields=[
                        f.name
                        for f in FleetThread._meta.concrete_fields
                        if f.name not in ("id", "store", "thread_id") and not f.name.startswith("record_")
                    ],
                )

    @staticmethod
    def _model(store: str, indexed: IndexedThread) -> FleetThread:
        row = indexed.row
        flags = indexed.flags
        return FleetThread(
            store=store,
            thread_id=row.thread_id,
            head_checkpoint_id=row.head_checkpoint_id,
            checkpoints=row.checkpoints,
            version=indexed.version,
            updated_at=row.updated_at,
            name_key=_key(row.name),
            model_key=_key(row.model),
            thread_model=thread_model(row),
            messages=row.messages,
            bytes_on_disk=row.bytes_on_disk,
            estimated_tokens=indexed.estimated_tokens,
            context_limit=indexed.context_limit,
            fill=indexed.fill,
            pruned=indexed.pruned,
            flags="," + ",".join(flags) + "," if flags else "",
            flag_count=len(flags),
            row=_row_json(row),
            **footprint_columns(indexed.footprint),
        )

    def records_due(self, store: str, limit: int) -> list[str]:
        due = _due(store).order_by(F("updated_at").desc(nulls_last=True), "thread_id")
        return list(due.values_list("thread_id", flat=True)[:limit])

    def records_pending(self, store: str) -> int:
        return _due(store).count()

    def put_records(self, store: str, tallies: Sequence[tuple[IndexedThread, RecordTally]]) -> None:
        with transaction.atomic():
            kept: list[tuple[str, RecordTally]] = []
            for thread, tally in tallies:
                values = {f"record_{name}": getattr(tally, name) for name in _RECORD_FIELDS}
                if FleetThread.objects.filter(
                    store=store,
                    thread_id=thread.thread_id,
                    head_checkpoint_id=tally.head,
                    version=thread.version,
                ).update(**values, record_version=thread.version):
                    kept.append((thread.thread_id, tally))
            put_usage(store, kept)
            put_reductions(store, kept)

    def drop_except(self, store: str, keep: set[str]) -> int:
        held = set(FleetThread.objects.filter(store=store).values_list("thread_id", flat=True))
        gone = list(held - keep)
        for start in range(0, len(gone), _SAVE_BATCH):
            FleetThread.objects.filter(store=store, thread_id__in=gone[start : start + _SAVE_BATCH]).delete()
            drop_usage(store, gone[start : start + _SAVE_BATCH])
            drop_reductions(store, gone[start : start + _SAVE_BATCH])
        return len(gone)

    def report_state(self, store: str, report: str) -> KeptState | None:
        return report_state(store, report)

    def reductions(self, store: str, report: str) -> Iterator[tuple[str, Any]]:
        return reductions(store, report)

    def save_sum(
        self, store: str, report: str, generation: int, analysed: int, documents: dict[str, Any]
    ) -> None:
        save_sum(store, report, generation, analysed, documents)

    def page(self, store: str, query: IndexQuery) -> tuple[int, int, list[IndexedThread]]:
        every = FleetThread.objects.filter(store=store)
        matching = _filtered(every, query)
        shown = _page_rows(matching, query)
        total = matching.count()
        all_threads = total if matching is every else every.count()
        usage = usage_of(store, [t.thread_id for t in shown if t.record_head is not None])
        return total, all_threads, [_indexed(t, *usage.get(t.thread_id, ((), ()))) for t in shown]

    def footprint_sums(self, store: str, turns_ahead: int) -> tuple[dict[str, FootprintSums], int]:
        return footprint_sums(store, turns_ahead)

    def footprints(
        self, store: str, sort: StorageSort, turns_ahead: int, offset: int, limit: int
    ) -> list[tuple[str, str | None, Footprint]]:
        return footprints(store, sort, turns_ahead, offset, limit)

    @contextmanager
    def builder_lock(self, store: str) -> Iterator[bool]:
        if connection.vendor == "postgresql":
            with self._advisory(store) as held:
                yield held
            return
        with self._lease(store) as held:
            yield held

    @contextmanager
    def _advisory(self, store: str) -> Iterator[bool]:
        key = int.from_bytes(
            hashlib.blake2b(f"fleet-index:{store}".encode(), digest_size=8).digest(), "big", signed=True
        )
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [key])
            (held,) = cursor.fetchone()
        try:
            yield bool(held)
        finally:
            if held:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s)", [key])

    @contextmanager
    def _lease(self, store: str) -> Iterator[bool]:
        now = datetime.now(UTC)
        FleetIndexState.objects.get_or_create(store=store, defaults={"version": ""})
        taken = (
            FleetIndexState.objects.filter(store=store)
            .filter(Q(builder="") | Q(lease_until__lt=now) | Q(lease_until__isnull=True))
            .update(builder=self._holder, lease_until=now + LEASE)
        )
        try:
            yield taken == 1
        finally:
            if taken == 1:
                FleetIndexState.objects.filter(store=store, builder=self._holder).update(
                    builder="", lease_until=None
                )

    def _leasing(self, store: str) -> bool:
        return (
            connection.vendor != "postgresql"
            and FleetIndexState.objects.filter(store=store, builder=self._holder).exists()
        )


def _due(store: str) -> QuerySet[FleetThread]:
    """Threads with a head whose record tally was not read at it (models.RECORD_DUE, kept as `record_due`)."""
    return FleetThread.objects.filter(store=store, record_due=True)


def _filtered(every: QuerySet[FleetThread], query: IndexQuery) -> QuerySet[FleetThread]:
    matching = every
    if query.needle:
        matching = matching.filter(Q(thread_id__icontains=query.needle) | Q(name_key__contains=query.needle))
    if query.flag == RECOMPACTS:
        matching = matching.filter(record_recompacting=True)
    elif query.flag:
        matching = matching.filter(flags__contains=f",{query.flag},")
    if query.thread_ids is not None:
        matching = matching.filter(thread_id__in=list(query.thread_ids))
    return matching


_SORT_COLUMNS = {
    "thread": None,
    "name": "name_key",
    "model": "model_key",
    "messages": "messages",
    "checkpoints": "checkpoints",
    "updated": "updated_at",
    "bytes": "bytes_on_disk",
    "fill": "fill",
    "flags": "flag_count",
}


_NEVER_NULL = {"messages", "checkpoints", "bytes_on_disk", "flag_count"}


def _sort_column(query: IndexQuery) -> str | None:
    column = _SORT_COLUMNS.get(query.sort, "updated_at")
    if column == "fill" and query.context_limit:
        column = "estimated_tokens"  # one limit for every thread: fill orders as the estimate does
    return column


def _page_rows(matching: QuerySet[FleetThread], query: IndexQuery) -> list[FleetThread]:
    """One page in the list's order: the column, unknown values last whichever the direction (in the
    thread id's own order, A→Z), then the thread id. Rows with a value and rows without are read apart,
    so each part walks its index ((store, column, thread_id)) instead of sorting the fleet."""
    column = _sort_column(query)
    tie = "-thread_id" if query.descending else "thread_id"
    start, end = query.offset, query.offset + query.limit
    if column is None:
        return list(matching.order_by(tie)[start:end])
    value = F(column).desc() if query.descending else F(column).asc()
    if column in _NEVER_NULL:
        return list(matching.order_by(value, tie)[start:end])
    known = matching.filter(**{f"{column}__isnull": False})
    shown = list(known.order_by(value, tie)[start:end])
    if len(shown) == query.limit:
        return shown
    # The page reaches past the rows with a value: the rest of it from the rows without one.
    known_count = start + len(shown) if shown else known.count()
    unknown = matching.filter(**{f"{column}__isnull": True}).order_by("thread_id")
    return shown + list(unknown[max(0, start - known_count) : end - known_count])


# Kept in their own tables: the usage (web/fleet_usage.py), the reports' reductions (web/fleet_reports.py).
_RECORD_FIELDS = tuple(f.name for f in fields(RecordTally) if f.name not in ("usage", "unmetered", "reports"))


def _indexed(
    stored: FleetThread, usage: tuple[UsageGroup, ...] = (), unmetered: tuple[CallUsage, ...] = ()
) -> IndexedThread:
    record = None
    if stored.record_head is not None:
        values = {name: getattr(stored, f"record_{name}") for name in _RECORD_FIELDS}
        record = RecordTally(**values, usage=usage, unmetered=unmetered)
    return IndexedThread(
        _row_of(stored.row),
        stored.estimated_tokens,
        stored.context_limit,
        stored.pruned,
        stored.version,
        record,
        footprint_of(stored),
    )


# -- the builder in the background ------------------------------------------------------------------------

_RUNNING: set[str] = set()  # stores this process is building now
_RUNNING_LOCK = threading.Lock()


def builder_reader(locations: MycelLocations, row_cap: int) -> MycelReader:
    """The builder's reader: no row cap, and a time limit for reads of the whole fleet."""
    return MycelReader(
        locations,
        query_timeout_s=settings.DASHBOARD_FLEET_INDEX_TIMEOUT_S,
        row_cap=row_cap,
        facts_folder=settings.DASHBOARD_FACTS_DIR,
    )


def start_builder(locations: MycelLocations, store: str, *, full: bool = True) -> bool:
    """Build the index in a background thread of this process, unless one runs here already (another
    instance's builder holds the lock: this one then finds it taken and stops at once): the full pass
    (unless `full` is False: only records are due), then the records the index lacks."""
    if not settings.DASHBOARD_FLEET_INDEX_BACKGROUND:
        return False
    with _RUNNING_LOCK:
        if store in _RUNNING:
            return False
        _RUNNING.add(store)

    def run() -> None:
        try:
            index = DashboardFleetIndex()
            if full:
                build(lambda cap: builder_reader(locations, cap), index)
            while True:  # the Context tabs' sums follow a long record pass, not only its end
                read = build_records(builder_reader(locations, BUILD_ROW_CAP), index, limit=SUM_EVERY)
                sum_reports(index, store)
                if read is None or read < SUM_EVERY:
                    break
        except Exception:  # noqa: BLE001 - the state row says why; the page keeps answering from SQL
            log.exception("fleet index: background build failed")
        finally:
            connection.close()
            with _RUNNING_LOCK:
                _RUNNING.discard(store)

    threading.Thread(target=run, name=f"fleet-index-{store[:8]}", daemon=True).start()
    return True


def sum_reports(index: DashboardFleetIndex, store: str) -> int | None:
    """Sum the kept reports whose reductions moved, under the builder's lock (one sum across instances):
    how many, or None when another builder holds the lock."""
    with index.builder_lock(store) as mine:
        return refresh_reports(store, index, CONTEXT_REPORTS) if mine else None


def wait_for_builders(timeout_s: float = 600.0) -> None:
    """Wait until this process's background builders have finished (tests, benchmarks)."""
    for thread in list(threading.enumerate()):
        if thread.name.startswith("fleet-index-"):
            thread.join(timeout_s)

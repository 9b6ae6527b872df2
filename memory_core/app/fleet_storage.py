"""The Storage report from the fleet index: each thread's footprint (its bytes, root checkpoints and pace,
kept under its head by the head pass) ranked, paged and summed in SQL, so a warm Storage page costs one page
of threads and the fleet's sums, never a walk of the fleet's checkpoints. Only the stores' own space (dbstat,
PostgreSQL's relation sizes) is read from the stores.

The index answers once its head pass is complete under the current version (as the Threads list's); a look
first catches up the heads that moved, and the report says how many moved threads it left to the builder
(their figures are as of before them).
"""

from __future__ import annotations

from collections.abc import Callable

from memory_core.app.fleet_index import FleetIndexStore, look, store_name
from memory_core.app.storage import (
    CHART_THREADS,
    StorageReport,
    StorageSort,
    ThreadStorage,
    storage_report,
    storage_row,
    store_totals,
)
from memory_core.records import StoreProblem
from memory_core.stores.reader import MycelReader, Result

_PAGE = 5000  # rows per read when every thread is asked for (the CLI's --json)


def indexed_storage(
    reader: MycelReader,
    index: FleetIndexStore,
    *,
    turns_ahead: int,
    sort: StorageSort = StorageSort.BYTES,
    offset: int = 0,
    limit: int | None = None,
    read_later: Callable[[bool], object] = lambda full: None,
) -> Result[StorageReport] | None:
    """The Storage report from the index: `limit` threads ranked by `sort` from `offset` (all when None);
    None when the index cannot answer (not built, or under another version): the caller walks the fleet (the
    Threads list decides when a fleet is big enough to build one). `read_later(full)` starts the background
    builder when the look left it work."""
    freshness = look(reader, index)
    if not freshness.ready:
        return None
    if freshness.needs_builder:
        read_later(True)
    store = store_name(reader)
    problems: list[StoreProblem] = list(freshness.problems)
    spaces = reader.store_space()
    problems.extend(spaces.problems)
    sums, without_bytes = index.footprint_sums(store, turns_ahead)
    total = sum(s.bytes for s in sums.values())

    def rows(order: StorageSort, start: int, count: int | None) -> tuple[ThreadStorage, ...]:
        found: list[ThreadStorage] = []
        while count is None or len(found) < count:
            step = _PAGE if count is None else min(_PAGE, count - len(found))
            part = index.footprints(store, order, turns_ahead, start + len(found), step)
            found += [
                storage_row(thread_id, name, kept, fleet_bytes=total, turns_ahead=turns_ahead)
                for thread_id, name, kept in part
            ]
            if len(part) < step:
                break
        return tuple(found)

    shown = rows(sort, offset, limit)
    biggest = shown[:CHART_THREADS] if sort is StorageSort.BYTES and offset == 0 else None
    report = StorageReport(
        threads=shown,
        thread_count=sum(s.threads for s in sums.values()),
        stores=store_totals(spaces.value, {label: (s.threads, s.bytes) for label, s in sums.items()}),
        turns_ahead=turns_ahead,
        total_bytes=total,
        projected_total_bytes=sum(s.projected_bytes for s in sums.values()),
        biggest=biggest if biggest is not None else rows(StorageSort.BYTES, 0, CHART_THREADS),
        sort=sort,
        offset=offset,
        behind=freshness.behind,
        without_bytes=without_bytes,
    )
    return Result(report, tuple(dict.fromkeys(problems)))


def fleet_storage_report(
    reader: MycelReader,
    index: FleetIndexStore | None,
    *,
    turns_ahead: int,
    sort: StorageSort = StorageSort.BYTES,
    offset: int = 0,
    limit: int | None = None,
    read_later: Callable[[bool], object] = lambda full: None,
) -> Result[StorageReport]:
    """The Storage report the page, the API and the CLI show: from the fleet index when there is one that
    can answer, else by walking the fleet's bytes (memory_core/app/storage.py), ranked and paged alike."""
    if index is not None:
        found = indexed_storage(
            reader,
            index,
            turns_ahead=turns_ahead,
            sort=sort,
            offset=offset,
            limit=limit,
            read_later=read_later,
        )
        if found is not None:
            return found
    return storage_report(reader, turns_ahead=turns_ahead, sort=sort, offset=offset, limit=limit)

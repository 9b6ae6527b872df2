"""Every thread's calibration figures (memory_core/economics/calibration.py), kept per thread head.

Built on fleet_records (the record of every call, memoized per head); the reduction kept here is small
(a few numbers per call, per-kind sums per thread), so a warm fleet report reads nothing and tokenizes
nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from memory_core.economics.calibration import (
    CalibrationReport,
    ThreadCalibration,
    available_encodings,
    calibration_report,
    thread_calibration,
)
from memory_core.memo import Key, Memo, digest
from memory_core.record.calls import RecordedCall
from memory_core.records import StoreProblem, ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.fleet_calls import fleet_records
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_calls import ThreadCalls
from memory_core.tokens import default_counter

_THREADS: Memo[ThreadCalibration] = Memo("stores.calibration_threads", max_entries=12_000)


@dataclass(frozen=True, slots=True)
class FleetCalibration:
    report: CalibrationReport
    models: frozenset[str]  # every model the fleet's calls name (before a --model filter)
    problems: tuple[StoreProblem, ...]


def thread_figures(reader: MycelReader, row: ThreadRow, record: ThreadCalls) -> ThreadCalibration:
    """One thread's calibration figures in every encoding available offline (kept per head)."""
    encodings = available_encodings()

    def compute() -> ThreadCalibration:
        segments = record.inference.segments

        def settings_of(rc: RecordedCall) -> MemorySettings:
            return segments[rc.segment].settings if rc.segment < len(segments) else record.configured.settings

        recorded = default_counter()
        counters = [recorded if e == recorded.encoding_name else default_counter(e) for e in encodings]
        return thread_calibration(
            row.thread_id,
            record.calls,
            record.messages,
            settings_of=settings_of,
            counters=counters,
            recorded_encoding=recorded.encoding_name,
            fallback_model=row.model or row.configured_model,
        )

    if row.head_checkpoint_id is None:
        return compute()
    key = Key(
        store=reader.store_key,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=digest(record.configured.settings, record.configured.source),
        what=("calibration", row.checkpoints, row.summaries, record.rules, encodings),
    )
    return _THREADS.get_or_compute(key, compute, keep=lambda _: not record.transient)


def fleet_figures(reader: MycelReader) -> Iterator[tuple[ThreadRow, ThreadCalibration, ThreadCalls]]:
    for row, record in fleet_records(reader):
        yield row, thread_figures(reader, row, record), record


def fleet_calibration(reader: MycelReader, *, model: str | None = None) -> FleetCalibration:
    """The calibration report over every thread (one model's calls with `model`)."""
    threads: list[ThreadCalibration] = []
    problems: list[StoreProblem] = []
    for _row, figures, record in fleet_figures(reader):
        threads.append(figures)
        problems.extend(p for p in record.problems if p not in problems)
    models = frozenset(c.model for t in threads for c in t.calls)
    report = calibration_report(threads, encodings=available_encodings(), model=model)
    return FleetCalibration(report, models, tuple(problems))

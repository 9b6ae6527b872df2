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


def thread_figures(
    reader: MycelReader,
    row: ThreadRow,
    record: ThreadCalls,
    *,
    encodings: tuple[str, ...] | None = None,
    settings_digest: str | None = None,
    store_key: object = None,
) -> ThreadCalibration:
    """One thread's calibration figures in every encoding available offline (kept per head).

    A fleet report passes the encodings and the digest of the thread's config, found once per report."""
    encodings = encodings if encodings is not None else available_encodings()

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
        store=store_key if store_key is not None else reader.store_key,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=settings_digest or digest(record.configured.settings, record.configured.source),
        what=("calibration", row.checkpoints, row.summaries, record.rules, encodings),
    )
    return _THREADS.get_or_compute(key, compute, keep=lambda _: not record.transient)


def fleet_figures(reader: MycelReader) -> Iterator[tuple[ThreadRow, ThreadCalibration, ThreadCalls]]:
    encodings = available_encodings()
    store_key = reader.store_key  # one report reads one version of the store
    # fleet_records hands threads of one model and workspace the same Configured: digest it once.
    digests: dict[int, tuple[object, str]] = {}
    for row, record in fleet_records(reader):
        configured = record.configured
        found = digests.get(id(configured))
        if found is None or found[0] is not configured:
            found = digests[id(configured)] = (configured, digest(configured.settings, configured.source))
        yield (
            row,
            thread_figures(
                reader, row, record, encodings=encodings, settings_digest=found[1], store_key=store_key
            ),
            record,
        )


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

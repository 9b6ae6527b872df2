"""Every thread's calibration figures (memory_core/economics/calibration.py), kept per thread head.

Built on fleet_calls' `reduce_fleet`: the reduction kept there is small (a few numbers per call, per-kind
sums per thread), so a warm fleet report reads nothing and tokenizes nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memory_core.app.calibration_pages import CalibrationPages
from memory_core.app.calls import ThreadCalls
from memory_core.app.fleet_calls import FleetProgress, FleetReduction, progress_json, reduce_fleet
from memory_core.app.kept_reports import Kept, KeptReport
from memory_core.call_record.calls import RecordedCall
from memory_core.economics.calibration import (
    CalibrationReport,
    ThreadCalibration,
    available_encodings,
    calibration_json,
    calibration_report,
    thread_calibration,
    thread_calibration_json,
    thread_calibration_of,
)
from memory_core.memory_settings import MemorySettings
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter


@dataclass(frozen=True, slots=True)
class FleetCalibration:
    report: CalibrationReport
    models: frozenset[str]  # every model the fleet's calls name (before a --model filter)
    problems: tuple[StoreProblem, ...]
    progress: FleetProgress


def thread_figures(
    row: ThreadRow, record: ThreadCalls, *, encodings: tuple[str, ...] | None = None
) -> ThreadCalibration:
    """One thread's calibration figures in every encoding available offline (a fleet report passes the
    encodings, found once per report)."""
    encodings = encodings if encodings is not None else available_encodings()
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


def fleet_calibration(
    reader: MycelReader, *, model: str | None = None, deadline: float | None = None
) -> FleetCalibration:
    """The calibration report over every thread (one model's calls with `model`); with `deadline`, over
    the threads analysed by then (memory_core/app/fleet_calls.py `reduce_fleet`)."""
    found = _reduced(reader, deadline)
    threads = found.values
    models = frozenset(c.model for t in threads for c in t.calls)
    report = calibration_report(threads, encodings=available_encodings(), model=model)
    return FleetCalibration(report, models, found.problems, found.progress)


def _reduced(reader: MycelReader, deadline: float | None) -> FleetReduction[ThreadCalibration]:
    encodings = available_encodings()
    return reduce_fleet(
        reader,
        ("calibration", encodings),
        lambda row, record: thread_figures(row, record, encodings=encodings),
        deadline=deadline,
    )


def calibration_document(found: FleetCalibration) -> dict[str, Any]:
    """`mycel-memory calibration --json`, and every figure of the calibration screen."""
    return {**calibration_json(found.report), **progress_json(found.progress)}


def _reduce(_reader: MycelReader, row: ThreadRow, record: ThreadCalls) -> Any:
    return thread_calibration_json(thread_figures(row, record, encodings=available_encodings()))


def _sum(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    pages = CalibrationPages(available_encodings())
    for thread_id, data in reductions:
        pages.add(thread_calibration_of(thread_id, data))
    models = pages.model_names()
    return {"models": models, "pages": {model or "": pages.page(model) for model in (None, *models)}}


KEPT = KeptReport("calibration", _reduce, _sum)


@dataclass(frozen=True, slots=True)
class CalibrationPage:
    """What the calibration screen shows: the page's document, of one model or every one."""

    document: dict[str, Any]
    models: list[str]  # every model the fleet's calls name
    model: str | None  # the model shown (None: every model, also when the one asked for made no call)
    problems: tuple[StoreProblem, ...]
    progress: FleetProgress


def calibration_for_page(
    reader: MycelReader, *, model: str | None, kept: Kept | None, deadline: float | None
) -> CalibrationPage:
    """The screen's document from the index's sum when there is one, else from a walk within `deadline`."""
    if kept is not None:
        models = list(kept.documents["models"])
        model = model if model in models else None
        page = kept.documents["pages"][model or ""]
        document = {**page, **progress_json(kept.progress), **kept.note()}
        return CalibrationPage(document, models, model, (), kept.progress)
    found = _reduced(reader, deadline)
    pages = CalibrationPages(available_encodings()).add_all(found.values)
    models = pages.model_names()
    model = model if model in models else None
    document = {**pages.page(model), **progress_json(found.progress)}
    return CalibrationPage(document, models, model, found.problems, found.progress)

"""Every thread's calibration figures (memory_core/economics/calibration.py), kept per thread head.

Built on fleet_calls' `reduce_fleet`: the reduction kept there is small (a few numbers per call, per-kind
sums per thread), so a warm fleet report reads nothing and tokenizes nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memory_core.app.calls import ThreadCalls
from memory_core.app.fleet_calls import FleetProgress, progress_json, reduce_fleet
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
    encodings = available_encodings()
    found = reduce_fleet(
        reader,
        ("calibration", encodings),
        lambda row, record: thread_figures(row, record, encodings=encodings),
        deadline=deadline,
    )
    threads = found.values
    models = frozenset(c.model for t in threads for c in t.calls)
    report = calibration_report(threads, encodings=encodings, model=model)
    return FleetCalibration(report, models, found.problems, found.progress)


def calibration_document(found: FleetCalibration) -> dict[str, Any]:
    """`mycel-memory calibration --json`, and every figure of the calibration screen."""
    return {**calibration_json(found.report), **progress_json(found.progress)}


# What a page shows of the report's long lists (`calibration --json` has them whole, and their lengths).
POINTS_SHOWN = 2_000  # per model, the (estimate, provider) points charted, newest threads first
UNSEEN_SHOWN = 100  # per model, the calls whose real count crossed a line unseen
THREAD_ROWS = 100  # the (thread, model) rows listed: most unseen crossings, then most calls


def row_order(thread_id: str, own: dict[str, Any]) -> tuple[int, int, str]:
    """The order of the page's (thread, model) rows: most unseen crossings, then most calls."""
    return (-len(own["crossed_limit_unseen"]), -own["calls"], thread_id)


def page_calibration(document: dict[str, Any]) -> dict[str, Any]:
    """The document a page shows: long lists cut to their first entries (`<list>_count`: their length),
    each model's busiest thread (most calls behind its fit, else most calls) named from the whole lists,
    and only the threads of the first THREAD_ROWS rows (a thread's best row ranks above any row it is
    behind, so those rows are all there)."""
    rows = sorted(
        (row_order(t["thread_id"], own), t["thread_id"]) for t in document["threads"] for own in t["models"]
    )
    listed = {thread_id for _, thread_id in rows[:THREAD_ROWS]}
    return {
        **document,
        "models": [_page_model(m, document["threads"]) for m in document["models"]],
        "threads": [t for t in document["threads"] if t["thread_id"] in listed],
        "thread_rows_count": len(rows),
    }


def _page_model(model: dict[str, Any], threads: list[dict[str, Any]]) -> dict[str, Any]:
    busiest = Counter(p["thread_id"] for p in model["points"]).most_common(1)
    if not busiest:
        busiest = Counter(
            t["thread_id"] for t in threads for m in t["models"] if m["model"] == model["model"]
        ).most_common(1)
    return {
        **model,
        "busiest_thread": busiest[0][0] if busiest else None,
        "points": model["points"][:POINTS_SHOWN],
        "points_count": len(model["points"]),
        "crossed_limit_unseen": model["crossed_limit_unseen"][:UNSEEN_SHOWN],
        "crossed_limit_unseen_count": len(model["crossed_limit_unseen"]),
    }


def _reduce(_reader: MycelReader, row: ThreadRow, record: ThreadCalls) -> Any:
    return thread_calibration_json(thread_figures(row, record, encodings=available_encodings()))


def _sum(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    threads = [thread_calibration_of(thread_id, data) for thread_id, data in reductions]
    encodings = available_encodings()
    models = sorted({c.model for t in threads for c in t.calls})
    pages = {
        model or "": page_calibration(
            calibration_json(calibration_report(threads, encodings=encodings, model=model))
        )
        for model in (None, *models)
    }
    return {"models": models, "pages": pages}


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
    found = fleet_calibration(reader, model=model, deadline=deadline)
    if model is not None and model not in found.models:
        model, found = None, fleet_calibration(reader, deadline=deadline)
    document = page_calibration(calibration_document(found))
    return CalibrationPage(document, sorted(found.models), model, found.problems, found.progress)

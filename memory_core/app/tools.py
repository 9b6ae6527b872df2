"""Tool-output pressure over every thread (memory_core/economics/tool_pressure.py), read from the record
of fleet_calls: the one function behind `mycel-memory tools` and the Tool-output pressure screen.

Each thread's reduction (tool name -> a few counters) is kept per head by fleet_calls' `reduce_fleet`:
a warm report over 10,000 threads sums small tallies and decodes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from memory_core.app.calls import ThreadCalls
from memory_core.app.fleet_calls import FleetProgress, progress_json, reduce_fleet
from memory_core.app.kept_reports import Kept, KeptReport
from memory_core.app.tool_pages import ToolPages
from memory_core.economics.tool_pressure import (
    FleetPressure,
    ThreadPressure,
    fleet_pressure,
    pressure_json,
    thread_pressure,
    thread_pressure_json,
    thread_pressure_of,
)
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.reader import MycelReader


@dataclass(frozen=True, slots=True)
class ToolPressureReport:
    report: FleetPressure
    problems: tuple[StoreProblem, ...]
    progress: FleetProgress


@lru_cache(maxsize=65_536)
def call_day(checkpoint_id: str | None) -> str | None:
    """The UTC day a call's checkpoint was written (its uuid6 id carries the time), None when unknown."""
    at = time_of_checkpoint_id(checkpoint_id) if checkpoint_id else None
    return at.date().isoformat() if at is not None else None


def fleet_tool_pressure(reader: MycelReader, *, deadline: float | None = None) -> ToolPressureReport:
    """Every thread's tools, summed over the fleet, with the problems met reading them; with `deadline`,
    over the threads analysed by then."""
    found = reduce_fleet(reader, "tool pressure", _thread, deadline=deadline)
    return ToolPressureReport(fleet_pressure(found.values), _problems(reader, found.problems), found.progress)


def _problems(reader: MycelReader, found: Iterable[StoreProblem]) -> tuple[StoreProblem, ...]:
    problems = list(reader.list_threads().problems)
    problems.extend(p for p in found if p not in problems)
    return tuple(problems)


def tools_document(found: ToolPressureReport) -> dict[str, Any]:
    """`mycel-memory tools --json`, and every figure of the Tool-output pressure screen."""
    return {**pressure_json(found.report), **progress_json(found.progress)}


def _reduce(_reader: MycelReader, row: ThreadRow, record: ThreadCalls) -> Any:
    return thread_pressure_json(_thread(row, record))


def _sum(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    pages = ToolPages().add_all(thread_pressure_of(thread_id, data) for thread_id, data in reductions)
    return {"page": pages.page()}


KEPT = KeptReport("tool pressure", _reduce, _sum)


@dataclass(frozen=True, slots=True)
class ToolsPage:
    document: dict[str, Any]  # `tools --json`, its long lists cut (tool_pages)
    problems: tuple[StoreProblem, ...]
    progress: FleetProgress


def tools_for_page(reader: MycelReader, *, kept: Kept | None, deadline: float | None) -> ToolsPage:
    """The screen's document from the index's sum when there is one, else from a walk within `deadline`."""
    if kept is not None:
        document = {**kept.documents["page"], **progress_json(kept.progress), **kept.note()}
        return ToolsPage(document, (), kept.progress)
    found = reduce_fleet(reader, "tool pressure", _thread, deadline=deadline)
    document = {**ToolPages().add_all(found.values).page(), **progress_json(found.progress)}
    return ToolsPage(document, _problems(reader, found.problems), found.progress)


def _thread(row: ThreadRow, record: ThreadCalls) -> ThreadPressure:
    return thread_pressure(
        row.thread_id, record.messages, record.head_calls, record.configured.settings, day_of=call_day
    )

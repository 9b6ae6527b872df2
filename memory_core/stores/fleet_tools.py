"""Tool-output pressure over every thread (memory_core/economics/tool_pressure.py), read from the record
of fleet_calls: the one function behind `mycel-memory tools` and the Tool-output pressure screen.

Each thread's reduction (tool name -> a few counters) is kept per head, under the same key as its record
plus what it is: a warm report over 10,000 threads sums small tallies and decodes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from memory_core.economics.tool_pressure import FleetPressure, ThreadPressure, fleet_pressure, thread_pressure
from memory_core.memo import Key, Memo, digest
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.fleet_calls import fleet_records
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_calls import ThreadCalls

_PRESSURE: Memo[ThreadPressure] = Memo("stores.tool_pressure", max_entries=12_000)


@dataclass(frozen=True, slots=True)
class ToolPressureReport:
    report: FleetPressure
    problems: tuple[StoreProblem, ...]


@lru_cache(maxsize=65_536)
def call_day(checkpoint_id: str | None) -> str | None:
    """The UTC day a call's checkpoint was written (its uuid6 id carries the time), None when unknown."""
    at = time_of_checkpoint_id(checkpoint_id) if checkpoint_id else None
    return at.date().isoformat() if at is not None else None


def fleet_tool_pressure(reader: MycelReader) -> ToolPressureReport:
    """Every thread's tools, summed over the fleet, with the problems met reading them."""
    problems: list[StoreProblem] = list(reader.list_threads().problems)
    digests: dict[int, str] = {}  # a report resolves each model's config once: digest each object once
    threads: list[ThreadPressure] = []
    for row, record in fleet_records(reader):
        problems.extend(p for p in record.problems if p not in problems)
        settings = digests.get(id(record.configured))
        if settings is None:
            settings = digests[id(record.configured)] = digest(record.configured)
        threads.append(_thread(reader, row, record, settings))
    return ToolPressureReport(fleet_pressure(threads), tuple(problems))


def _thread(reader: MycelReader, row: ThreadRow, record: ThreadCalls, settings: str) -> ThreadPressure:
    def compute() -> ThreadPressure:
        return thread_pressure(
            row.thread_id, record.messages, record.calls, record.configured.settings, day_of=call_day
        )

    key = Key(
        store=reader.store_key,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=settings,
        what=("tool pressure", row.checkpoints, row.summaries, record.rules),
    )
    return _PRESSURE.get_or_compute(key, compute, keep=lambda _found: not record.transient)

"""The fleet reports under a deadline, over Mycel's real sample home (threads LangGraph's savers wrote).

`reduce_fleet` (memory_core/app/fleet_calls.py) keeps one small reduction per thread head for every
report, computes a thread's record only when its reduction is not kept, and, past a deadline, takes
only kept reductions (one thread is always computed, so each call goes on). fleet_cost follows the same
rule over its own per-thread memo.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import create_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core import memo
from memory_core.app import fleet_calls
from memory_core.app.calibration import calibration_document, fleet_calibration
from memory_core.app.calls import ThreadCalls
from memory_core.app.cost import cost_document, fleet_cost, pricing_of
from memory_core.app.fleet_calls import reduce_fleet
from memory_core.app.prompt_cache import fleet_cache, fleet_json
from memory_core.app.tools import fleet_tool_pressure, tools_document
from memory_core.memo import Memo
from memory_core.records import ProblemKind
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import point_locations

# Each report's --json document under an optional deadline (`time.monotonic()` time).
Report = Callable[[MycelReader, float | None], dict[str, Any]]


def _calibration(reader: MycelReader, deadline: float | None) -> dict[str, Any]:
    return calibration_document(fleet_calibration(reader, deadline=deadline))


def _tools(reader: MycelReader, deadline: float | None) -> dict[str, Any]:
    return tools_document(fleet_tool_pressure(reader, deadline=deadline))


def _cache(reader: MycelReader, deadline: float | None) -> dict[str, Any]:
    pricing = pricing_of(reader)
    return fleet_json(fleet_cache(reader, book=pricing.book, deadline=deadline), pricing)


def _cost(reader: MycelReader, deadline: float | None) -> dict[str, Any]:
    document = cost_document(fleet_cost(reader, since=None, until=None, deadline=deadline))
    if document.get("pricing_cache"):  # the pricing cache's age is measured at each run
        document["pricing_cache"] = {**document["pricing_cache"], "age_seconds": None}
    return document


REPORTS = {"calibration": _calibration, "tools": _tools, "cache": _cache, "cost": _cost}


@pytest.fixture
def reader(sample_home: Path) -> MycelReader:
    memo.reset()
    return MycelReader(point_locations(sample_home))


@pytest.fixture
def record_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every thread whose record `thread_calls` builds, in order (the real function, counted)."""
    built: list[str] = []
    real = fleet_calls.thread_calls

    def counted(reader: MycelReader, row: Any, *args: Any, **kwargs: Any) -> ThreadCalls:
        built.append(row.thread_id)
        return real(reader, row, *args, **kwargs)

    monkeypatch.setattr(fleet_calls, "thread_calls", counted)
    return built


def _threads_with_checkpoints(reader: MycelReader) -> list[str]:
    return [r.thread_id for r in reader.list_threads().value if r.head_checkpoint_id is not None]


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_a_spent_budget_analyses_one_more_thread_per_call_until_the_fleet_is_done(
    reader: MycelReader, name: str
) -> None:
    report = REPORTS[name]
    total = len(_threads_with_checkpoints(reader))
    assert total >= 5
    seen: list[tuple[int, int]] = []
    document: dict[str, Any] = {}
    for _ in range(total + 1):
        document = report(reader, time.monotonic())  # a budget of 0: the deadline has passed already
        seen.append((document["analysed_threads"], document["pending_threads"]))
        if not document["pending_threads"]:
            break
    assert seen == [(n, total - n) for n in range(1, total + 1)]
    # Once done, the figures are the ones a report without any deadline gives (the CLI's), exactly.
    assert document == report(reader, None)
    memo.reset()
    assert document == report(MycelReader(reader.locations), None)


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_partial_figures_cover_the_newest_threads_only(reader: MycelReader, name: str) -> None:
    first = REPORTS[name](reader, time.monotonic())
    full = REPORTS[name](reader, None)
    assert (first["analysed_threads"], full["analysed_threads"], full["pending_threads"]) == (
        1,
        first["analysed_threads"] + first["pending_threads"],
        0,
    )
    assert first != full


def test_a_generous_budget_analyses_the_whole_fleet_at_once(reader: MycelReader) -> None:
    document = _tools(reader, time.monotonic() + 600)
    assert document["pending_threads"] == 0
    assert document["analysed_threads"] == len(_threads_with_checkpoints(reader))


def test_each_thread_is_reduced_once_per_head_and_the_record_memo_stays_small(
    reader: MycelReader, record_builds: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fleet_calls._RECORDS.max_entries <= 64  # a few dozen whole records, never the fleet's
    small: Memo[ThreadCalls] = Memo("test.fleet_records_two", max_entries=2)
    monkeypatch.setattr(fleet_calls, "_RECORDS", small)
    threads = _threads_with_checkpoints(reader)
    first = {name: report(reader, None) for name, report in REPORTS.items() if name != "cost"}
    # Three reports over the fleet: each thread's record built once per report at most (only two kept).
    assert sorted(set(record_builds)) == sorted(threads)
    assert len(record_builds) <= 3 * len(threads)
    assert small.stats().entries == 2
    reductions = memo.stats()["stores.fleet_reductions"]
    assert reductions.entries == 3 * len(threads)  # every thread's reduction, for each report
    record_builds.clear()
    again = {name: report(reader, None) for name, report in REPORTS.items() if name != "cost"}
    assert again == first
    assert record_builds == []  # every reduction kept: no record rebuilt, though only two are kept


def test_a_moved_thread_alone_is_reduced_again(
    sample_home: Path, reader: MycelReader, record_builds: list[str]
) -> None:
    before = _tools(reader, None)
    newest = _threads_with_checkpoints(reader)[0]
    with closing(sqlite3.connect(sample_home / "leon.db", check_same_thread=False)) as conn:
        # LangGraph's own saver writes one more checkpoint of the thread: its head again, a new id.
        saver = SqliteSaver(conn)
        head = saver.get_tuple({"configurable": {"thread_id": newest, "checkpoint_ns": ""}})
        assert head is not None
        step = int(head.metadata.get("step", 0)) + 1
        saver.put(
            head.config, create_checkpoint(head.checkpoint, None, step), {"source": "loop", "step": step}, {}
        )
    record_builds.clear()
    after = _tools(MycelReader(point_locations(sample_home)), None)
    assert record_builds == [newest]  # only the thread whose head moved
    assert after["tools"] == before["tools"] and after["analysed_threads"] == before["analysed_threads"]


def test_a_locked_read_is_not_kept(sample_home: Path, reader: MycelReader, record_builds: list[str]) -> None:
    with sqlite3.connect(sample_home / "leon.db") as conn:
        conn.execute("PRAGMA journal_mode=DELETE")  # in WAL mode an exclusive writer does not block readers
    locked_reader = MycelReader(point_locations(sample_home), query_timeout_s=0.2)
    locked_reader.list_threads()  # the list is read (and kept) before another process locks the file
    threads = _threads_with_checkpoints(locked_reader)
    holder = sqlite3.connect(sample_home / "leon.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        found = reduce_fleet(locked_reader, "test: messages", lambda _row, record: len(record.messages))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert any(p.kind is ProblemKind.LOCKED for p in found.problems)
    assert memo.stats()["stores.fleet_reductions"].entries == 0
    record_builds.clear()
    again = reduce_fleet(locked_reader, "test: messages", lambda _row, record: len(record.messages))
    assert not any(p.kind is ProblemKind.LOCKED for p in again.problems)
    assert sorted(record_builds) == sorted(threads)  # read again: nothing kept the locked answer
    assert all(n > 0 for n in again.values)

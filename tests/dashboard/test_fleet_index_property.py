"""The fleet index is never wrong: random turns, rollbacks and new threads written through LangGraph's real
savers (SqliteSaver, PostgresSaver) between looks; after each look, every indexed thread's facts equal the
facts computed from scratch (a new reader, every memo emptied), on both engines. A seeded loop, so a
failure replays."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any

import pytest

from memory_core.app import fleet_index
from memory_core.app.calibration import KEPT as CALIBRATION
from memory_core.app.calibration import calibration_for_page
from memory_core.app.context_reports import CONTEXT_REPORTS
from memory_core.app.cost import pricing_of
from memory_core.app.fleet_index import IndexQuery, build, index_version, indexed_facts, look, store_name
from memory_core.app.fleet_records import build_records, thread_record_tally
from memory_core.app.kept_reports import Kept, kept_documents, refresh_reports
from memory_core.app.prompt_cache import KEPT as CACHE
from memory_core.app.prompt_cache import cache_for_page, fleet_json
from memory_core.app.tools import KEPT as TOOLS
from memory_core.app.tools import tools_for_page
from memory_core.family import registered_only_rows
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list import fleet_heads
from mycel_dashboard.models import FleetUnmetered, FleetUsage
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from mycel_dashboard.web.fleet_usage import DashboardCostIndex
from tests.core.store_builders import build_thread
from tests.support.mycel_env import point_env_at, point_env_at_postgres

STEPS = 12


@contextmanager
def _saver(where: Path | str) -> Iterator[Any]:
    if isinstance(where, str):
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(where) as saver:
            yield saver
        return
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    with closing(sqlite3.connect(where, check_same_thread=False)) as conn:
        yield SqliteSaver(conn)


def _roll_back(where: Path | str, thread_id: str, rng: random.Random) -> None:
    """A rollback as a saver writes one: an older checkpoint copied as the thread's new head."""
    from langgraph.checkpoint.base import copy_checkpoint
    from langgraph.checkpoint.base.id import uuid6

    with _saver(where) as saver:
        history = list(saver.list({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}))
        if len(history) < 2:
            return
        older = rng.choice(history[1:])
        copied = copy_checkpoint(older.checkpoint)
        copied["id"] = str(uuid6(clock_seq=-1))
        saver.put(
            history[0].config,
            copied,
            {"source": "update", "step": -1, "writes": {}, "parents": {}},
            dict(copied["channel_versions"]),
        )


def _from_scratch() -> dict[str, Any]:
    reset()
    reader = MycelReader(resolve_locations())
    listed = reader.list_threads()
    rows = [
        *listed.value,
        *registered_only_rows(reader.list_agents().value, (r.thread_id for r in listed.value)),
    ]
    return {t.thread_id: t for t in indexed_facts(reader, rows, index_version(reader), [])}


def _indexed(index: DashboardFleetIndex) -> dict[str, Any]:
    store = store_name(MycelReader(resolve_locations()))
    _, _, shown = index.page(store, IndexQuery(sort="thread", limit=10_000))
    return {t.thread_id: t for t in shown}


def _random_walk(where: Path | str, seed: int) -> None:
    rng = random.Random(seed)
    index = DashboardFleetIndex()
    threads = ["t-0"]
    build_thread(where, "t-0", turns=2, parallel=1, tool_chars=200)
    state = build(lambda cap: builder_reader(resolve_locations(), cap), index)
    assert state is not None and state.complete
    for step in range(STEPS):
        action = rng.choice(("turn", "turn", "rollback", "new"))
        if action == "new":
            threads.append(f"t-{len(threads)}")
            build_thread(
                where, threads[-1], turns=rng.randint(1, 2), parallel=rng.randint(1, 2), tool_chars=150
            )
        elif action == "turn":
            build_thread(
                where,
                rng.choice(threads),
                turns=1,
                parallel=rng.randint(1, 3),
                tool_chars=rng.randint(50, 4000),
            )
        else:
            _roll_back(where, rng.choice(threads), rng)
        reset()
        found = look(MycelReader(resolve_locations()), index)
        assert found.ready and found.behind == 0, (step, action, found)
        expected, kept = _from_scratch(), _indexed(index)
        assert kept.keys() == expected.keys(), (step, action)
        for thread_id, facts in expected.items():
            assert replace(kept[thread_id], record=None) == facts, (step, action, thread_id)
        # The record pass: every thread's tally equals its record read afresh, at its head.
        reader = MycelReader(resolve_locations())
        assert build_records(reader, index) is not None
        assert index.records_due(store_name(reader), 10) == []
        reset()
        fresh = MycelReader(resolve_locations())
        store = store_name(fresh)
        for thread_id, facts in _indexed(index).items():
            wanted = thread_record_tally(fresh, expected[thread_id], pricing_of(fresh).book)
            assert facts.record == replace(wanted, reports=()), (step, action, thread_id)
            # The Context reports' reductions are kept beside it (web/fleet_reports.py).
            for report, payload in wanted.reports:
                assert dict(index.reductions(store, report))[thread_id] == payload, (step, report, thread_id)
        # Summed, they are the reports a walk of the fleet gives, figure for figure and in its order.
        assert refresh_reports(store, index, CONTEXT_REPORTS) == 3
        assert _kept_pages(fresh, store, index) == _walked_pages(fresh), (step, action)
        # The kept usage is the Cost report's: some thread has calls with usage by now.
        assert step < 2 or any(f.record and f.record.usage for f in _indexed(index).values()), step
        # The fleet's sums, kept write by write, equal the kept usage summed afresh.
        assert _kept_sums(store) == _sums_afresh(store), (step, action)


def _pages(reader: MycelReader, kept: Callable[[str], Kept | None]) -> list[dict[str, Any]]:
    book = pricing_of(reader).book
    pages = [
        calibration_for_page(reader, model=None, kept=kept(CALIBRATION.name), deadline=None).document,
        tools_for_page(reader, kept=kept(TOOLS.name), deadline=None).document,
        fleet_json(
            cache_for_page(reader, book=book, kept=kept(CACHE.name), deadline=None), pricing_of(reader)
        ),
    ]
    return [{k: v for k, v in page.items() if not k.startswith("kept_")} for page in pages]


def _kept_pages(reader: MycelReader, store: str, index: DashboardFleetIndex) -> list[dict[str, Any]]:
    return _pages(reader, lambda report: kept_documents(store, index, report, records_pending=0))


def _walked_pages(reader: MycelReader) -> list[dict[str, Any]]:
    reset()
    return _pages(reader, lambda report: None)


def _kept_sums(store: str) -> tuple[dict[tuple[Any, ...], tuple[int, ...]], dict[Any, int]]:
    costs = DashboardCostIndex()
    usage = {(g.model, g.day, g.abandoned): (g.calls, *astuple(g.usage)) for g in costs.usage(store)}
    return usage, costs.unmetered_days(store)


def _sums_afresh(store: str) -> tuple[dict[tuple[Any, ...], tuple[int, ...]], dict[Any, int]]:
    usage: dict[tuple[Any, ...], tuple[int, ...]] = {}
    for row in FleetUsage.objects.filter(store=store):
        key = (row.model or None, row.day, row.abandoned)
        values = (
            row.calls,
            row.input_tokens,
            row.output_tokens,
            row.reasoning_tokens,
            row.cache_read_tokens,
            row.cache_write_tokens,
        )
        usage[key] = tuple(a + b for a, b in zip(usage.get(key, (0,) * 6), values, strict=True))
    days: dict[Any, int] = {}
    for row in FleetUnmetered.objects.filter(store=store):
        days[row.day] = days.get(row.day, 0) + 1
    return usage, days


@pytest.mark.django_db(transaction=True)
def test_index_equals_facts_from_scratch_on_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home-data"
    home.mkdir()
    point_env_at(monkeypatch, home)
    _random_walk(home / "leon.db", seed=27)


@pytest.mark.django_db(transaction=True)
def test_index_equals_facts_from_scratch_when_looks_read_only_the_rows_after_their_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One process throughout, as a server is: each look's mark outlives the memo resets the walk makes for
    # its facts from scratch, so looks read the rows after it (rollbacks delete rows and write new ones).
    home = tmp_path / "home-data"
    home.mkdir()
    point_env_at(monkeypatch, home)
    monkeypatch.setattr(fleet_index._MARKS, "clear", lambda: None)  # noqa: SLF001 - kept across resets
    trusted: list[bool] = []
    after = fleet_heads.heads_after

    def counted(db: Any, mark: Any) -> Any:
        found = after(db, mark)
        trusted.append(found is not None)
        return found

    monkeypatch.setattr(fleet_heads, "heads_after", counted)
    _random_walk(home / "leon.db", seed=29)
    assert sum(trusted) >= STEPS // 2, trusted


@pytest.mark.django_db(transaction=True)
def test_index_equals_facts_from_scratch_on_postgresql(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_core.stores.postgres.connect import close_pools
    from tests.support.postgres import database_name

    url = pg_server.create_database(database_name("fleet_walk"))
    point_env_at_postgres(monkeypatch, tmp_path, url, LEON_STORAGE_STRATEGY="supabase")
    try:
        _random_walk(url, seed=27)
    finally:
        close_pools()

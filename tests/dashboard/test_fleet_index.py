"""The fleet index (memory_core/app/fleet_index.py, mycel_dashboard/web/fleet_index.py) on the real sample
home: the Threads list sorted, filtered and paged in the dashboard's database shows exactly what the list
in memory shows, for every sort, order, flag and search; the floor answers while it is built; a new
checkpoint reaches the next look; one builder at a time."""

from __future__ import annotations

import re
import shutil
import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest
from django.db.models import F

from memory_core.app import fleet_index
from memory_core.app.fleet_index import IndexQuery, build, look, store_name
from memory_core.app.fleet_records import build_records
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list import fleet_heads
from mycel_dashboard.models import FleetIndexState, FleetThread
from mycel_dashboard.screens.thread_list.presenter import Flag, SortKey
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from mycel_dashboard.web.fleet_usage import DashboardCostIndex
from tests.support.heads import new_head

HTMX = {"HTTP_HX_REQUEST": "true"}


def _ids(body: str) -> list[str]:
    return re.findall(r'<td title="([^"]+)">', body)


def _count(body: str) -> str:
    found = re.search(r"([\d,]+) of ([\d,]+) thread", body)
    assert found is not None, body[:2000]
    return found.group(0)


def _built(settings) -> DashboardFleetIndex:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    index = DashboardFleetIndex()
    locations = resolve_locations()
    state = build(lambda cap: builder_reader(locations, cap), index)
    assert state is not None and state.complete
    return index


QUERIES = [
    *(f"sort={key.value}&order={order}" for key in SortKey for order in ("asc", "desc")),
    *(f"flag={flag.value}" for flag in Flag if flag is not Flag.RECOMPACTS),
    "q=toad",
    "q=m_0d8",
    "q=nothing-matches",
    "sort=fill&limit=1000",
    "sort=bytes&order=asc&flag=compacted",
    "page=2",
]


@pytest.mark.django_db(transaction=True)
def test_index_pages_equal_the_list_in_memory(viewer_client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_FROM = 10**9  # in memory: no index is ever built
    in_memory = {q: viewer_client.get(f"/threads/?{q}", **HTMX).content.decode() for q in QUERIES}
    assert not FleetThread.objects.exists()
    index = _built(settings)
    settings.DASHBOARD_FLEET_INDEX_FROM = 0
    reset()
    for q in QUERIES:
        body = viewer_client.get(f"/threads/?{q}", **HTMX).content.decode()
        assert 'id="fleet-index"' not in body, q  # complete and current: nothing to say
        assert _ids(body) == _ids(in_memory[q]), q
        assert _count(body) == _count(in_memory[q]), q
    # Every sort went through the index, none through a list read in memory.
    reader = MycelReader(resolve_locations())
    total, every, _ = index.page(store_name(reader), IndexQuery(limit=1))
    assert total == every == len(reader.list_threads().value)


@pytest.mark.django_db(transaction=True)
def test_floor_answers_while_the_index_is_built(viewer_client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_FROM = 0
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False  # nobody builds: the floor alone answers
    body = viewer_client.get("/threads/?sort=fill", **HTMX).content.decode()
    note = re.search(r'<p class="notice small" id="fleet-index">([^<]+)</p>', body)
    assert note is not None and "being built" in note.group(1) and "sorting by fill" in note.group(1)
    reader = MycelReader(resolve_locations())
    newest_first = [r.thread_id for r in reader.list_threads().value if r.checkpoints]
    assert _ids(body) == newest_first
    by_id = viewer_client.get("/threads/?sort=thread&order=asc", **HTMX).content.decode()
    assert _ids(by_id) == sorted(newest_first)
    whole_id = viewer_client.get(f"/threads/?q={newest_first[-1]}", **HTMX).content.decode()
    assert _ids(whole_id) == [newest_first[-1]]
    assert not FleetThread.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_new_checkpoint_reaches_the_next_look(sample_home: Path, settings) -> None:
    index = _built(settings)
    reader = MycelReader(resolve_locations())
    store = store_name(reader)
    assert look(reader, index).moved == 0
    thread = "m_npRsndIka9dx-1"
    before = index.indexed_heads(store, [thread])[thread]
    # A new head for one thread, as a rollback writes it: the head's row copied under a newer id.
    new_head(sample_home / "leon.db", thread)
    reset()
    found = look(MycelReader(resolve_locations()), index)
    assert (found.moved, found.caught_up) == (1, 1)
    after = index.indexed_heads(store, [thread])[thread]
    assert after[:2] == ("1ffffff0-0000-6000-8000-000000000000", before[1] + 1)


@pytest.mark.django_db(transaction=True)
def test_a_quiet_leon_db_is_not_asked_again_and_a_write_is_seen_at_once(
    sample_home: Path, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The look's question scans every checkpoint's key; while the file's fingerprint stands still nothing can
    # have moved, so it is not asked. One process throughout: no memo reset hides a write here.
    index = _built(settings)
    reader = MycelReader(resolve_locations())
    asked: list[str | None] = []
    heads = type(reader.backend).moved_heads

    def counted(self, problems, *, since, mark):
        asked.append(since)
        return heads(self, problems, since=since, mark=mark)

    monkeypatch.setattr(type(reader.backend), "moved_heads", counted)
    assert look(reader, index).moved == 0 and len(asked) == 1
    assert look(reader, index).moved == 0 and len(asked) == 1  # quiet: not asked
    thread = "m_npRsndIka9dx-1"
    new_head(sample_home / "leon.db", thread, "1ffffff0-0000-6000-8000-000000000001")
    found = look(reader, index)
    assert (found.moved, found.caught_up, len(asked)) == (1, 1, 2)
    assert (
        index.indexed_heads(store_name(reader), [thread])[thread][0] == "1ffffff0-0000-6000-8000-000000000001"
    )
    assert look(reader, index).moved == 0 and len(asked) == 3  # its own new watermark: asked once more
    assert look(reader, index).moved == 0 and len(asked) == 3


@pytest.mark.django_db(transaction=True)
def test_a_look_reads_only_the_rows_written_after_the_last_and_distrusts_renumbered_rowids(
    sample_home: Path, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every checkpoint's key is scanned by the first look only; the next reads the rows written after the
    # newest one it saw, unless that row is gone or renumbered (VACUUM, a deleted newest row's rowid given
    # again): then the whole question is asked again, and the look is right either way.
    index = _built(settings)
    reader = MycelReader(resolve_locations())
    scans: list[str | None] = []
    scan = fleet_heads.heads_since

    def counted(db, since):
        scans.append(since)
        return scan(db, since)

    monkeypatch.setattr(fleet_heads, "heads_since", counted)
    leon_db = sample_home / "leon.db"
    store = store_name(reader)

    def head(thread: str) -> str | None:
        return index.indexed_heads(store, [thread])[thread][0]

    assert look(reader, index).moved == 0 and len(scans) == 1
    new_head(leon_db, "m_npRsndIka9dx-1", "1ffffff0-0000-6000-8000-000000000001")
    found = look(reader, index)
    assert (found.moved, found.caught_up, len(scans)) == (1, 1, 1)  # no scan: the rows after the mark
    assert head("m_npRsndIka9dx-1") == "1ffffff0-0000-6000-8000-000000000001"

    # The newest row deleted and its rowid given to another thread's new checkpoint: the mark names
    # another row now, so the look scans, and finds the new head all the same.
    with closing(sqlite3.connect(leon_db)) as conn, conn:
        conn.execute("DELETE FROM checkpoints WHERE checkpoint_id = '1ffffff0-0000-6000-8000-000000000001'")
    other = next(t for t in index.indexed_heads(store, None) if t != "m_npRsndIka9dx-1")
    new_head(leon_db, other, "1ffffff0-0000-6000-8000-000000000002")
    found = look(reader, index)
    assert found.moved >= 1 and len(scans) == 2 and head(other) == "1ffffff0-0000-6000-8000-000000000002"

    # A VACUUM after a thread's rows went renumbers the rowids after them.
    with closing(sqlite3.connect(leon_db)) as conn:
        with conn:
            conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (other,))
        conn.execute("VACUUM")
    new_head(leon_db, "m_npRsndIka9dx-1", "1ffffff0-0000-6000-8000-000000000003")
    found = look(reader, index)
    assert len(scans) == 3 and head("m_npRsndIka9dx-1") == "1ffffff0-0000-6000-8000-000000000003"
    new_head(leon_db, "m_npRsndIka9dx-1", "1ffffff0-0000-6000-8000-000000000004")
    assert look(reader, index).caught_up == 1 and len(scans) == 3  # a new mark, trusted again
    assert head("m_npRsndIka9dx-1") == "1ffffff0-0000-6000-8000-000000000004"


@pytest.mark.django_db(transaction=True)
def test_one_builder_at_a_time(sample_home: Path, settings) -> None:
    index = DashboardFleetIndex()
    store = store_name(MycelReader(resolve_locations()))
    with index.builder_lock(store) as first:
        assert first
        other = DashboardFleetIndex()
        other._holder = "another-host:1:1"  # noqa: SLF001 - a second instance
        with other.builder_lock(store) as second:
            assert not second
        assert build(lambda cap: builder_reader(resolve_locations(), cap), other) is None
    assert FleetIndexState.objects.get(store=store).builder == ""


@pytest.mark.django_db(transaction=True)
def test_threads_the_store_drops_leave_the_index(sample_home: Path, settings, tmp_path: Path) -> None:
    index = _built(settings)
    reader = MycelReader(resolve_locations())
    store = store_name(reader)
    gone = "m_npRsndIka9dx-3"
    assert gone in index.indexed_heads(store, None)
    assert build_records(reader, index)
    costs = DashboardCostIndex()
    calls = sum(g.calls for g in costs.usage(store))
    own = sum(g.calls for g in costs.thread_usage(store, [gone]))
    assert own > 0
    with closing(sqlite3.connect(sample_home / "leon.db")) as conn, conn:
        conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (gone,))
        conn.execute("DELETE FROM writes WHERE thread_id = ?", (gone,))
        conn.execute("DELETE FROM threads WHERE id = ?", (gone,))
    reset()
    _built(settings)
    assert gone not in index.indexed_heads(store, None)
    # Its calls leave the fleet's kept sums with it.
    assert sum(g.calls for g in costs.usage(store)) == calls - own
    assert fleet_index.INDEX_RULES >= 1
    shutil.rmtree(tmp_path / "unused", ignore_errors=True)


@pytest.mark.django_db(transaction=True)
def test_cli_threads_from_the_index_equal_the_list_in_memory(sample_home: Path, settings) -> None:
    from memory_core.app.fleet import fleet_rows
    from memory_core.app.fleet_index import index_line, indexed_fleet_rows

    index = DashboardFleetIndex()
    reader = MycelReader(resolve_locations())
    assert indexed_fleet_rows(reader, index) is None  # not built: `threads` lists in memory
    assert index_line(reader, index)["index"]["complete"] is False
    _built(settings)
    found = indexed_fleet_rows(reader, index)
    assert found is not None
    assert found[0] == fleet_rows(reader)[0]
    line = index_line(reader, index)
    assert line["index"]["complete"] is True and line["index"]["total"] == len(found[0])


@pytest.mark.django_db(transaction=True)
def test_the_recompacts_filter_reads_the_record_pass(viewer_client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_FROM = 10**9
    in_memory = viewer_client.get("/threads/?flag=recompacts", **HTMX).content.decode()
    assert _ids(in_memory), "the sample home's compacting thread re-compacts at every call"
    index = _built(settings)
    settings.DASHBOARD_FLEET_INDEX_FROM = 0
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    reset()
    # Before the record pass: no record read, the filter finds none and says why.
    early = viewer_client.get("/threads/?flag=recompacts", **HTMX).content.decode()
    assert _ids(early) == [] and "records of model calls are still being read" in early
    assert build_records(MycelReader(resolve_locations()), index) is not None
    reset()
    body = viewer_client.get("/threads/?flag=recompacts", **HTMX).content.decode()
    assert 'id="fleet-index"' not in body  # every record read: nothing to say
    assert _ids(body) == _ids(in_memory) and _count(body) == _count(in_memory)


@pytest.mark.django_db(transaction=True)
def test_pages_of_one_walk_the_same_order_as_one_page_of_all(sample_home: Path, settings) -> None:
    # Rows with a value and rows without are read apart: pages of one row cross from one part to the other.
    index = _built(settings)
    real = index.page(store_name(MycelReader(resolve_locations())), IndexQuery(limit=1000))[2]
    mixed = [
        replace(
            t,
            row=replace(
                t.row,
                thread_id=f"walk-{i}-{t.thread_id}",
                name=None if i % 2 else t.row.name,
                model=None if i % 3 == 0 else t.row.model,
                updated_at=None if i % 4 == 1 else t.row.updated_at,
            ),
            estimated_tokens=None if i % 2 == 0 else t.estimated_tokens,
        )
        for i, t in enumerate(real * 2)
    ]
    index.put("walk", mixed)
    for sort in ("updated", "fill", "name", "model", "bytes", "thread"):
        for descending in (True, False):
            whole = index.page("walk", IndexQuery(sort=sort, descending=descending, limit=1000))[2]
            assert len(whole) == len(mixed)
            single = [
                index.page("walk", IndexQuery(sort=sort, descending=descending, offset=i, limit=1))[2]
                for i in range(len(whole) + 1)
            ]
            assert [t.thread_id for page in single for t in page] == [t.thread_id for t in whole], sort
            if sort == "fill":  # unknown last whichever the direction, those in the id's own order
                known = [t for t in whole if t.fill is not None]
                assert whole[: len(known)] == known and known and len(known) < len(whole)
                unknown = [t.thread_id for t in whole[len(known) :]]
                assert unknown == sorted(unknown)


@pytest.mark.django_db(transaction=True)
def test_the_database_keeps_what_is_due_for_the_record_pass(sample_home: Path, settings) -> None:
    # `record_due` is computed by the database (a generated column under a partial index): it must say what
    # the rule says in each state a thread's tally goes through, or the record pass would skip a thread.
    index = _built(settings)
    reader = MycelReader(resolve_locations())
    store = store_name(reader)

    def due() -> set[str]:
        rule = [
            t.thread_id
            for t in FleetThread.objects.filter(store=store)
            if t.head_checkpoint_id is not None
            and (t.record_head != t.head_checkpoint_id or t.record_version != t.version)
        ]
        kept = set(
            FleetThread.objects.filter(store=store, record_due=True).values_list("thread_id", flat=True)
        )
        assert kept == set(rule)
        assert index.records_pending(store) == len(rule)
        return kept

    with_heads = set(
        FleetThread.objects.filter(store=store, head_checkpoint_id__isnull=False).values_list(
            "thread_id", flat=True
        )
    )
    assert due() == with_heads  # no record read yet
    assert build_records(reader, index) == len(with_heads)
    assert due() == set()
    thread = "m_npRsndIka9dx-1"
    FleetThread.objects.filter(store=store, thread_id=thread).update(record_version="an older version")
    assert due() == {thread}
    FleetThread.objects.filter(store=store, thread_id=thread).update(head_checkpoint_id="a newer head")
    assert due() == {thread}
    FleetThread.objects.filter(store=store, thread_id=thread).update(
        record_version=F("version"), record_head="a newer head"
    )
    assert due() == set()
    FleetThread.objects.filter(store=store, thread_id=thread).update(head_checkpoint_id=None, checkpoints=0)
    assert due() == set()  # a thread with no checkpoint has no record to read

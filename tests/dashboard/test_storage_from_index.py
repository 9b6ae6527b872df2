"""The Storage report from the fleet index (memory_core/app/fleet_storage.py) over Mycel's sample home:
once the index is built, the page, the API and `storage --json` read each thread's footprint from it and
rank, page and sum it in SQL, and every figure equals the report walked from the stores' bytes, for every
order, horizon and page. A thread's new checkpoint shows at the next load; a thread the stores hold no
bytes of is said, never silently missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.urls import reverse

from memory_core.app import fleet_storage
from memory_core.app.fleet_index import build, store_name
from memory_core.app.storage import StorageSort, storage_as_json, storage_report
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader, Result
from mycel_dashboard.api.tokens import create_token
from mycel_dashboard.models import FleetThread
from mycel_dashboard.screens.storage.presenter import PER_PAGE
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from tests.support.cli import cli_json, run_cli
from tests.support.heads import new_head

# What only the index's report says: where it came from, how far behind it is.
_PROVENANCE = ("from_index", "behind", "without_bytes")


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in _PROVENANCE}


def _build() -> DashboardFleetIndex:
    index = DashboardFleetIndex()
    locations = resolve_locations()
    state = build(lambda cap: builder_reader(locations, cap), index)
    assert state is not None and state.complete
    return index


@pytest.fixture
def index(sample_home: Path, settings: Any) -> DashboardFleetIndex:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    return _build()


def _page_json(viewer_client, query: dict[str, Any]) -> dict[str, Any]:
    response = viewer_client.get(reverse("storage"), query)
    assert response.status_code == 200
    report = response.context["report"]
    return storage_as_json(Result(report, ()))


def _walked(sort: StorageSort, turns: int, offset: int = 0, limit: int | None = PER_PAGE) -> dict[str, Any]:
    reset()  # nothing kept in memory from the index's reads
    # The same facts folder as the page's: the stores' tables as last measured there (table_measures.py).
    reader = MycelReader(resolve_locations(), facts_folder=django_settings.DASHBOARD_FACTS_DIR)
    found = storage_report(reader, turns_ahead=turns, sort=sort, offset=offset, limit=limit)
    return storage_as_json(found)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("turns", [0, 50, 777])
@pytest.mark.parametrize("sort", list(StorageSort))
def test_the_index_report_equals_the_walked_one(viewer_client, index, sort: StorageSort, turns: int) -> None:
    page = _page_json(viewer_client, {"sort": sort.value, "turns": turns})
    assert page["from_index"] is True and page["behind"] == 0 and page["without_bytes"] == 0
    walked = _walked(sort, turns)
    assert walked["from_index"] is False
    assert _comparable(page) == _comparable(walked)
    assert page["thread_count"] == len(page["threads"]) > 3
    # Sizes differ, so the orders differ: the ranking really is the sort's.
    assert [t["thread_id"] for t in page["threads"]] == [
        t["thread_id"] for t in _walked(sort, turns, limit=None)["threads"]
    ]


@pytest.mark.django_db(transaction=True)
def test_pages_of_the_ranking_and_the_chart(viewer_client, index, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mycel_dashboard.screens.storage.views.PER_PAGE", 2)
    every = _walked(StorageSort.PROJECTED, 50, limit=None)["threads"]
    seen: list[str] = []
    for number in range(1, -(-len(every) // 2) + 1):
        response = viewer_client.get(reverse("storage"), {"sort": "projected", "page": number})
        assert response.status_code == 200
        ranking = response.context["ranking"]
        assert ranking.number == number and ranking.threads == len(every)
        seen += [r.row.thread_id for r in ranking.rows]
        assert [r.rank for r in ranking.rows] == list(
            range(2 * number - 1, 2 * number - 1 + len(ranking.rows))
        )
        # The chart draws the biggest by bytes, whatever page and order the table is at.
        assert [t.thread_id for t in response.context["report"].biggest] == [
            t["thread_id"] for t in _walked(StorageSort.BYTES, 50, limit=None)["threads"][:15]
        ]
    assert seen == [t["thread_id"] for t in every]
    past = viewer_client.get(reverse("storage"), {"sort": "projected", "page": 999})
    assert past.context["ranking"].number == -(-len(every) // 2)
    assert "showing the last" in past.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_cli_and_the_api_read_the_index_as_the_page(client, viewer, index, capsys) -> None:
    walked = cli_json(capsys, "storage", "--json", "--turns", "60")
    code, out, err = run_cli(capsys, "storage", "--json", "--turns", "60", fleet_index=DashboardFleetIndex)
    assert code == 0, err
    from_index = json.loads(out)
    assert from_index["from_index"] is True and walked["from_index"] is False
    assert _comparable(from_index) == _comparable(walked)
    token = create_token(viewer)[1]
    answer = client.get(reverse("api_storage"), {"turns": "60"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200
    assert answer.json() == from_index


@pytest.mark.django_db(transaction=True)
def test_a_new_checkpoint_shows_at_the_next_load(viewer_client, index, sample_home: Path) -> None:
    before = _page_json(viewer_client, {"turns": 50})
    thread = "m_npRsndIka9dx-1"
    new_head(sample_home / "leon.db", thread)
    reset()
    after = _page_json(viewer_client, {"turns": 50})
    grown = {t["thread_id"]: t for t in after["threads"]}[thread]
    old = {t["thread_id"]: t for t in before["threads"]}[thread]
    assert grown["checkpoints"] == old["checkpoints"] + 1 and grown["bytes"] > old["bytes"]
    assert after["total_bytes"] == before["total_bytes"] + grown["bytes"] - old["bytes"]
    assert _comparable(after) == _comparable(_walked(StorageSort.BYTES, 50))


@pytest.mark.django_db(transaction=True)
def test_a_thread_indexed_without_bytes_is_said(viewer_client, index) -> None:
    store = store_name(MycelReader(resolve_locations()))
    victim = FleetThread.objects.filter(store=store).exclude(checkpoints=0).order_by("thread_id").first()
    assert victim is not None
    FleetThread.objects.filter(pk=victim.pk).update(storage_bytes=None)
    response = viewer_client.get(reverse("storage"))
    body = response.content.decode()
    assert 'id="storage-without-bytes" data-without="1"' in body
    assert victim.thread_id not in [t.thread_id for t in response.context["report"].threads]


@pytest.mark.django_db(transaction=True)
def test_moved_threads_left_to_the_builder_are_said(
    viewer_client, index, sample_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A look that may catch up no thread itself (as one that met more than INLINE_MOVED moved threads).
    real = fleet_storage.look
    monkeypatch.setattr(fleet_storage, "look", lambda reader, index: real(reader, index, inline_limit=0))
    before = _page_json(viewer_client, {})
    new_head(sample_home / "leon.db", "m_npRsndIka9dx-1")
    reset()
    response = viewer_client.get(reverse("storage"))
    body = response.content.decode()
    assert 'id="storage-behind" role="status" data-behind="1"' in body
    after = storage_as_json(Result(response.context["report"], ()))
    assert after["behind"] == 1 and after["threads"] == before["threads"]  # as of before the move

"""The Cost screen from the fleet index (memory_core/app/fleet_cost.py) over Mycel's sample home: once the
index is built, the page reads the usage its record pass kept, and every figure equals `mycel-memory cost
--json`, which walks the fleet's checkpoints — whole, per period, page by page. A thread that just made a
call counts at the next load; records the page leaves to the builder are said, never silently missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core.app import fleet_cost
from memory_core.app.fleet_index import BUILD_ROW_CAP, build
from memory_core.app.fleet_records import build_records
from memory_core.stores.locations import resolve_locations
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from tests.core.store_builders import build_thread
from tests.support.cli import cli_json

# What only the index's report has, or says differently: where it came from, and how far it got.
_PROVENANCE = ("from_index", "records_pending", "threads_offset", "analysed_threads", "pending_threads")


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in data.items() if k not in _PROVENANCE}
    if out.get("pricing_cache"):
        out["pricing_cache"] = {**out["pricing_cache"], "age_seconds": None}  # measured at each run
    # The index names calls without usage newest first; the walk, in each thread's record order.
    out["calls_without_usage"] = sorted(out["calls_without_usage"], key=repr)
    return out


def _build_index() -> None:
    locations = resolve_locations()
    index = DashboardFleetIndex()
    build(lambda cap: builder_reader(locations, cap), index)
    assert build_records(builder_reader(locations, BUILD_ROW_CAP), index) is not None


@pytest.fixture
def indexed_home(sample_home: Path, settings: Any) -> Path:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    _build_index()
    return sample_home


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "query",
    [{}, {"since": "2026-11-30", "until": "2026-11-30"}, {"since": "2026-12-01"}, {"until": "2026-11-29"}],
)
def test_the_index_report_equals_the_walked_one(viewer_client, indexed_home: Path, capsys, query) -> None:
    response = viewer_client.get(reverse("cost"), query)
    assert response.status_code == 200
    page = response.context["cost_json"]
    assert page["from_index"] is True and page["records_pending"] == 0
    args = [a for k, v in query.items() for a in (f"--{k}", v)]
    walked = cli_json(capsys, "cost", *args, "--json")
    assert walked["from_index"] is False
    assert _comparable(page) == _comparable(walked)
    if not query:
        assert walked["totals"]["calls"] == 41 and walked["thread_count"] == len(walked["threads"]) > 3
        assert '<dd id="cost-total" title="$0.3091455">$0.31</dd>' in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_threads_page_by_page_costliest_first(
    viewer_client, indexed_home: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fleet_cost, "THREADS_SHOWN", 2)
    monkeypatch.setattr("mycel_dashboard.screens.cost.views.THREADS_SHOWN", 2)
    walked = cli_json(capsys, "cost", "--json")["threads"]
    pages: list[dict[str, Any]] = []
    number = 1
    while True:
        response = viewer_client.get(reverse("cost"), {"page": number})
        assert response.status_code == 200
        found = response.context["cost_json"]
        assert found["thread_count"] == len(walked) and found["threads_offset"] == (number - 1) * 2
        pages.extend(found["threads"])
        body = response.content.decode()
        last = min(number * 2, len(walked))
        assert f"Threads {(number - 1) * 2 + 1}–{last} of {len(walked)}" in body
        if last == len(walked):
            assert "Cheaper →" not in body
            break
        assert f'href="?page={number + 1}"' in body
        number += 1
    assert pages == walked  # every thread once, in the walk's order (by cost, then tokens, then id)
    assert number > 2


@pytest.mark.django_db(transaction=True)
def test_a_new_call_counts_at_the_next_load(viewer_client, indexed_home: Path, capsys) -> None:
    before = viewer_client.get(reverse("cost")).context["cost_json"]
    build_thread(indexed_home / "leon.db", "t-new-caller", turns=2, parallel=1)
    after = viewer_client.get(reverse("cost")).context["cost_json"]
    assert after["from_index"] is True and after["records_pending"] == 0
    assert after["totals"]["calls"] == before["totals"]["calls"] + 4  # two turns, two AI messages each
    assert "t-new-caller" in {t["thread_id"] for t in after["threads"]}
    assert _comparable(after) == _comparable(cli_json(capsys, "cost", "--json"))


@pytest.mark.django_db(transaction=True)
def test_records_left_to_the_builder_are_said(
    viewer_client, indexed_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fleet_cost, "INLINE_RECORDS", 0)
    before = viewer_client.get(reverse("cost")).context["cost_json"]
    build_thread(indexed_home / "leon.db", "t-not-read-yet", turns=1, parallel=1)
    response = viewer_client.get(reverse("cost"))
    found = response.context["cost_json"]
    assert found["records_pending"] == 1
    assert found["totals"] == before["totals"]  # its calls are not in yet, and the page says so
    body = response.content.decode()
    assert 'id="cost-records-pending"' in body and "still reading 1 thread" in body

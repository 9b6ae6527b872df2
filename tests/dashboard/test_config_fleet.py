"""The Config page at fleet size (mycel_dashboard/screens/config/fleet.py) on the real sample home: with
the fleet index built it never lists every thread, and says what the page in memory says — the thread
chosen by default (the longest), the threads per model beside their context limits, how many threads the
fleet holds — while its picker offers the newest threads and says so; before the index is built the
table of models says it counts only the newest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memory_core.app.fleet_index import build
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.config import fleet
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader

PICKER = 3  # fewer than the sample's threads: the picker is a sample


def _limits(body: str) -> str:
    found = re.search(r'id="limits-title".*?</table>', body, re.S)
    assert found is not None, body[:2000]
    return re.sub(r'<p class="muted small" id="limits-sampled">.*?</p>', "", found.group(0), flags=re.S)


def _chosen(body: str) -> str:
    found = re.search(r'<option value="([^"]+)" selected', body)
    assert found is not None
    return found.group(1)


def _all_threads(body: str) -> str:
    found = re.search(r"of (\d[\d,]*) thread", body)
    assert found is not None
    return found.group(1)


def _options(body: str) -> list[str]:
    return re.findall(r'<option value="([^"]+)"', body.split('name="thread"', 1)[1].split("</select>", 1)[0])


@pytest.mark.django_db(transaction=True)
def test_the_config_page_at_fleet_size_says_what_the_page_in_memory_says(
    viewer_client, sample_home: Path, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DASHBOARD_FLEET_INDEX_FROM = 10**9
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    in_memory = viewer_client.get("/config/").content.decode()
    assert 'id="config-picker-note"' not in in_memory

    monkeypatch.setattr(fleet, "PICKER_THREADS", PICKER)
    settings.DASHBOARD_FLEET_INDEX_FROM = 1
    reset()
    floor = viewer_client.get("/config/").content.decode()  # no index yet: the newest threads only
    assert 'id="limits-sampled"' in floor and 'id="config-picker-note"' in floor

    locations = resolve_locations()
    state = build(lambda cap: builder_reader(locations, cap), DashboardFleetIndex())
    assert state is not None and state.complete
    walks: list[str] = []
    listing = MycelReader.list_threads

    def counted(self: MycelReader, *args: object, **kwargs: object) -> object:
        walks.append("list_threads")
        return listing(self, *args, **kwargs)

    monkeypatch.setattr(MycelReader, "list_threads", counted)
    reading = MycelReader.read_thread_rows

    def read(self: MycelReader, *args: object, **kwargs: object) -> object:
        walks.append("read_thread_rows")  # the index keeps the rows: the store is asked only what moved
        return reading(self, *args, **kwargs)

    monkeypatch.setattr(MycelReader, "read_thread_rows", read)
    reset()
    body = viewer_client.get("/config/").content.decode()
    assert walks == []
    assert _limits(body) == _limits(in_memory)
    assert _chosen(body) == _chosen(in_memory)
    assert _all_threads(body) == _all_threads(in_memory)
    assert 'id="limits-sampled"' not in body
    assert 'id="config-picker-note"' in body
    offered = _options(body)
    assert _chosen(in_memory) in offered and len(offered) <= PICKER + 1 < len(_options(in_memory))
    # Any thread stays reachable by its id, the oldest too.
    oldest = _options(in_memory)[-1]
    assert oldest not in offered
    picked = viewer_client.get("/config/", {"thread": oldest}).content.decode()
    assert _chosen(picked) == oldest

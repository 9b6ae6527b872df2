"""One truth: a figure two screens show is computed once. The Config screen's what-if calls "current"
exactly the replay the Thread screen draws, for every thread of the demo and the sample homes."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.demo import write_demo_home
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.conftest import point_env_at

# The traces both figures draw from the current config, and the compaction markers.
CURRENT_TRACES = (
    "stored (Mycel estimate)",
    "after pruning",
    "sent to the model",
    "compacted (summary stored)",
    "compacted, summary not stored",
)


def _figure(body: str, element_id: str) -> dict:
    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', body, re.S)
    assert found, f"no {element_id} in the page"
    return json.loads(html.unescape(found.group(1)))


def _traces(figure: dict) -> dict[str, tuple[list, list]]:
    return {t["name"]: (t["x"], t["y"]) for t in figure["data"] if t["name"] in CURRENT_TRACES}


def _threads_with_calls() -> list[str]:
    reader = MycelReader(resolve_locations())
    return [row.thread_id for row in reader.list_threads().value if row.messages and row.head_checkpoint_id]


@pytest.fixture(params=["demo", "sample"])
def home(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if request.param == "sample":
        return request.getfixturevalue("sample_home")
    folder = tmp_path / "demo"
    write_demo_home(folder, seed=7)
    point_env_at(monkeypatch, folder)
    return folder


def test_the_whatif_current_side_is_the_thread_pages_replay(viewer_client, home: Path) -> None:
    compared = 0
    for thread_id in _threads_with_calls():
        page = viewer_client.get(reverse("thread", args=[thread_id])).content.decode()
        if 'id="fill-figure"' not in page:
            continue  # no model call yet
        config = viewer_client.get(reverse("config"), {"thread": thread_id}).content.decode()
        on_thread, on_config = (
            _traces(_figure(page, "fill-figure")),
            _traces(_figure(config, "whatif-figure")),
        )
        assert "sent to the model" in on_thread, thread_id
        assert on_config == on_thread, thread_id
        compared += 1
    assert compared >= 3

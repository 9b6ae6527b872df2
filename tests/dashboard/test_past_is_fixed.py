"""The past is fixed: saving, restoring or editing a config layer moves no figure labelled as the record —
calls, settings in force, the chart, the what-if's current side, calibration, tools, the prompt cache —
on every thread of the sample and demo homes. Today's config enters only the proposed side."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.cli import cli_json, kept_main

RECORD_TRACES = ("stored (Mycel estimate)", "after pruning", "sent to the model")
# Far from every sample's and the demo's: a replay under them differs from the record on some thread.
SAVED = {"memory.pruning.soft_trim_chars": "1000", "runtime.context_limit": "20000"}


def _threads() -> list[str]:
    rows = MycelReader(resolve_locations()).list_threads().value
    return [row.thread_id for row in rows if row.messages and row.head_checkpoint_id]


def _chart(body: str) -> dict[str, Any]:
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    if found is None:
        return {}
    figure = json.loads(html.unescape(found.group(1)))
    traces = {t["name"]: [t["x"], t["y"]] for t in figure["data"] if t["name"] in RECORD_TRACES}
    lines = [s["y0"] for s in figure["layout"]["shapes"] if s["name"] in ("trigger", "limit")]
    return {"traces": traces, "lines": lines}


def _without_warnings(data: Any) -> Any:
    """The figures of a --json answer: its warnings may say that today's config differs."""
    if isinstance(data, dict):
        return {k: _without_warnings(v) for k, v in data.items() if k != "warnings"}
    if isinstance(data, list):
        return [_without_warnings(v) for v in data]
    return data


def _record(capsys: pytest.CaptureFixture[str], client: Any, threads: list[str]) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "calibration": cli_json(capsys, "calibration", "--json"),
        "tools": cli_json(capsys, "tools", "--json"),
        "cache": cli_json(capsys, "cache", "--all", "--json"),
    }
    for thread_id in threads:
        figures[thread_id] = {
            "calls": cli_json(capsys, "calls", thread_id, "--json"),
            "thread": cli_json(capsys, "thread", thread_id, "--json"),
            "whatif_current": cli_json(capsys, "whatif", thread_id, "--json")["current"],
            "chart": _chart(client.get(reverse("thread", args=[thread_id])).content.decode()),
            "call_page": client.get(reverse("call", args=[thread_id, 1])).status_code,
        }
    return _without_warnings(figures)


def _proposed(capsys: pytest.CaptureFixture[str], threads: list[str]) -> list[Any]:
    return [cli_json(capsys, "whatif", t, "--json")["proposed"] for t in threads]


def test_saving_restoring_and_editing_a_layer_move_no_figure_of_the_record(
    viewer_client, either_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    threads = _threads()
    assert len(threads) >= 3
    before = _record(capsys, viewer_client, threads)
    proposed_before = _proposed(capsys, threads)

    for key, value in SAVED.items():  # a save through the audited command, as the Config screen does
        assert kept_main(["config", "set", key, value, "--layer", "user"]) == 0
    assert _record(capsys, viewer_client, threads) == before
    # The save took: today's config is the what-if's proposed side, which moved.
    assert _proposed(capsys, threads) != proposed_before

    history = cli_json(capsys, "config", "history", "--layer", "user", "--json")["versions"]
    oldest = history[-1]["version"]  # what the layer was before the first save (perhaps "no file")
    assert kept_main(["config", "restore", oldest, "--layer", "user"]) == 0
    assert _record(capsys, viewer_client, threads) == before

    # An edit by hand, made now, is today's config too.
    (either_home / "runtime.json").write_text(
        json.dumps({"runtime": {"context_limit": 9000}}), encoding="utf-8"
    )
    assert _record(capsys, viewer_client, threads) == before


def test_a_save_adds_a_note_that_todays_config_differs_and_keeps_the_figures(
    viewer_client, sample_home: Path
) -> None:
    thread_id = _threads()[0]
    url = reverse("thread", args=[thread_id])
    chart = _chart(viewer_client.get(url).content.decode())
    assert kept_main(["config", "set", "runtime.context_limit", "20000", "--layer", "user"]) == 0
    body = viewer_client.get(url).content.decode()
    assert "Today&#x27;s config differs" in body and "context_limit 20,000 instead of" in body
    assert _chart(body) == chart


def test_a_limit_the_record_allows_a_range_for_shows_the_range_and_what_follows_it(
    viewer_client, sample_home: Path
) -> None:
    # Toad · 分身1 ran on leon:snug (models.json: 5,500); its summary rows allow 5,285 to 5,562.
    body = viewer_client.get(reverse("thread", args=["m_0D8EzdJXJhk9-2"])).content.decode()
    limit = re.search(r'<div id="limit-in-force">(.*?)</div>', body, re.S)
    assert limit is not None
    text = html.unescape(re.sub(r"<[^>]+>", "", limit.group(1)))
    assert "5,500" in text and "models.json" in text
    assert "the record allows between 5,285 and 5,562" in text
    assert "fill, trigger and compactions follow this value" in text
    # A thread no summary row measures says nothing of a range: its limit is the config's.
    body = viewer_client.get(reverse("thread", args=["m_0D8EzdJXJhk9-1"])).content.decode()
    assert "the record allows" not in body

"""One truth: a figure two screens show is computed once. The Config screen's what-if calls "current"
exactly the replay the Thread screen draws, for every thread of the demo and the sample homes."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.cli import cli_json

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


def test_the_whatif_current_side_is_the_thread_pages_replay(viewer_client, either_home: Path) -> None:
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


def _call_page_figures(body: str) -> dict[str, str]:
    """The call page's facts as shown: the number each <dt> label heads."""
    facts = re.search(r'<dl class="facts" id="call-facts">(.*?)</dl>', body, re.S)
    assert facts, "no call facts"
    return {
        html.unescape(dt): re.sub(r"<[^>]+>", "", html.unescape(dd)).split()[0]
        for dt, dd in re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", facts.group(1), re.S)
    }


def test_calls_and_the_thread_page_agree_on_every_figure(
    viewer_client, either_home: Path, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every thread of the home: `mycel-memory calls --json` and the Thread page's chart (every trace, every
    compaction marker, the limits in force), every call's page, and `whatif`'s current side."""
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    compared = 0
    for thread_id in _threads_with_calls():
        calls = cli_json(capsys, "calls", thread_id, "--json")
        assert cli_json(capsys, "whatif", thread_id, "--json")["current"] == calls, thread_id
        page = viewer_client.get(reverse("thread", args=[thread_id])).content.decode()
        if not calls:
            assert 'id="fill-figure"' not in page
            continue
        figure = _figure(page, "fill-figure")
        traces = {t["name"]: t for t in figure["data"]}
        assert traces["stored (Mycel estimate)"]["y"] == [c["estimated_tokens"]["stored"] for c in calls]
        assert traces["after pruning"]["y"] == [c["estimated_tokens"]["after_pruning"] for c in calls]
        assert traces["sent to the model"]["y"] == [c["estimated_tokens"]["sent"] for c in calls]
        if "tiktoken (sent)" in traces:
            assert traces["tiktoken (sent)"]["y"] == [c["tiktoken_tokens"] for c in calls]
        markers = {
            name: traces[name]["x"] if name in traces else []
            for name in ("compacted (summary stored)", "compacted, summary not stored")
        }
        assert markers["compacted (summary stored)"] == [
            c["call"] for c in calls if c["compacted"] and c["summary_stored"]
        ]
        assert markers["compacted, summary not stored"] == [
            c["call"] for c in calls if c["compacted"] and not c["summary_stored"]
        ]
        lines = {s["name"]: s["y0"] for s in figure["layout"]["shapes"] if s["name"] in ("trigger", "limit")}
        if lines:
            assert {c["context_limit"] for c in calls} == {lines["limit"]}, thread_id
            assert {c["trigger_tokens"] for c in calls} == {lines["trigger"]}, thread_id
        else:  # the settings changed: step lines per call
            assert traces["context limit in force"]["y"] == [c["context_limit"] for c in calls]
        thread = cli_json(capsys, "thread", thread_id, "--json")
        assert (f"{thread['context_limit']:,}" in page) and thread["context_limit_source"] in page
        for line in (*thread["disagreements"], *thread["assumed"]):
            assert html.escape(line) in page, thread_id
        for call in calls:
            body = viewer_client.get(reverse("call", args=[thread_id, call["call"]])).content.decode()
            shown = _call_page_figures(body)
            assert shown["Messages handed the model"] == f"{call['request_messages']:,}"
            assert shown["Mycel's estimate"] == f"{call['estimated_tokens']['sent']:,}"
            assert shown["Context limit in force"] == f"{call['context_limit']:,}"
            request = body[body.index('id="request"') :]
            assert (
                request.count('<li class="msg ') == call["request_messages"]
            )  # the system prompt's note too
            # What the summariser got before it: each request's size and each message's, as --json has them.
            summariser = body[: body.index('id="request"')]
            assert summariser.count('class="summariser-request"') == len(call["summariser_requests"])
            for number, sent in enumerate(call["summariser_requests"], start=1):
                shown_request = summariser[summariser.index(f'id="summariser-request-{number}"') :]
                assert f"{sent['chars']:,} characters" in shown_request
                for message in sent["messages"]:
                    assert f"{message['chars']:,} chars" in shown_request
        compared += 1
    assert compared >= 5

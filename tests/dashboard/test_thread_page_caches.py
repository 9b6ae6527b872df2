"""The thread page keeps its rail and chart per head checkpoint: anything new in the files shows at once."""

from __future__ import annotations

import json
import re
import sqlite3
from contextlib import closing
from pathlib import Path

from tests.support.mycel_env import write_config_in_force

TOOL_HEAVY = "m_npRsndIka9dx-2"


def _figure(body: str) -> dict:
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found, "the chart's json_script is missing"
    return json.loads(found.group(1))


def _lines(body: str) -> list[int]:
    return [s["y0"] for s in _figure(body)["layout"]["shapes"] if s["name"] in ("trigger", "limit")]


def test_the_chart_follows_the_context_limit_and_the_config_in_force_then(viewer_client, sample_home: Path):
    url = f"/threads/{TOOL_HEAVY}/"
    first = _lines(viewer_client.get(url).content.decode())
    assert _lines(viewer_client.get(url).content.decode()) == first
    assert _lines(viewer_client.get(f"{url}?limit=10000").content.decode()) == [7000, 10000]
    # A config written now came after the thread ran: the record stays, and the page says today's differs.
    (sample_home / "runtime.json").write_text(json.dumps({"runtime": {"context_limit": 20000}}))
    body = viewer_client.get(url).content.decode()
    assert _lines(body) == first != [14000, 20000]
    assert "Today&#x27;s config differs" in body and "context_limit 20,000 instead of" in body
    # The same file dated before the thread was the config it ran under: the kept chart follows it.
    write_config_in_force(sample_home / "runtime.json", json.dumps({"runtime": {"context_limit": 20000}}))
    assert _lines(viewer_client.get(url).content.decode()) == [14000, 20000]


def test_a_checkpoint_written_after_the_page_was_shown_appears_on_the_rail(viewer_client, sample_home: Path):
    url = f"/threads/{TOOL_HEAVY}/"
    assert "step 4242" not in viewer_client.get(url).content.decode()
    with closing(sqlite3.connect(sample_home / "leon.db")) as conn:
        row = conn.execute(
            "SELECT checkpoint_id, checkpoint_ns, type, checkpoint FROM checkpoints WHERE thread_id = ? "
            "ORDER BY checkpoint_id DESC LIMIT 1",
            (TOOL_HEAVY,),
        ).fetchone()
        head, namespace, kind, blob = row
        newer = head[:-4] + "ffff"  # uuid6 ids sort by time: this one is the newest
        assert newer > head
        conn.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
            "checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (TOOL_HEAVY, namespace, newer, head, kind, blob, json.dumps({"step": 4242, "source": "loop"})),
        )
        conn.commit()
    body = viewer_client.get(url).content.decode()
    assert "step 4242 · loop" in body


def test_the_timeline_follows_the_config_then_and_not_a_change_made_since(viewer_client, sample_home: Path):
    url = f"/threads/{TOOL_HEAVY}/"
    pages = (lambda: viewer_client.get(url), lambda: viewer_client.get(url, HTTP_HX_REQUEST="true"))
    for get in pages:
        assert "hard-cleared (was 12,731 chars)" not in get().content.decode()
    protect_one = json.dumps({"memory": {"pruning": {"protect_recent": 1}}})
    (sample_home / "runtime.json").write_text(protect_one)  # today's, after the thread ran
    for get in pages:
        assert "hard-cleared (was 12,731 chars)" not in get().content.decode()
    write_config_in_force(sample_home / "runtime.json", protect_one)  # the same, in force while it ran
    for get in pages:
        assert "hard-cleared (was 12,731 chars)" in get().content.decode()


def test_the_timeline_partial_keeps_the_urls_parameters_in_its_links(viewer_client, sample_home: Path):
    url = f"/threads/{TOOL_HEAVY}/"
    plain = viewer_client.get(url, HTTP_HX_REQUEST="true")
    with_limit = viewer_client.get(f"{url}?limit=9000", HTTP_HX_REQUEST="true")
    assert plain.status_code == with_limit.status_code == 200
    assert "HX-Request" in with_limit["Vary"]
    assert "limit=9000" in with_limit.content.decode() and "limit=9000" not in plain.content.decode()

"""Dev's steer note on a thread in Mycel dev's layout (written through LangGraph's real AsyncPostgresSaver,
as dev's LangGraphCheckpointStore saves): the call page shows the note as the first message after the
system prompt, and `calls --json`, the chart's sent line and the page agree; the dev sample Mycel dev wrote
holds no steer, so none of its calls gets one."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from memory_core.demo.dev_layout import build_dev_demo
from memory_core.rules.request_time import STEER_NOTE
from tests.support.cli import cli_json
from tests.support.dev_steer import THREAD, steered_dev_thread
from tests.support.postgres import database_name
from tests.support.sample_data import PG_DEV_SAMPLE


@pytest.fixture
def steered_client(
    client: Any, db: Any, settings: Any, pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Any:
    url = pg_server.create_database(database_name("dev_steer"))
    build_dev_demo(url, [steered_dev_thread()])
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    return client


def _page(client: Any, number: int) -> str:
    response = client.get(f"/threads/{THREAD}/calls/{number}/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_call_page_shows_the_note_dev_added(steered_client: Any) -> None:
    before = _page(steered_client, 1)
    assert "Steer note" not in before
    assert "not added at this call: no owner steer among the messages sent." in before
    after = _page(steered_client, 2)
    first = after.split('id="req-1"', 1)[1].split("</li>", 1)[0]
    assert "Steer note" in first and "added at call time · not stored" in first
    assert html.escape(STEER_NOTE) in first and "426 chars" in first
    assert after.count('<li class="msg ') == 1 + 1 + 4  # system prompt, the note, messages 0-3
    steer = after.split('id="req-5"', 1)[1].split("</li>", 1)[0]  # stored message 3, what made dev add it
    assert ">owner steer</span>" in steer and after.count(">owner steer</span>") == 1
    assert 'id="req-2"' in after and 'href="/threads/m_devSteer0001-1/#msg-0"' in after.split('id="req-2"')[1]
    line = after.split('id="request-time-steer_note"', 1)[1].split("</li>", 1)[0]
    assert "added: dev&#x27;s steer note (426 characters), the first message after the system prompt" in line
    for key in ("tools", "retries"):
        rule = after.split(f'id="request-time-{key}"', 1)[1].split("</li>", 1)[0]
        assert "— not reproducible: " in rule
    # The facts above the request count it: the system prompt + the note + 4 stored messages.
    assert re.search(r"Messages handed the model</dt><dd>6 <span", after)
    assert "the steer as instructions" in _page(steered_client, 3)  # still sent, so still noted


def test_calls_json_the_charts_sent_line_and_the_page_agree(
    steered_client: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = cli_json(capsys, "calls", THREAD, "--json")
    assert (calls[0]["rules"], calls[0]["rules_reason"]) == ("dev", "dev layout")
    assert [c["request_time"]["steer_note"] for c in calls] == [False, True, True]
    assert [c["request_messages"] for c in calls] == [2, 1 + 1 + 4, 1 + 1 + 6]
    body = steered_client.get(f"/threads/{THREAD}/").content.decode()
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body)
    assert found is not None
    figure = json.loads(found.group(1))
    sent = next(t for t in figure["data"] if t.get("name") == "sent to the model")
    assert sent["y"] == [c["estimated_tokens"]["sent"] for c in calls]
    # The note's 426 characters are 213 of Mycel's estimated tokens on top of what memory sent.
    stored_chars = [len("List the files in the pond folder."), 0, len("tadpole.txt\n" * 50)]
    stored_chars.append(len("Stop listing; count them instead."))
    assert calls[1]["estimated_tokens"]["sent"] == (sum(stored_chars) + len(STEER_NOTE)) // 2


def test_no_call_of_the_dev_sample_gets_the_note(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Dev wrote the sample's summaries to its SQLite fallback at LEON_DB_PATH (no Supabase): a copy.
    shutil.copy(PG_DEV_SAMPLE / "leon.db", tmp_path / "leon.db")
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    logged = json.loads((PG_DEV_SAMPLE / "driver_log.json").read_text())["model_calls"]
    threads = sorted({c["thread"] for c in logged})
    assert len(threads) == 5
    for thread in threads:
        calls = cli_json(capsys, "calls", thread, "--json")
        assert calls and not any(c["request_time"]["steer_note"] for c in calls), thread
        # and each request holds as many messages as the scripted model logged it received
        steps = [c for c in logged if c["thread"] == thread and c["kind"] == "step"]
        assert [c["request_messages"] for c in calls] == [len(s["sent"]) for s in steps]

"""Every screen over both layouts our demo writers put in PostgreSQL through AsyncPostgresSaver: Mycel main's
graph layout (api_key in the metadata) and Mycel dev's (schema `agent`, written as dev's store saves). For
each thread: the list, the thread page, every checkpoint page and its diff, every call page, the dry-run
and the config what-if answer 200, name the thread's rules, and no page holds the planted key."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from memory_core.demo.graph import FAKE_API_KEY
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader


@pytest.fixture(params=["main", "dev"])
def layout_home(request, pg_server, tmp_path: Path) -> tuple[str, str, list[str]]:
    if request.param == "main":
        url, built = request.getfixturevalue("pg_main_db")
        return "main", url, [b.thread_id for b in built]
    url, written = request.getfixturevalue("pg_dev_demo")
    return "dev", url, [w.thread_id for w in written]


@pytest.fixture
def viewer(client, db, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout_home):
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("LEON_POSTGRES_URL", layout_home[1])
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    return client


def _get(client, path: str) -> str:
    answer = client.get(path)
    assert answer.status_code == 200, (path, answer.status_code, answer.content[:300])
    body = html.unescape(answer.content.decode())
    assert FAKE_API_KEY not in body, path
    return body


def test_every_screen_of_every_thread(viewer, layout_home, tmp_path: Path) -> None:
    layout, url, threads = layout_home
    reader = MycelReader(resolve_locations({"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url}))
    rules_words = "Mycel dev's rules" if layout == "dev" else "Mycel main's rules"
    listed = _get(viewer, "/threads/")
    for thread_id in threads:
        assert thread_id in listed
        row = reader.get_thread(thread_id).value
        assert row is not None and row.layout == layout
        page = _get(viewer, f"/threads/{thread_id}/")
        assert rules_words in page
        checkpoints = reader.list_checkpoints(thread_id).value
        assert checkpoints
        for checkpoint in checkpoints:
            body = _get(viewer, f"/threads/{thread_id}/checkpoints/{checkpoint.checkpoint_id}/")
            assert checkpoint.checkpoint_id in body
        calls = re.findall(rf'href="/threads/{re.escape(thread_id)}/calls/(\d+)/"', page)
        assert calls, thread_id
        for number in sorted(set(calls), key=int):
            assert rules_words in _get(viewer, f"/threads/{thread_id}/calls/{number}/")
        _get(viewer, f"/threads/{thread_id}/dry-run/")
        _get(viewer, f"/config/?thread={thread_id}&runtime.context_limit=6000")

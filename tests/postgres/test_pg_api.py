"""The JSON API over a real PostgreSQL server (Mycel dev's sample in schema `agent`, main's layout written by
the real AsyncPostgresSaver): every endpoint equals the CLI's --json, main's api_key and the URL's password
reach no response, and an unreachable server is a 503 JSON error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memory_core.demo.graph import FAKE_API_KEY
from mycel_dashboard.api.tokens import create_token
from tests.support.cli import cli_json


@pytest.fixture
def api(client, db, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A GET with a viewer token, no Mycel SQLite variable set."""
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    token = create_token(User.objects.create_user("viewer"))[1]

    def get(url: str, **query: Any):
        return client.get(url, query, HTTP_AUTHORIZATION=f"Bearer {token}")

    return get


def _ok(response) -> Any:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"] == "application/json"
    return json.loads(response.content)


@pytest.mark.parametrize("database", ["pg_dev_sample", "pg_main_db"])
def test_every_endpoint_equals_the_cli_over_postgres(
    api, database: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    found = request.getfixturevalue(database)
    url = found if isinstance(found, str) else found[0]
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    bodies: list[str] = []

    def ok(response) -> Any:
        bodies.append(response.content.decode())
        return _ok(response)

    listed = ok(api(reverse("api_threads"), limit=1000))
    assert listed["results"] == cli_json(capsys, "threads", "--json") and listed["count"] >= 2
    for row in listed["results"][:3]:
        thread_id = row["thread_id"]
        assert ok(api(reverse("api_thread", args=[thread_id]))) == cli_json(
            capsys, "thread", thread_id, "--json"
        )
        calls = ok(api(reverse("api_calls", args=[thread_id]), limit=1000))["results"]
        assert calls == cli_json(capsys, "calls", thread_id, "--json")
        head = row["head_checkpoint_id"]
        if head:
            checkpoint = ok(api(reverse("api_checkpoint", args=[thread_id, head])))
            assert checkpoint["is_head"] and checkpoint["messages"]
    assert ok(api(reverse("api_storage"))) == cli_json(capsys, "storage", "--json")
    password = url.split("//", 1)[1].split("@", 1)[0].partition(":")[2]
    for body in bodies:
        assert FAKE_API_KEY not in body
        assert not password or password not in body


def test_an_unreachable_server_is_503_json_without_the_password(api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "LEON_POSTGRES_URL", "postgresql://mycel:s3cret-pw@127.0.0.1:9/mycel?connect_timeout=2"
    )
    for name in ("api_threads", "api_storage"):
        response = api(reverse(name))
        assert response.status_code == 503
        assert response["Content-Type"] == "application/json"
        body = response.content.decode()
        assert json.loads(body)["error"] and "s3cret-pw" not in body

"""The JSON API behind a real gunicorn (`make serve`'s command) over the demo home, driven with curl exactly
as the README shows it: a token from `manage.py api_token create`, paging by `next`, the headers, a revoked
token refused, and no token in the server's log."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from memory_core.demo import write_demo_home
from tests.support.server import DashboardServer, running_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("api-served")
    home = base / "mycel-home"
    manifest = write_demo_home(home, seed=7)
    with running_server(base, home, manifest=manifest, workers=1, threads=2) as running:
        yield running


def _curl(url: str, token: str | None = None) -> tuple[int, dict[str, str], Any]:
    command = ["curl", "-sS", "--noproxy", "*", "-D", "-", "--max-time", "60"]
    if token is not None:
        command += ["-H", f"Authorization: Bearer {token}"]
    done = subprocess.run([*command, url], capture_output=True, text=True, check=True)
    # Text mode has turned the headers' CRLF into LF.
    head, _, body = done.stdout.partition("\n\n")
    lines = head.splitlines()
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, json.loads(body)


def test_curl_reads_the_api_with_a_token_and_not_without(server: DashboardServer) -> None:
    created = server.manage("api_token", "create", "viewer")
    token = created.strip().splitlines()[-1]
    assert token.startswith("mycel_")

    status, headers, body = _curl(f"{server.url}/api/threads/")
    assert status == 401 and "error" in body
    assert headers["content-type"] == "application/json"

    status, headers, first = _curl(f"{server.url}/api/threads/?limit=2", token)
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert headers["x-content-type-options"] == "nosniff"
    assert first["count"] > 2 and len(first["results"]) == 2
    ids = [row["thread_id"] for row in first["results"]]
    page = first
    while page["next"] is not None:
        assert page["next"].startswith(server.url + "/api/threads/?")
        status, _, page = _curl(page["next"], token)
        assert status == 200
        ids += [row["thread_id"] for row in page["results"]]
    assert len(ids) == len(set(ids)) == first["count"]

    thread_id = server.manifest.threads[0].thread_id
    status, _, thread = _curl(f"{server.url}/api/threads/{thread_id}/", token)
    assert status == 200 and thread["thread_id"] == thread_id
    status, _, calls = _curl(f"{server.url}/api/threads/{thread_id}/calls/?limit=1", token)
    assert status == 200 and calls["count"] >= 1
    status, _, missing = _curl(f"{server.url}/api/threads/no-such-thread/", token)
    assert status == 404 and "unknown thread" in missing["error"]

    assert "never used" not in server.manage("api_token", "list")  # its last use is recorded
    for body in (first, thread, calls):
        assert server.manifest.api_key not in json.dumps(body)
    server.manage("api_token", "revoke", "viewer")
    status, _, body = _curl(f"{server.url}/api/threads/", token)
    assert status == 401 and body["error"] == "invalid or revoked API token"
    assert token not in server.log_text()

"""Compaction dry-run in the browser-facing views, and the optional summary model on a local stub server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from memory_core.compaction import DEFAULT_SUMMARY_PROMPT
from mycel_dashboard.models import AuditEntry

COMPACTED = "m_0D8EzdJXJhk9-2"


def test_dry_run_shows_the_split_mycel_made(viewer_client, sample_home: Path):
    response = viewer_client.get(f"/threads/{COMPACTED}/dry-run/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "compact_up_to_index</code> = 16" in body
    assert "[Human]: " in body  # the summariser's conversation text
    assert "Compacts on the next call?" in body
    assert "HX-Request" in response["Vary"]


def test_proposed_values_change_the_plan(viewer_client, sample_home: Path):
    response = viewer_client.get(
        f"/threads/{COMPACTED}/dry-run/", {"context_limit": 1_000_000}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="dry-run-result"' in body and "<html" not in body
    assert "Proposed values" in body
    assert "current config: yes" in body


def test_invalid_values_are_explained_not_500(viewer_client, sample_home: Path):
    response = viewer_client.get(f"/threads/{COMPACTED}/dry-run/", {"soft_trim_chars": "-3"})
    assert response.status_code == 200
    assert "soft_trim_chars" in response.content.decode()


def test_unknown_thread_is_404(viewer_client, sample_home: Path):
    assert viewer_client.get("/threads/nope/dry-run/").status_code == 404


class _StubModel(BaseHTTPRequestHandler):
    received: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append({"body": body, "auth": self.headers.get("Authorization")})
        answer = {"choices": [{"message": {"role": "assistant", "content": "STUB SUMMARY <b>bold</b>"}}]}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def stub_model(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_StubModel]]:
    server = HTTPServer(("127.0.0.1", 0), _StubModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("DASHBOARD_SUMMARY_URL", f"http://127.0.0.1:{server.server_port}/v1/chat/completions")
    monkeypatch.setenv("DASHBOARD_SUMMARY_MODEL", "stub-model")
    monkeypatch.setenv("DASHBOARD_SUMMARY_API_KEY", "sk-stub-secret-value")
    _StubModel.received = []
    yield _StubModel
    server.shutdown()


def test_operator_generates_a_summary_with_the_configured_model(
    operator_client, sample_home: Path, stub_model
):
    before = {p: p.read_bytes() for p in sample_home.glob("*.db")}
    response = operator_client.post(f"/threads/{COMPACTED}/dry-run/generate/", {})
    body = response.content.decode()
    assert response.status_code == 200
    assert "STUB SUMMARY &lt;b&gt;bold&lt;/b&gt;" in body
    assert "sk-stub-secret-value" not in body
    sent = stub_model.received[0]
    assert sent["auth"] == "Bearer sk-stub-secret-value"
    assert sent["body"]["model"] == "stub-model"
    system, user = sent["body"]["messages"]
    assert system == {"role": "system", "content": DEFAULT_SUMMARY_PROMPT}
    assert user["content"].startswith("The conversation to summarise:\n\n[Human]: ")
    assert {p: p.read_bytes() for p in sample_home.glob("*.db")} == before
    assert AuditEntry.objects.get().action == "summary_preview"


def test_a_viewer_cannot_call_the_model(viewer_client, sample_home: Path, stub_model):
    assert viewer_client.post(f"/threads/{COMPACTED}/dry-run/generate/", {}).status_code == 403
    assert stub_model.received == []


def test_generation_without_a_configured_model_is_a_clear_400(operator_client, sample_home: Path):
    response = operator_client.post(f"/threads/{COMPACTED}/dry-run/generate/", {})
    assert response.status_code == 400
    assert "No summary model is configured" in response.content.decode()

from __future__ import annotations

import html
from pathlib import Path

import pytest

HTMX = {"HTTP_HX_REQUEST": "true"}
TOOL_HEAVY = "m_npRsndIka9dx-2"
PANELS = ("sandbox", "queue", "file-operations", "run-events", "integrity")


@pytest.mark.parametrize("name", PANELS)
def test_each_panel_is_an_htmx_partial_and_a_page(viewer_client, sample_home: Path, name: str):
    partial = viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/{name}/", **HTMX)
    assert partial.status_code == 200
    assert partial.content.decode().lstrip().startswith(f'<section class="card panel" id="panel-{name}"')
    assert "HX-Request" in partial["Vary"]
    page = viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/{name}/")
    assert "<html" in page.content.decode() and f'id="panel-{name}"' in page.content.decode()


def test_sandbox_panel_shows_the_threads_lease(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/sandbox/", **HTMX).content.decode()
    assert "lease-" in body


def test_file_operations_panel_lists_writes_and_edits(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/m_npRsndIka9dx-3/panels/file-operations/", **HTMX).content.decode()
    assert 'Write and Edit operations <span class="muted">(2)</span>' in body
    assert "<td>write</td>" in body and "<td>edit</td>" in body


def test_run_events_panel_shows_the_provider_error(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/m_npRsndIka9dx-3/panels/run-events/", **HTMX).content.decode()
    assert "<td>error</td>" in body  # the event type
    provider_error = "Error code: 500 - {'type': 'error', 'error': {'type': 'api_error', 'message': 'Internal server error'}}"
    assert html.escape(provider_error) in body


def test_empty_queue_says_why(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/queue/", **HTMX).content.decode()
    assert "No pending items" in body


def test_missing_queue_file_is_a_message_not_an_error(viewer_client, sample_home: Path):
    (sample_home / "queue.db").unlink()
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/queue/", **HTMX)
    assert response.status_code == 200
    assert 'id="panel-queue"' in response.content.decode()


def test_unknown_panel_and_unknown_thread_are_404(viewer_client, sample_home: Path):
    assert viewer_client.get(f"/threads/{TOOL_HEAVY}/panels/nope/").status_code == 404
    assert viewer_client.get("/threads/nobody-1/panels/queue/").status_code == 404

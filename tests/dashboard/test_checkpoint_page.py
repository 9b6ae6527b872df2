from __future__ import annotations

import re
from pathlib import Path

import pytest

HTMX = {"HTTP_HX_REQUEST": "true"}
THREAD = "m_0D8EzdJXJhk9-1"


@pytest.fixture
def checkpoint_ids(viewer_client, sample_home: Path) -> list[str]:
    body = viewer_client.get(f"/threads/{THREAD}/").content.decode()
    return re.findall(rf'href="/threads/{THREAD}/checkpoints/([^/]+)/"', body)  # newest first


def test_checkpoint_shows_its_state_and_the_diff_against_its_parent(viewer_client, checkpoint_ids):
    newest = checkpoint_ids[0]
    response = viewer_client.get(f"/threads/{THREAD}/checkpoints/{newest}/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "State at this checkpoint" in body
    assert "Against its parent" in body
    assert "1 message added, 0 removed, 0 changed, 0 other channels changed." in body
    assert '<span class="badge ok">added</span> <span class="role">AI</span>' in body
    assert "HX-Request" in response["Vary"]


def test_diff_against_a_chosen_checkpoint_is_an_htmx_partial(viewer_client, checkpoint_ids):
    newest, oldest = checkpoint_ids[0], checkpoint_ids[-1]
    response = viewer_client.get(f"/threads/{THREAD}/checkpoints/{newest}/?against={oldest}", **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="checkpoint-diff">')
    assert "the chosen checkpoint" in body
    assert "6 messages added" in body


def test_unknown_comparison_is_reported_and_falls_back_to_the_parent(viewer_client, checkpoint_ids):
    body = viewer_client.get(
        f"/threads/{THREAD}/checkpoints/{checkpoint_ids[0]}/?against=nope"
    ).content.decode()
    assert "No checkpoint &#x27;nope&#x27;" in body
    assert "Against its parent" in body


def test_unknown_checkpoint_is_404(viewer_client, sample_home: Path):
    assert viewer_client.get(f"/threads/{THREAD}/checkpoints/not-a-checkpoint/").status_code == 404


def test_rollback_place_is_reserved_and_role_dependent(client, viewer, operator, checkpoint_ids):
    url = f"/threads/{THREAD}/checkpoints/{checkpoint_ids[1]}/"
    client.force_login(viewer)
    assert "Only operators may roll a thread back" in client.get(url).content.decode()
    client.force_login(operator)
    body = client.get(url).content.decode()
    assert 'id="rollback"' in body and "Roll back to here" in body
    assert "Only operators" not in body

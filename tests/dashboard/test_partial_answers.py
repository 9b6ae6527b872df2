"""An answer shaped by a store problem says so: with leon.db truncated or locked, every API endpoint answers
503 naming the store (threads other stores still know are no answer about checkpoints), the call page says
"locked" instead of "not found", and a readable home's answers carry an empty `warnings`."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core import memo
from mycel_dashboard.api.tokens import create_token
from tests.dashboard import broken_homes as broken
from tests.dashboard.broken_homes import THREAD, exclusively_locked


def _endpoints(checkpoint_id: str) -> Iterator[str]:
    yield reverse("api_threads")
    yield reverse("api_thread", args=[THREAD])
    yield reverse("api_calls", args=[THREAD])
    yield reverse("api_checkpoint", args=[THREAD, checkpoint_id])
    yield reverse("api_whatif", args=[THREAD]) + "?context_limit=20000"
    yield reverse("api_storage")


@pytest.fixture
def token(viewer) -> str:
    return create_token(viewer)[1]


def test_a_readable_home_answers_every_endpoint_with_no_warning(
    client, sample_home: Path, token: str
) -> None:
    head = broken.sample_checkpoints()[-1]
    for url in _endpoints(head):
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 200, url
        assert response.json()["warnings"] == [], url


@pytest.mark.parametrize("damage", ["truncated", "locked"])
def test_an_unreadable_leon_db_is_503_on_every_endpoint_and_locked_on_the_call_page(
    client, viewer_client, sample_home: Path, token: str, settings, damage: str
) -> None:
    settings.DASHBOARD_STORE_TIMEOUT_MS = 100
    head = broken.sample_checkpoints()[-1]
    says = "leon.db is locked by another process" if damage == "locked" else "leon.db"
    held: AbstractContextManager[None] = nullcontext()
    if damage == "truncated":
        broken.truncated(sample_home / "leon.db")
    else:
        held = exclusively_locked(sample_home / "leon.db")
    memo.reset()
    with held:
        for url in _endpoints(head):
            response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
            assert response.status_code == 503, (url, response.content[:300])
            assert says in response.json()["error"], url
        call = viewer_client.get(reverse("call", args=[THREAD, 1]))
    body = call.content.decode()
    assert call.status_code == 503
    assert says in body and "model calls, not a call" not in body
    if damage == "locked":
        assert "locked" in body

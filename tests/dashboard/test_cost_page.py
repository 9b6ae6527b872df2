"""The Cost screen over Mycel's sample home: the very figures `mycel-memory cost --json` prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.support.cli import cli_json


def _without_age(data: dict) -> dict:
    # The cache's age is measured at each run; everything else must agree to the digit.
    if data.get("pricing_cache"):
        data = {**data, "pricing_cache": {**data["pricing_cache"], "age_seconds": None}}
    return data


@pytest.mark.parametrize(
    "query", [{}, {"since": "2026-11-30", "until": "2026-11-30"}, {"since": "2026-12-01"}]
)
def test_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys, query) -> None:
    response = viewer_client.get(reverse("cost"), query)
    assert response.status_code == 200
    args = [a for k, v in query.items() for a in (f"--{k}", v)]
    cli = cli_json(capsys, "cost", *args, "--json")
    assert _without_age(response.context["cost_json"]) == _without_age(cli)
    body = response.content.decode()
    total = response.context["cost"].total
    assert total.cost in body
    if query.get("since") != "2026-12-01":
        assert cli["totals"]["calls"] == 41
        assert cli["totals"]["cost_usd"] == "0.3091455"
        # To the cent on the page, the exact value (the --json one) on hover.
        assert '<dd id="cost-total" title="$0.3091455">$0.31</dd>' in body
        # Each model's cost as well; the smallest thread's $0.0055 is not rounded to nothing.
        assert 'title="$0.005502">$0.01<' in body
        # every thread links to its page, every used model shows its price and how it matched
        for thread in cli["threads"]:
            assert reverse("thread", args=[thread["thread_id"]]) in body
        assert "claude-sonnet-4.5" in body and "normalized match" in body
        assert "cost-figure" in body
    else:
        assert cli["totals"]["calls"] == 0


def test_bad_dates_are_a_message_not_an_error(viewer_client, sample_home: Path) -> None:
    response = viewer_client.get(reverse("cost"), {"since": "<b>x</b>", "until": "2026-02-30"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Ignored since" in body and "Ignored until" in body
    assert "<b>x</b>" not in body
    assert response.context["cost_json"]["totals"]["calls"] == 41  # the period falls back to all days


def test_since_after_until_is_said(viewer_client, sample_home: Path) -> None:
    response = viewer_client.get(reverse("cost"), {"since": "2026-12-02", "until": "2026-12-01"})
    assert response.status_code == 200
    assert "is after until" in response.content.decode()


def test_no_pricing_cache_keeps_tokens(viewer_client, sample_home: Path, capsys) -> None:
    (sample_home / "pricing_cache.json").unlink()
    response = viewer_client.get(reverse("cost"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "No pricing cache at" in body
    data = response.context["cost_json"]
    assert data["totals"]["cost_usd"] is None and data["totals"]["input_tokens"] == 93203
    assert data == cli_json(capsys, "cost", "--json")


def test_empty_home_renders(viewer_client) -> None:
    response = viewer_client.get(reverse("cost"))
    assert response.status_code == 200


def test_calls_without_usage_link_their_call_pages(
    viewer_client, tmp_path: Path, monkeypatch, capsys
) -> None:
    from memory_core.memo import reset
    from tests.core.test_cost import PRICES, _write_home
    from tests.support.mycel_env import point_env_at

    reset()
    folder = tmp_path / "cost-home"
    _write_home(folder, pricing={"timestamp": 1e10, "models": PRICES})
    point_env_at(monkeypatch, folder)
    response = viewer_client.get(reverse("cost"))
    assert response.status_code == 200
    body = response.content.decode()
    assert f'href="{reverse("call", args=["t-plain", 2])}"' in body
    assert "usage_metadata input_tokens is negative (-5)" in body
    assert "abandoned branch, message a3" in body
    assert "mystery-model-1" in response.content.decode().split('id="cost-no-price"')[1]
    assert _without_age(response.context["cost_json"]) == _without_age(cli_json(capsys, "cost", "--json"))

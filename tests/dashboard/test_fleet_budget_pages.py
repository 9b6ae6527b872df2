"""The four fleet report pages under a spent time budget (DASHBOARD_FLEET_BUDGET_S=0), over Mycel's
sample home: each answers with the threads analysed so far and says so, each reload goes on, and once
the fleet is done the page shows exactly what the CLI's --json prints."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core import memo
from tests.support.calibration_cut import page_calibration
from tests.support.cli import cli_json
from tests.support.tools_cut import page_tools

# page name, its query, the context key holding its --json document, the CLI's arguments, what a page
# shows of that document (its long lists cut)
PAGES = [
    ("context_calibration", {}, "calibration", ["calibration"], page_calibration),
    ("context_tools", {"by": "day"}, "pressure", ["tools"], page_tools),
    ("context_cache", {}, "fleet", ["cache", "--all"], lambda document: document),
    ("cost", {}, "cost_json", ["cost"], lambda document: document),
]
NOTE = "threads (newest first) within this page's time budget; what is analysed is kept"


def _as_shown(cut: Callable[[dict[str, Any]], dict[str, Any]], cli: dict[str, Any]) -> dict[str, Any]:
    return {
        **cut(cli),
        "analysed_threads": cli["analysed_threads"],
        "pending_threads": cli["pending_threads"],
    }


def _without_age(data: dict[str, Any]) -> dict[str, Any]:
    # The pricing cache's age is measured at each run (the Cost page's own test does the same).
    if data.get("pricing_cache"):
        data = {**data, "pricing_cache": {**data["pricing_cache"], "age_seconds": None}}
    return data


@pytest.mark.parametrize(("page", "query", "key", "args", "cut"), PAGES, ids=[p[0] for p in PAGES])
def test_a_spent_budget_shows_partial_figures_and_reloads_finish_them(
    viewer_client,
    sample_home: Path,
    settings,
    capsys,
    page: str,
    query: dict[str, str],
    key: str,
    args: list[str],
    cut: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    memo.reset()
    settings.DASHBOARD_FLEET_BUDGET_S = 0
    response = viewer_client.get(reverse(page), query)
    assert response.status_code == 200
    total = response.context["total_threads"]
    assert total >= 5
    assert (response.context["analysed_threads"], response.context["pending_threads"]) == (1, total - 1)
    document = response.context[key]
    assert (document["analysed_threads"], document["pending_threads"]) == (1, total - 1)
    body = html.unescape(response.content.decode())
    reload_url = response.context["reload_url"]
    assert reload_url.startswith(reverse(page)) and all(f"{k}={v}" in reload_url for k, v in query.items())
    assert f'Analysed 1 of {total} {NOTE} — <a href="{reload_url}">reload to go on</a>' in body

    for analysed in range(2, total + 1):
        response = viewer_client.get(reload_url)
        assert response.status_code == 200
        assert response.context["analysed_threads"] == analysed
    assert response.context["pending_threads"] == 0
    assert "fleet-pending" not in response.content.decode()
    cli = cli_json(capsys, *args, "--json")
    assert (cli["analysed_threads"], cli["pending_threads"]) == (total, 0)
    assert _without_age(response.context[key]) == _without_age(_as_shown(cut, cli))
    assert _without_age(document) != _without_age(_as_shown(cut, cli))  # the first page's were partial


@pytest.mark.parametrize(("page", "query", "key", "args", "cut"), PAGES, ids=[p[0] for p in PAGES])
def test_the_default_budget_analyses_the_sample_fleet_at_once(
    viewer_client,
    sample_home: Path,
    capsys,
    page: str,
    query: dict[str, str],
    key: str,
    args: list[str],
    cut: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    memo.reset()
    response = viewer_client.get(reverse(page), query)
    assert response.status_code == 200
    assert response.context["pending_threads"] == 0
    assert "fleet-pending" not in response.content.decode()
    assert _without_age(response.context[key]) == _without_age(
        _as_shown(cut, cli_json(capsys, *args, "--json"))
    )


def test_the_budget_setting_defaults_to_20_seconds_and_refuses_nonsense(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.core.exceptions import ImproperlyConfigured

    from mycel_dashboard.settings import env_seconds

    monkeypatch.delenv("DASHBOARD_FLEET_BUDGET_S", raising=False)
    assert env_seconds("DASHBOARD_FLEET_BUDGET_S", 20.0) == 20.0
    monkeypatch.setenv("DASHBOARD_FLEET_BUDGET_S", "0.5")
    assert env_seconds("DASHBOARD_FLEET_BUDGET_S", 20.0) == 0.5
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv("DASHBOARD_FLEET_BUDGET_S", bad)
        with pytest.raises(ImproperlyConfigured, match="DASHBOARD_FLEET_BUDGET_S"):
            env_seconds("DASHBOARD_FLEET_BUDGET_S", 20.0)

"""`mycel-memory cost --json` over a real PostgreSQL server: dev's sample read without a pricing cache (tokens
counted, costs absent). Main's layout is checked against what LangGraph's own PostgresSaver decodes by the same
test as the sample home on SQLite (tests/core/test_cost.py, parametrised over the engine)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.app.fleet_index import BUILD_ROW_CAP, build
from memory_core.app.fleet_records import build_records
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres
from tests.support.sample_data import SAMPLE_HOME


def test_dev_sample_costs_without_a_pricing_cache(
    pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    code, out, err = run_cli(capsys, "cost", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["pricing_cache"] is None
    # dev's sample: 50 model calls over its five threads, under the two models they name
    assert data["totals"]["calls"] == 50 and data["calls_without_usage"] == []
    assert {m["model"]: m["calls"] for m in data["models"]} == {
        "gpt-4o": 22,
        "claude-sonnet-4-5-20250929": 28,
    }
    assert data["totals"]["cost_usd"] is None and data["totals"]["input_tokens"] > 0
    assert "mycel-memory: error" not in err


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("priced", [False, True])
def test_the_index_report_equals_the_walked_one_on_postgresql(
    pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys, viewer_client, settings, priced: bool
) -> None:
    """The Cost page from the fleet index (usage kept in the dashboard's database, the costliest threads
    priced in SQL) equals `cost --json` walking dev's checkpoints, with and without a pricing cache."""
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    if priced:
        config = tmp_path / "config"
        config.mkdir()
        shutil.copy(SAMPLE_HOME / "pricing_cache.json", config / "pricing_cache.json")
        monkeypatch.setenv("MYCEL_CONFIG_HOME", str(config))
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    locations = resolve_locations()
    index = DashboardFleetIndex()
    build(lambda cap: builder_reader(locations, cap), index)
    assert build_records(builder_reader(locations, BUILD_ROW_CAP), index) == 5
    monkeypatch.setattr("mycel_dashboard.screens.cost.views.THREADS_SHOWN", 2)
    pages: list[dict] = []
    for number in (1, 2, 3):
        response = viewer_client.get(reverse("cost"), {"page": number})
        assert response.status_code == 200
        found = response.context["cost_json"]
        assert found["from_index"] is True and found["records_pending"] == 0
        pages.extend(found["threads"])
    code, out, err = run_cli(capsys, "cost", "--json")
    assert code == 0, err
    walked = json.loads(out)
    assert pages == walked["threads"] and len(pages) == 5
    assert _figures(found) == _figures(walked)
    assert (walked["totals"]["cost_usd"] is not None) is priced


_PROVENANCE = ("from_index", "records_pending", "threads_offset", "analysed_threads", "pending_threads")


def _figures(report: dict) -> dict:
    """The report less its threads (paged), where it came from, and the pricing cache's age (measured)."""
    out = {k: v for k, v in report.items() if k not in ("threads", *_PROVENANCE)}
    if out["pricing_cache"]:
        out["pricing_cache"] = {**out["pricing_cache"], "age_seconds": None}
    return out

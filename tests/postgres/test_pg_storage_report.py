"""`mycel-memory storage` and the Storage screen over a real PostgreSQL server: Mycel dev's sample (schema
`agent`, every channel in checkpoint_blobs) and main's layout written by AsyncPostgresSaver; the same
figures on the page and in --json, each thread's bytes the thread list's, no secret anywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core.app.fleet_index import build
from memory_core.app.storage import storage_as_json
from memory_core.demo.graph import FAKE_API_KEY
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import Result
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """cli_json's run, with no API key anywhere in what was printed."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    assert FAKE_API_KEY not in out + err
    return json.loads(out)


def test_dev_sample_report_and_breakdown(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    report = _json(capsys, "storage", "--json")
    listed = {row["thread_id"]: row for row in _json(capsys, "threads", "--json")}
    assert len(report["threads"]) == 5
    for thread in report["threads"]:
        assert thread["layout"] == "dev"
        assert thread["bytes"] == listed[thread["thread_id"]]["bytes_on_disk"]
        assert thread["checkpoints"] == listed[thread["thread_id"]]["checkpoints"]
        assert thread["projected_bytes"] >= thread["bytes"]
    stores = {s["store"]: s for s in report["stores"]}
    holding = [s for s in stores.values() if s["threads"]]
    assert sum(s["thread_bytes"] for s in holding) == report["total_bytes"]
    assert all(s["engine"] == "postgresql" and s["wal_bytes"] is None for s in holding if s["measured"])
    # /metrics' and health's bytes per store: the schema's, as the Storage report totals its tables.
    code, out, err = run_cli(capsys, "health", "--json")
    assert code in (0, 1), err
    measured = json.loads(out)["store_bytes"]
    assert measured["postgresql agent"] == stores["postgresql agent"]["file_bytes"] > 0
    detail = _json(capsys, "storage", "m_sK5yDq1FvT7a-3", "--json")
    assert detail["checkpoints"] == 39 == len(detail["checkpoint_rows"])
    assert sum(r["bytes"] for r in detail["checkpoint_rows"]) + detail["other_bytes"] == detail["bytes"]
    # Dev keeps every channel in checkpoint_blobs: the blobs are counted once, where first referenced.
    assert sum(r["blobs"] for r in detail["checkpoint_rows"]) > 0
    assert any(c["blob"] > 0 for c in detail["channels"])


def test_main_layout_page_shows_the_cli_figures(
    pg_main_db: tuple[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    viewer_client: Any,
) -> None:
    url, _ = pg_main_db
    point_env_at_postgres(monkeypatch, tmp_path, url)
    report = _json(capsys, "storage", "--json")
    assert {t["thread_id"] for t in report["threads"]} == {"m_pgMain0001-1", "m_pgMain0001-2"}
    response = viewer_client.get(reverse("storage"))
    assert response.status_code == 200
    body = response.content.decode()
    assert FAKE_API_KEY not in body
    shown = dict(re.findall(r'<tr data-thread="([^"]*)" data-bytes="(\d+)"', body))
    assert shown == {t["thread_id"]: str(t["bytes"]) for t in report["threads"]}
    breakdown = viewer_client.get(reverse("storage"), {"thread": "m_pgMain0001-2"})
    assert breakdown.status_code == 200
    assert 'id="checkpoint-rows"' in breakdown.content.decode()
    assert FAKE_API_KEY not in breakdown.content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("sort", ["bytes", "growth", "projected"])
def test_dev_sample_from_the_fleet_index_equals_the_walk(
    pg_dev_sample: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    viewer_client: Any,
    settings: Any,
    sort: str,
) -> None:
    """Each thread's footprint read from dev's checkpoint_blobs into the index, ranked and summed in SQL:
    the page's figures are the walked report's."""
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    walked = _json(capsys, "storage", "--json", "--turns", "120")
    locations = resolve_locations()
    assert build(lambda cap: builder_reader(locations, cap), DashboardFleetIndex()) is not None
    response = viewer_client.get(reverse("storage"), {"sort": sort, "turns": 120})
    assert response.status_code == 200
    page = storage_as_json(Result(response.context["report"], ()))
    assert page["from_index"] is True and walked["from_index"] is False
    provenance = ("from_index", "behind", "without_bytes", "threads", "sort")
    assert {k: v for k, v in page.items() if k not in provenance} == {
        k: v for k, v in walked.items() if k not in provenance
    }
    order = {"bytes": "bytes", "growth": "growth_bytes_per_turn", "projected": "projected_bytes"}[sort]
    ranked = sorted(walked["threads"], key=lambda t: (-t[order], -t["bytes"], t["thread_id"]))
    assert page["threads"] == ranked and len(ranked) == 5

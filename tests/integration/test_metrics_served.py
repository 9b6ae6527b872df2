"""/metrics from a real gunicorn (`make serve`'s command) over the sample and the demo homes, scraped with a
token of scope metrics and parsed with prometheus-client's own parser: every metric present, labels
bounded, and each value equal to the same figure of `mycel-memory health --json` and `threads --json`,
run as the console script over the same dashboard database (one truth)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memory_core.app.health import MODEL_LABELS, model_label
from memory_core.app.metrics import METRICS
from memory_core.demo import write_demo_home
from tests.support.sample_data import SAMPLE_HOME
from tests.support.server import DashboardServer, running_server


@pytest.fixture(params=["sample", "demo"], scope="module")
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp(f"metrics-{request.param}")
    home = base / "mycel-home"
    manifest = None
    if request.param == "sample":
        shutil.copytree(SAMPLE_HOME, home)
        for path in home.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
    else:
        manifest = write_demo_home(home, seed=7)
    extra = {"DASHBOARD_METRICS_ACCESS": "token", "DASHBOARD_FLEET_INDEX_BACKGROUND": "0"}
    with running_server(base, home, manifest=manifest, extra_env=extra, workers=1, threads=2) as running:
        yield running


def get(url: str, token: str | None = None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - the test server's own http URL
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def console(server: DashboardServer, *argv: str) -> tuple[int, Any]:
    script = Path(sys.executable).with_name("mycel-memory")
    done = subprocess.run([str(script), *argv], env=server.env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def test_a_served_scrape_equals_the_json_figures(server: DashboardServer) -> None:
    assert get(f"{server.url}/metrics")[0] == 403  # DASHBOARD_METRICS_ACCESS=token: loopback is not enough
    token = server.manage("api_token", "create", "viewer", "--scope", "metrics").strip().splitlines()[-1]
    status, body = get(f"{server.url}/metrics", token)
    assert status == 200, body[:500]
    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    exported = {name.removesuffix("_bucket").removesuffix("_count").removesuffix("_sum") for name in samples}
    assert "mycel_dashboard_requests_total" in samples or "mycel_dashboard_requests_created" in samples

    _, threads = console(server, "threads", "--json")
    code, health = console(server, "health", "--json")
    # A home with no pricing cache prices nothing: a cost in USD is then absent, never 0.
    priced = any(row["cost_usd"] is not None for row in health["figures"]["cost"])
    unpriced = {"mycel_memory_cost_usd", "mycel_memory_cost_usd_today"}
    wanted = set(METRICS) - (set() if priced else unpriced)
    assert wanted <= exported, wanted - exported
    assert priced == (server.manifest is None)  # the sample home has Mycel's pricing cache; the demo none
    cost = {lb["model"]: v for lb, v in samples["mycel_memory_cost_calls"]}
    assert cost == {row["model"]: row["calls"] for row in health["figures"]["cost"]}
    today = {row["model"]: float(row["cost_usd"] or 0) for row in health["figures"]["cost_today"]}
    priced_models = {row["model"] for row in health["figures"]["cost"] if row["cost_usd"] is not None}
    assert {lb["model"]: v for lb, v in samples.get("mycel_memory_cost_usd_today", [])} == {
        model: today.get(model, 0.0) for model in priced_models
    }
    ids = {t["thread_id"] for t in threads}
    for name, found in samples.items():
        for labels, _ in found:
            assert not ids & set(labels.values()), (name, labels)
    assert len({lb["model"] for lb, _ in samples["mycel_memory_threads"]}) <= MODEL_LABELS + 1

    assert {(lb["layout"], lb["model"]): v for lb, v in samples["mycel_memory_threads"]} == Counter(
        (t["layout"], model_label(t["model"])) for t in threads
    )
    size = Counter[str]()
    for t in threads:
        size[t["layout"]] += t["bytes_on_disk"]
    assert {lb["layout"]: v for lb, v in samples["mycel_memory_checkpoint_bytes"]} == size

    figures = health["figures"]
    over = {lb["model"]: v for lb, v in samples["mycel_memory_threads_over_fill"]}
    assert over == {row["model"]: row["over_alert"] for row in figures["fill"]}
    flagged = {(lb["flag"], lb["layout"]): v for lb, v in samples["mycel_memory_threads_flagged"]}
    assert flagged == {(row["flag"], row["layout"]): row["threads"] for row in figures["flagged"]}
    assert {lb["model"]: v for lb, v in samples["mycel_memory_fill_ratio_count"]} == {
        row["model"]: row["known"] for row in figures["fill"]
    }
    assert health["index"]["complete"] and health["index"]["indexed"] == len(threads)
    # The record tallies (the scrape read the newest records itself): the same in both.
    for metric, key in (
        ("mycel_memory_records", "threads"),
        ("mycel_memory_threads_recompacting", "recompacting"),
        ("mycel_memory_threads_summaries_not_stored", "summaries_not_stored"),
        ("mycel_memory_calls", "calls"),
        ("mycel_memory_calls_without_usage", "calls_without_usage"),
        ("mycel_memory_compactions", "compactions"),
    ):
        shown = {(lb["layout"], lb["model"]): v for lb, v in samples[metric]}
        assert shown == {(r["layout"], r["model"]): r[key] for r in figures["records"]}, metric
    assert sum(v for _, v in samples["mycel_memory_records"]) >= 1
    assert samples["mycel_memory_records_pending"][0][1] == figures["records_pending"]
    assert code == (1 if health["firing"] else 0)

    status, ready = get(f"{server.url}/readyz")
    assert status == 200 and json.loads(ready)["status"] == "ready", ready
    assert json.loads(get(f"{server.url}/healthz")[1]) == {"status": "ok"}

"""The Grafana dashboard (ops/grafana/mycel-memory.json) is JSON Grafana can import, and every expression
names only metrics a real scrape of /metrics exports (the sample home)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

DASHBOARD = Path(__file__).resolve().parents[2] / "ops/grafana/mycel-memory.json"
NAME = re.compile(r"\b(mycel_[a-z0-9_]+)\b")


def expressions() -> list[str]:
    document = json.loads(DASHBOARD.read_text())
    assert document["uid"] and document["title"] and document["panels"]
    found = [target["expr"] for panel in document["panels"] for target in panel["targets"]]
    assert all(found)
    return found


@pytest.mark.django_db(transaction=True)
def test_every_expression_names_exported_metrics(client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    client.get("/metrics")  # the request counters count the scrape before this one
    body = client.get("/metrics").content.decode()
    exported = {s.name for f in text_string_to_metric_families(body) for s in f.samples}
    named = {name for expr in expressions() for name in NAME.findall(expr)}
    assert named, "no metric named"
    assert named <= exported, named - exported
    # The dashboard shows the alerts' figures.
    assert {
        "mycel_memory_threads_over_fill",
        "mycel_memory_index_lag_seconds",
        "mycel_memory_store_up",
    } <= named

"""`mycel-memory cost --json` over a real PostgreSQL server: dev's sample read without a pricing cache (tokens
counted, costs absent). Main's layout is checked against what LangGraph's own PostgresSaver decodes by the same
test as the sample home on SQLite (tests/core/test_cost.py, parametrised over the engine)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_core.memo import reset
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres


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

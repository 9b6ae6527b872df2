"""`mycel-memory calibration --json` over a real PostgreSQL server: Mycel dev's sample recommends a trigger.
Main's layout is checked call by call against what LangGraph's own PostgresSaver decodes by the same test as
the sample home on SQLite (tests/core/test_calibration.py, parametrised over the engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.memo import reset
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


def test_dev_sample_recommends_a_trigger(pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys) -> None:
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    data = cli_json(capsys, "calibration", "--json")
    # dev's sample: 50 model calls over its five threads, under the two models they name (as `cost` counts)
    assert {m["model"]: m["calls"] for m in data["models"]} == {
        "gpt-4o": 22,
        "claude-sonnet-4-5-20250929": 28,
    }
    for m in data["models"]:
        assert m["provider_calls"] == m["calls"]
        if m["fit"] is not None:
            fit, limit = m["fit"], m["limit_in_force"]
            # overhead + rate x T' = 0.7 L, to the token (the fit is printed rounded)
            expected = (0.7 * limit - fit["overhead_tokens"]) / fit["rate"]
            assert m["recommended_trigger_tokens"] == pytest.approx(expected, abs=2)
    assert len(data["threads"]) == 5

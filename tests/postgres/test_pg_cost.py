"""`mycel-memory cost --json` over a real PostgreSQL server: main's layout checked against what LangGraph's
own PostgresSaver decodes, dev's sample read without a pricing cache (tokens counted, costs absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.postgres import PostgresSaver

from memory_core.memo import reset
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres


def _cost(capsys: pytest.CaptureFixture[str]) -> tuple[dict, str]:
    code, out, err = run_cli(capsys, "cost", "--json")
    assert code == 0, err
    return json.loads(out), err


def test_main_layout_tokens_match_langgraphs_messages(
    pg_main_db, tmp_path: Path, monkeypatch, capsys
) -> None:
    reset()
    url, _ = pg_main_db
    point_env_at_postgres(monkeypatch, tmp_path, url)
    calls = tokens = 0
    with PostgresSaver.from_conn_string(url) as saver:
        for thread_id in ("m_pgMain0001-1", "m_pgMain0001-2"):
            found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            assert found is not None
            for message in found.checkpoint["channel_values"]["messages"]:
                if message.type == "ai" and message.usage_metadata:
                    calls += 1
                    tokens += message.usage_metadata["input_tokens"] + message.usage_metadata["output_tokens"]
    data, err = _cost(capsys)
    totals = data["totals"]
    assert calls > 0 and totals["calls"] == calls
    # Mycel's split partitions input and output tokens, so the kinds add up to the provider's totals.
    kinds = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
    assert sum(totals[k] for k in kinds) == tokens
    assert "No pricing cache at" in err and totals["cost_usd"] is None


def test_dev_sample_costs_without_a_pricing_cache(
    pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    data, err = _cost(capsys)
    assert data["pricing_cache"] is None
    # dev's sample: 50 model calls over its five threads, under the two models they name
    assert data["totals"]["calls"] == 50 and data["calls_without_usage"] == []
    assert {m["model"]: m["calls"] for m in data["models"]} == {
        "gpt-4o": 22,
        "claude-sonnet-4-5-20250929": 28,
    }
    assert data["totals"]["cost_usd"] is None and data["totals"]["input_tokens"] > 0
    assert "mycel-memory: error" not in err

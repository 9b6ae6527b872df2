"""`mycel-memory cache` over a real PostgreSQL server: dev's sample read under dev's rules without a pricing
cache (tokens only). Main's layout is checked against what LangGraph's own PostgresSaver decodes by the same
test as the sample home on SQLite (tests/core/test_prompt_cache.py, parametrised over the engine)."""

from __future__ import annotations

from pathlib import Path

from memory_core.memo import reset
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


def test_dev_sample_in_tokens_without_a_pricing_cache(
    pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    fleet = cli_json(capsys, "cache", "--all", "--protect-recent", "1", "--json")
    assert fleet["pricing"]["priced"] is False and fleet["totals"]["current"]["cost_usd"] is None
    assert fleet["totals"]["current"]["calls"] == sum(t["current"]["calls"] for t in fleet["threads"])
    assert fleet["totals"]["proposed"]["rewritten_tokens"] == sum(
        t["proposed"]["rewritten_tokens"] for t in fleet["threads"]
    )
    # a smaller protect_recent lets results fall out sooner: never fewer breaks by trim or clear
    now, then = fleet["totals"]["current"]["by_cause"], fleet["totals"]["proposed"]["by_cause"]
    assert then["trim"]["calls"] + then["clear"]["calls"] >= now["trim"]["calls"] + now["clear"]["calls"]

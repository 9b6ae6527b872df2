"""`mycel-memory cache` over a real PostgreSQL server: main's layout checked against what LangGraph's own
PostgresSaver decodes (the vectors' pruning rules and tiktoken, as on the sample home), dev's sample read
under dev's rules without a pricing cache (tokens only)."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.postgres import PostgresSaver

from memory_core.memo import reset
from tests.core.test_prompt_cache import _oracle
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


def test_main_layout_matches_langgraphs_messages(pg_main_db, tmp_path: Path, monkeypatch, capsys) -> None:
    reset()
    url, _ = pg_main_db
    point_env_at_postgres(monkeypatch, tmp_path, url)
    fleet = cli_json(capsys, "cache", "--all", "--json")
    assert fleet["threads"]
    with PostgresSaver.from_conn_string(url) as saver:
        for line in fleet["threads"]:
            thread_id = line["thread_id"]
            found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            assert found is not None
            document = cli_json(capsys, "cache", thread_id, "--json")
            causes = {c["cause"] for c in document["calls"]}
            # these threads have no summary rows, so the oracle needs none
            assert not causes & {"compaction", "new summary"}
            ours = [
                (c["shared_prefix_messages"], c["cause"], c["rewritten_tokens"])
                for c in document["calls"][1:]
            ]
            assert ours == _oracle(found.checkpoint["channel_values"]["messages"], []), thread_id
            assert line["current"] == document["totals"]["current"]


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

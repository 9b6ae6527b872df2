"""`mycel-memory tools --json` over a real PostgreSQL server: main's layout checked against what LangGraph's
own PostgresSaver decodes (under the vectors' pruning rules), dev's sample read through the same report."""

from __future__ import annotations

from pathlib import Path

from langgraph.checkpoint.postgres import PostgresSaver

from memory_core.app.fleet_calls import fleet_records
from memory_core.memo import reset
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.core.test_tool_pressure import _oracle
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


def test_main_layout_tools_match_langgraphs_messages(pg_main_db, tmp_path: Path, monkeypatch, capsys) -> None:
    reset()
    url, _ = pg_main_db
    point_env_at_postgres(monkeypatch, tmp_path, url)
    data = cli_json(capsys, "tools", "--json")
    assert data["threads"] == 2
    # No summary row is reachable on this server (the demo's rows are not written there), so each
    # request is the pruned messages; the record agrees when it applied no summary, asserted here.
    records = {row.thread_id: r for row, r in fleet_records(MycelReader(resolve_locations()))}
    thread_id = "m_pgMain0001-2"
    assert all(c.summary is None for c in records[thread_id].calls)
    with PostgresSaver.from_conn_string(url) as saver:
        found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
        assert found is not None
        expected = _oracle(found.checkpoint["channel_values"]["messages"], [])
    assert expected["tools"], "the script calls tools"
    assert (
        next(t["sent_chars"] for t in data["thread_totals"] if t["thread_id"] == thread_id)
        == expected["sent_chars"]
    )
    for tool in data["tools"]:
        row = next((t for t in tool["threads"] if t["thread_id"] == thread_id), None)
        if row is None:
            assert tool["tool"] not in expected["tools"]
            continue
        assert {f: row[f] for f in expected["tools"][tool["tool"]]} == expected["tools"][tool["tool"]]


def test_dev_sample_reads_through_the_same_report(
    pg_dev_sample: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    reset()
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    data = cli_json(capsys, "tools", "--json")
    # dev's sample: five threads, 50 model calls (as the cost report counts them)
    assert data["threads"] == 5 and data["calls"] == 50
    assert data["sent_chars"] > 0 and data["tools"]
    for tool in data["tools"]:
        assert sum(t["sent_chars"] for t in tool["threads"]) == tool["sent_chars"]
    assert sum(t["sent_chars"] for t in data["thread_totals"]) == data["sent_chars"]

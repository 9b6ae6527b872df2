"""`mycel-memory tools --json` over a real PostgreSQL server: dev's sample read through the same report. Main's
layout is checked against what LangGraph's own PostgresSaver decodes (under the vectors' pruning rules) by the
same test as the sample home on SQLite (tests/core/test_tool_pressure.py, parametrised over the engine)."""

from __future__ import annotations

from pathlib import Path

from memory_core.memo import reset
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at_postgres


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

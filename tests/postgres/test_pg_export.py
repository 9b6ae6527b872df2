"""Export over Mycel dev's own PostgreSQL database: the bundle carries dev's rules, its active summary and
the head's breaker, so the dry-run and the plan of the bundle, with no database at all, are the live
thread's (breaker open, compacting, and the rest)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core.app.export import export_bundle
from memory_core.export.markdown import bundle_markdown
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.postgres.test_pg_driver_log import THREADS
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at
from tests.support.sample_data import PG_DEV_SAMPLE


@pytest.mark.parametrize("thread_id", THREADS)
def test_a_dev_bundle_plans_as_the_live_thread_with_no_database(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, thread_id: str
) -> None:
    shutil.copy(PG_DEV_SAMPLE / "leon.db", tmp_path / "leon.db")  # dev's SQLite fallback for summaries
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    bundle = export_bundle(MycelReader(resolve_locations()), thread_id, exported_at=datetime.now(UTC))
    assert bundle["config"]["rules"] == "dev" and bundle["thread"]["layout"] == "dev"
    assert pg_dev_sample.split("@")[0] not in json.dumps(bundle)  # no URL, password or user in it
    live = cli_json(capsys, "dry-run", thread_id, "--json", "--show-text")
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    assert "## #0 " in bundle_markdown(bundle)

    monkeypatch.delenv("LEON_POSTGRES_URL")
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    point_env_at(monkeypatch, empty)
    assert cli_json(capsys, "dry-run", "--bundle", str(path), "--json", "--show-text") == live
    planned = cli_json(capsys, "plan", "--bundle", str(path), "--json")
    assert planned["rules"] == "dev"
    assert planned["compaction"]["breaker"] == live["dev"]["breaker_after"]
    assert planned["compaction"]["compact_up_to_index"] == live["dev"]["compact_up_to_index"]

"""`mycel-memory threads/thread/status --json` over a real server: the same fields as on SQLite, which
engine/schema/layout is in use, and no secret (main's api_key, the URL's password) in any output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import main
from memory_core.demo.graph import FAKE_API_KEY
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at, point_env_at_postgres


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    """The exit code, the JSON printed if any, and everything printed (where no secret may be)."""
    code, out, err = run_cli(capsys, *argv)
    return code, json.loads(out) if out.strip() else None, out + err


def _with_password(url: str, password: str) -> str:
    user, rest = url.removeprefix("postgresql://").split("@", 1)
    return f"postgresql://{user}:{password}@{rest}"


def _sqlite_fields(sample_home: Path, capsys: pytest.CaptureFixture[str]) -> tuple[set[str], set[str]]:
    code, rows, _ = _run(capsys, "threads", "--json")
    assert code == 0 and rows
    code, thread, _ = _run(capsys, "thread", rows[0]["thread_id"], "--json")
    assert code == 0
    return set(rows[0]), set(thread)


def test_threads_and_thread_json_have_sqlites_fields_on_the_dev_layout(
    sample_home: Path,
    pg_dev_sample: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    list_fields, thread_fields = _sqlite_fields(sample_home, capsys)
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    code, rows, _ = _run(capsys, "threads", "--json")
    assert code == 0 and len(rows) == 5
    assert all(set(row) == list_fields for row in rows)
    by_id = {row["thread_id"]: row for row in rows}
    assert by_id["m_sK5yDq1FvT7a-3"]["checkpoints"] == 39 and by_id["m_sK5yDq1FvT7a-3"]["messages"] == 44
    code, thread, _ = _run(capsys, "thread", "m_rE2uGx6NbP9w-1", "--json")
    assert code == 0
    assert set(thread) == thread_fields
    assert thread["head_checkpoint_id"] == "1f1ed664-7b2d-608b-8017-e79e17be062b"
    assert len(thread["checkpoints"]) == 9


def test_main_layout_outputs_hold_no_secret(
    pg_main_db: tuple[str, list[Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, built = pg_main_db
    # The test cluster trusts local logins, so the password is ignored by the server but still in the URL.
    point_env_at_postgres(
        monkeypatch, tmp_path, _with_password(url, "pw-never-shown"), LEON_STORAGE_STRATEGY="supabase"
    )
    outputs = []
    code, rows, text = _run(capsys, "threads", "--json")
    assert code == 0 and {r["thread_id"] for r in rows} == {b.thread_id for b in built}
    outputs.append(text)
    for thread in built:
        code, data, text = _run(capsys, "thread", thread.thread_id, "--json")
        assert code == 0 and len(data["messages"]) == thread.head_message_count
        outputs.append(text)
    code, status, text = _run(capsys, "status", "--json")
    assert code == 0
    outputs.append(text)
    checkpoints = [line for line in status if line["store"] == "checkpoints"]
    assert [(c["engine"], c["schema"], c["layout"], c["migration"]) for c in checkpoints] == [
        ("postgresql", "public", "main", 9)
    ]
    assert ":***@" in checkpoints[0]["location"]
    joined = "\n".join(outputs)
    assert FAKE_API_KEY not in joined
    assert "pw-never-shown" not in joined


def test_status_names_dev_schema_and_the_sqlite_side_stores(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_env_at_postgres(monkeypatch, tmp_path, pg_dev_sample)
    data_home = tmp_path / "dev-home"
    data_home.mkdir()
    (data_home / "leon.db").write_bytes(
        (Path(__file__).parents[1] / "data/mycel-pg-dev/leon.db").read_bytes()
    )
    point_env_at(monkeypatch, data_home)
    code, status, _ = _run(capsys, "status", "--json")
    assert code == 0
    by_store = {line["store"]: line for line in status}
    assert (by_store["checkpoints"]["schema"], by_store["checkpoints"]["layout"]) == ("agent", "dev")
    assert by_store["main"]["engine"] == "sqlite" and by_store["main"]["problem"] is None
    assert by_store["queue"]["problem"] == "absent"
    code = main(["status"])
    table = capsys.readouterr().out
    assert code == 0 and "postgresql" in table and "agent" in table

"""`mycel-memory storage [THREAD_ID] [--turns N] [--json]` over the sample home Mycel wrote and over
threads LangGraph's real SqliteSaver wrote (store_builders); bytes checked against SQLite's length()."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from tests.core.store_builders import build_thread
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at


def _sql_bytes(db: Path) -> dict[str, int]:
    """Each thread's bytes as SQLite itself counts them: checkpoint + metadata + its writes' values."""
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        found: dict[str, int] = {}
        for thread_id, size in conn.execute(
            "SELECT thread_id, SUM(length(checkpoint) + length(metadata)) FROM checkpoints GROUP BY thread_id"
        ):
            found[thread_id] = size
        for thread_id, size in conn.execute(
            "SELECT thread_id, SUM(length(value)) FROM writes GROUP BY thread_id"
        ):
            found[thread_id] = found.get(thread_id, 0) + (size or 0)
        return found


def _head(db: Path, thread_id: str) -> str:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        row = conn.execute(
            "SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        ).fetchone()
        return str(row[0])


def test_storage_json_bytes_equal_sqlite_length(
    sample_home: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    code, out, _ = run_cli(capsys, "storage", "--json")
    assert code == 0
    data = json.loads(out)
    threads = {t["thread_id"]: t for t in data["threads"]}
    assert {k: t["bytes"] for k, t in threads.items()} == _sql_bytes(sample_home / "leon.db")
    assert [t["bytes"] for t in data["threads"]] == sorted(
        (t["bytes"] for t in data["threads"]), reverse=True
    )
    assert sum(t["share"] for t in data["threads"]) == pytest.approx(1.0)
    assert data["total_bytes"] == sum(threads[k]["bytes"] for k in threads)
    assert data["turns_ahead"] == 50
    # Mycel wrote 6 owner turns on the compaction thread (the sample home's README): one input, 5 updates.
    compaction = threads["m_0D8EzdJXJhk9-2"]
    assert (compaction["checkpoints"], compaction["turns"]) == (37, 6)
    # 6 turns are too few to fit a line (memory_core/footprint/growth.py): the mean per turn, never quadratic.
    assert (compaction["quadratic"], compaction["growth_basis"], compaction["fit"]) == (
        False,
        "fewer than 8 turns to fit",
        None,
    )
    assert compaction["growth_bytes_per_turn"] == round(compaction["bytes"] / 6)
    assert compaction["projected_bytes"] > compaction["bytes"]
    leon = next(s for s in data["stores"] if s["store"] == "leon.db")
    assert leon["threads"] == 6 and leon["thread_bytes"] == data["total_bytes"]
    assert leon["file_bytes"] == (sample_home / "leon.db").stat().st_size
    assert "sk-ant-FAKE" not in out


def test_storage_table_names_the_biggest_thread_and_each_store(
    sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, "storage")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["THREAD", "NAME", "STORE", "BYTES"]
    assert lines[1].startswith("m_npRsndIka9dx-2")  # the tool-heavy lab thread is the biggest
    assert any(line.startswith("leon.db: 6 threads") for line in lines)
    assert "sk-ant-FAKE" not in out


def test_turns_zero_projects_today(sample_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "storage", "--turns", "0", "--json")
    assert code == 0
    assert all(t["projected_bytes"] == t["bytes"] for t in json.loads(out)["threads"])


@pytest.mark.parametrize("value", ["x", "-1", "10001", "2.5", ""])
def test_invalid_turns_is_one_line_exit_2(
    sample_home: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    code, out, err = run_cli(capsys, "storage", "--turns", value)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("mycel-memory: error: --turns")


def test_unknown_thread_is_one_line_exit_2(sample_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "storage", "no-such-thread")
    assert code == 2
    assert out == ""
    assert (
        err.strip().splitlines()[-1]
        == "mycel-memory: error: unknown thread 'no-such-thread': no Mycel store has it"
    )


def test_missing_home_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    point_env_at(monkeypatch, tmp_path / "nowhere")
    code, _, err = run_cli(capsys, "storage", "--json")
    assert code == 2
    assert err.count("\n") == 1 and "no Mycel data" in err


def test_one_thread_breaks_down_by_checkpoint_and_channel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "data-home"
    home.mkdir()
    build_thread(home / "leon.db", "grower", turns=8, parallel=2, tool_chars=600)
    build_thread(home / "leon.db", "small", turns=1)
    point_env_at(monkeypatch, home)
    code, out, _ = run_cli(capsys, "storage", "grower", "--turns", "10", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["bytes"] == _sql_bytes(home / "leon.db")["grower"]
    rows = data["checkpoint_rows"]
    assert len(rows) == data["checkpoints"]
    assert sum(r["bytes"] for r in rows) + data["other_bytes"] == data["bytes"]
    assert rows[-1]["cumulative"] == sum(r["bytes"] for r in rows)
    # LangGraph's own invoke writes one input checkpoint per turn.
    assert [r["turn"] for r in rows if r["source"] == "input"] == [1, 2, 3, 4, 5, 6, 7, 8]
    assert data["turns"] == 8
    assert data["quadratic"] is True and data["fit"]["b"] > 0
    assert data["turns_ahead"] == 10
    assert data["head_checkpoint_id"] == _head(home / "leon.db", "grower")
    assert "messages" in {c["channel"] for c in data["channels"]}
    assert all(c["bytes"] == c["inline"] + c["blob"] + c["writes"] for c in data["channels"])
    code, table, _ = run_cli(capsys, "storage", "grower")
    assert code == 0
    assert "over 8 turns" in table and "channels at the head" in table


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_damaged_leon_db_is_one_line_exit_2(
    sample_home: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    db = sample_home / "leon.db"
    data = db.read_bytes()
    db.write_bytes(data[:20_000] if damage == "truncated" else b"not a database at all\n" * 100)
    for suffix in ("-wal", "-shm"):
        (sample_home / f"leon.db{suffix}").unlink(missing_ok=True)
    code, out, err = run_cli(capsys, "storage", "--json")
    assert code == 2
    assert out == ""
    assert err.strip().splitlines()[-1].startswith("mycel-memory: error: leon.db ")


@pytest.mark.parametrize("argv", [["storage", "--json"], ["storage", "grower"]])
def test_storage_never_imports_langgraph(tmp_path: Path, argv: list[str]) -> None:
    from tests.core.test_cli_threads import _IMPORTED, ROOT, _subprocess_env

    home = tmp_path / "data-home"
    home.mkdir()
    build_thread(home / "leon.db", "grower", turns=3)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *argv],
        env=_subprocess_env(home, tmp_path / "facts"),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert json.loads(done.stderr.strip().splitlines()[-1]) == {"code": 0, "heavy": []}
    assert "grower" in done.stdout

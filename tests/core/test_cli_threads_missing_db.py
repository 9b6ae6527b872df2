"""`mycel-memory threads` when LEON_DB_PATH names a leon.db that is not there: one line on stderr naming
the path and exit 2; or, when other stores still name threads (summary.db beside the missing file, as
Mycel keeps it), those rows with a warning saying they are all there is. The SUMM column's `*` has a
legend under the table. Over a copy of Mycel's own sample home."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memory_core import memo
from tests.support.cli import run_cli
from tests.support.sample_data import SAMPLE_HOME


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mycel's other stores in ~/.leon, LEON_DB_PATH pointing at a folder with no leon.db."""
    home = tmp_path / "home"
    shutil.copytree(SAMPLE_HOME, home / ".leon", dirs_exist_ok=True)  # the autouse fixture made it empty
    for path in (home / ".leon").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "moved"
    folder.mkdir()
    monkeypatch.setenv("LEON_DB_PATH", str(folder / "leon.db"))
    memo.reset()
    return folder


def test_a_missing_leon_db_is_one_line_and_exit_2(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["threads"], ["threads", "--json"]):
        code, out, err = run_cli(capsys, *argv)
        assert (code, out) == (2, "")
        assert err == (
            f"mycel-memory: error: leon.db not found at {elsewhere / 'leon.db'} (LEON_DB_PATH): "
            "no checkpoints to read\n"
        )


def test_threads_other_stores_name_are_listed_with_a_warning(
    elsewhere: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(SAMPLE_HOME / "summary.db", elsewhere / "summary.db")  # found beside LEON_DB_PATH
    code, out, err = run_cli(capsys, "threads")
    assert code == 0
    assert err == (
        f"mycel-memory: warning: leon.db not found at {elsewhere / 'leon.db'} (LEON_DB_PATH): no checkpoints "
        "to read; the threads below are only those the other stores name\n"
    )
    lines = out.splitlines()
    assert lines[1].split() == ["m_0D8EzdJXJhk9-2", "0", "0", "7*", "0", "0", "B"]
    assert lines[-1].startswith("SUMM: summary rows of the thread; * one of them is active")


def test_the_summ_legend_is_under_the_table(sample_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    memo.reset()
    code, out, err = run_cli(capsys, "threads")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert any(" 7* " in line for line in lines[1:-1])  # the compaction thread's summaries, one active
    assert lines[-1] == (
        "SUMM: summary rows of the thread; * one of them is active (Mycel's context starts with it)"
    )

"""`mycel-memory retention` from the command line: bad flags and an audit log out of reach are one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_core.cli import main


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "name a policy"),
        (["--keep-last", "0"], "keep-last must be 1 or more"),
        (["--keep-last", "ten"], "keep-last must be a whole number"),
        (["--idle-days", "-1"], "idle-days must be 0 or more"),
        (["--idle-days", "1.5", "--heads-only"], "idle-days must be a whole number"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2(sample_home: Path, capsys, flags, message) -> None:
    assert main(["retention", *flags]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mycel-memory: error: ") and message in err
    assert err.count("\n") == 1


def test_the_table_names_what_each_thread_keeps_and_frees(sample_home: Path, capsys) -> None:
    assert main(["retention", "--keep-last", "2"]) == 0
    out = capsys.readouterr().out
    assert "Nothing is deleted" in out and "with Mycel stopped" in out
    assert "FREES" in out and "KEPT BECAUSE" in out and "head; last 2" in out


def test_no_data_is_one_line(capsys) -> None:
    assert main(["retention", "--heads-only"]) == 2
    assert "no Mycel data" in capsys.readouterr().err


def test_an_export_the_audit_log_cannot_record_is_not_written(sample_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "plan.sql"
    env = {
        **os.environ,
        "DASHBOARD_DATA_DIR": str(tmp_path / "var"),
        # Its folder would be inside a file: the dashboard's database cannot be made, so nothing is recorded.
        "DASHBOARD_DB_PATH": str(tmp_path / "a-file" / "dashboard.sqlite3"),
    }
    env.pop("DATABASE_URL", None)
    (tmp_path / "var").mkdir()
    (tmp_path / "a-file").write_text("not a folder")
    done = subprocess.run(
        [sys.executable, "-m", "mycel_dashboard.cli", "retention", "--heads-only", "--export", str(target)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "the export was not written: the dashboard's audit log cannot record it" in done.stderr
    assert not target.exists()

"""`manage.py mycel_demo` writes a demo home, refuses to overwrite it, and replaces it with --force."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command


def test_mycel_demo_writes_then_refuses_then_replaces_with_force(tmp_path: Path) -> None:
    out = StringIO()
    call_command("mycel_demo", "--out", str(tmp_path), "--seed", "3", "--threads", "2", stdout=out)
    assert (tmp_path / "leon.db").exists() and (tmp_path / "queue.db").exists()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"Wrote a demo Mycel home to {tmp_path} (seed 3) in ")
    assert (
        len([line for line in lines if re.fullmatch(r"  m_\w+-\d+ +\d+ messages  .+", line)]) == 3
    )  # --threads 2: two runs and a thread never run
    size = (tmp_path / "leon.db").stat().st_size
    assert f"  {'leon.db':<14} {size:>10,} bytes" in lines
    assert lines[-1] == f"Point Mycel's variables at it: LEON_DB_PATH={tmp_path / 'leon.db'}"
    with pytest.raises(CommandError, match="--force"):
        call_command("mycel_demo", "--out", str(tmp_path), stdout=StringIO())
    forced = StringIO()
    call_command(
        "mycel_demo", "--out", str(tmp_path), "--threads", "1", "--long-turns", "2", "--force", stdout=forced
    )
    assert "long thread: 2 turns" in forced.getvalue()


def test_mycel_demo_defaults_to_the_dashboard_demo_home(tmp_path: Path, settings) -> None:
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    call_command("mycel_demo", "--threads", "1", stdout=StringIO())
    assert (tmp_path / "demo-home" / "leon.db").exists()

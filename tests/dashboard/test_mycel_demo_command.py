"""`manage.py mycel_demo` writes a demo home, refuses to overwrite it, and replaces it with --force."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command


def test_mycel_demo_writes_then_refuses_then_replaces_with_force(tmp_path: Path) -> None:
    out = StringIO()
    call_command("mycel_demo", "--out", str(tmp_path), "--seed", "3", "--threads", "2", stdout=out)
    assert (tmp_path / "leon.db").exists() and (tmp_path / "queue.db").exists()
    assert "leon.db" in out.getvalue() and "messages" in out.getvalue()
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

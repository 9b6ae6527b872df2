"""Mycel's environment in tests: the variables that name its files, and pointing them at a data home (SQLite
files in one folder) or at a PostgreSQL server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Every variable through which Mycel (or we) find a file; tests/conftest.py clears them for every test.
MYCEL_ENV = (
    "LEON_DB_PATH",
    "LEON_SANDBOX_DB_PATH",
    "LEON_QUEUE_DB_PATH",
    "LEON_CHAT_DB_PATH",
    "LEON_RUN_EVENT_DB_PATH",
    "MYCEL_CONFIG_HOME",
    "MYCEL_PROJECT_DIR",
    "MYCEL_MEMORY_CACHE_DIR",
    "XDG_CACHE_HOME",
)


def point_env_at(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Point Mycel's environment variables at a data home folder."""
    monkeypatch.setenv("LEON_DB_PATH", str(folder / "leon.db"))
    monkeypatch.setenv("LEON_SANDBOX_DB_PATH", str(folder / "sandbox.db"))
    monkeypatch.setenv("LEON_QUEUE_DB_PATH", str(folder / "queue.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(folder))


def point_env_at_postgres(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, url: str, **env: str) -> None:
    """Mycel's checkpoints on the PostgreSQL server at `url`: no SQLite file named, HOME and the facts cache
    in tmp_path; `env` sets further variables (LEON_STORAGE_STRATEGY=supabase for main's layout)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def empty_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A new, empty data home folder with Mycel's environment and our facts cache pointed at it, and no
    memo kept from an earlier test: a test then writes the threads it needs into it."""
    from memory_core import memo

    folder = tmp_path / "mycel"
    folder.mkdir()
    point_env_at(monkeypatch, folder)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    memo.reset()
    return folder


# Before every thread of the sample and demo homes: a config file dated so was in force while they ran.
IN_FORCE_SINCE = 1_577_836_800.0  # 2020-01-01 UTC


def write_config_in_force(path: Path, text: str) -> Path:
    """Write a config file (runtime.json, models.json) as the config Mycel ran under: dated before the
    threads, since the record reads config files as they were at a thread's activity. A file written
    plainly now is a change made after the threads ran, which moves no figure of the record."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (IN_FORCE_SINCE, IN_FORCE_SINCE))
    return path

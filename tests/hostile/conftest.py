"""A hostile data home (written once per session, copied per test) and the dashboard tests' users and clients."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from tests.dashboard.conftest import (  # noqa: F401 — fixtures, used by name
    dashboard_dirs,
    operator,
    operator_client,
    viewer,
    viewer_client,
)
from tests.hostile.payloads import SECRETS, HostileHome, write_hostile_home
from tests.support.mycel_env import point_env_at


@pytest.fixture(scope="session")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> HostileHome:
    return write_hostile_home(tmp_path_factory.mktemp("hostile") / "home", secrets=SECRETS)


@pytest.fixture
def home(pristine: HostileHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HostileHome:
    """A fresh copy per test (rollbacks and saves write into it), with Mycel's env pointed at it."""
    folder = tmp_path / "hostile-home"
    shutil.copytree(pristine.folder, folder, symlinks=True)
    workspace = folder / pristine.workspace.relative_to(pristine.folder)
    # The threads row names the workspace by absolute path: point it at the copy.
    with sqlite3.connect(folder / "leon.db") as db:
        db.execute("UPDATE threads SET cwd = ? WHERE cwd = ?", (str(workspace), str(pristine.workspace)))
    db.close()
    point_env_at(monkeypatch, folder)
    return replace(pristine, folder=folder, workspace=workspace)

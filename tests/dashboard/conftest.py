from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User

from memory_core.demo import write_demo_home
from tests.support.mycel_env import point_env_at


@pytest.fixture(autouse=True)
def dashboard_dirs(settings, tmp_path: Path) -> None:
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"


@pytest.fixture
def viewer(db) -> User:
    return User.objects.create_user("viewer", password="viewer-pass-123")


@pytest.fixture
def operator(db, settings) -> User:
    user = User.objects.create_user("operator", password="operator-pass-123")
    group, _ = Group.objects.get_or_create(name=settings.DASHBOARD_OPERATOR_GROUP)
    user.groups.add(group)
    return user


@pytest.fixture
def viewer_client(client, viewer):
    client.force_login(viewer)
    return client


@pytest.fixture
def operator_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture(params=["demo", "sample"])
def either_home(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo home (seed 7) and the real sample home in turn, with the environment pointed at it."""
    if request.param == "sample":
        found: Path = request.getfixturevalue("sample_home")
        return found
    folder = tmp_path / "demo"
    write_demo_home(folder, seed=7)
    point_env_at(monkeypatch, folder)
    return folder

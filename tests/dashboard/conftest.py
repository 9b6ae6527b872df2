from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User


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

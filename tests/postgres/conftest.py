from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from memory_core.stores.postgres.connect import close_pools


@pytest.fixture(autouse=True)
def _no_pool_outlives_its_test() -> Iterator[None]:
    # Each test has its own database: its pool's idle connections would only hold server slots.
    yield
    close_pools()


@pytest.fixture
def viewer_client(client: Any, db: Any, settings: Any, tmp_path: Path) -> Any:
    """A logged-in viewer; the dashboard's own folders in tmp_path (HOME and Mycel's variables are already
    isolated by tests/conftest.py)."""
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    return client

"""Which Mycel data home the dashboard reads (the operator's real files, or the demo home when none
exist), and the one reader every screen opens on it."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.conf import settings

from memory_core.stores.locations import MycelLocations, resolve_locations
from memory_core.stores.reader import MycelReader

_MYCEL_VARIABLES = (
    "LEON_DB_PATH",
    "LEON_SANDBOX_DB_PATH",
    "LEON_QUEUE_DB_PATH",
    "MYCEL_CONFIG_HOME",
    "LEON_POSTGRES_URL",  # checkpoints in PostgreSQL: configured even with no SQLite file at all
)


@dataclass(frozen=True, slots=True)
class DataSource:
    locations: MycelLocations
    is_demo: bool


def demo_environment() -> dict[str, str]:
    home = settings.DASHBOARD_DEMO_HOME
    return {
        "LEON_DB_PATH": str(home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(home),
    }


def current_source() -> DataSource:
    """The operator's Mycel files when configured or present; otherwise the demo home."""
    real = resolve_locations()
    if any(os.environ.get(name) for name in _MYCEL_VARIABLES) or real.main.exists():
        return DataSource(locations=real, is_demo=False)
    return DataSource(locations=resolve_locations({**os.environ, **demo_environment()}), is_demo=True)


def open_source() -> tuple[DataSource, MycelReader]:
    """The data home and a reader on it, with the dashboard's time limit and facts folder."""
    source = current_source()
    return source, MycelReader(
        source.locations,
        query_timeout_s=settings.DASHBOARD_STORE_TIMEOUT_MS / 1000,
        facts_folder=settings.DASHBOARD_FACTS_DIR,
    )

"""Browser journeys: a real server process (gunicorn, as in production) and Debian's Chromium via Playwright.

Never skipped: without Chromium every journey fails with the command that installs it (`make test` installs
it itself when it runs as root).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core.demo import DemoManifest, write_demo_home
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, MISSING_CHROMIUM, BrowserPage, open_logged_in_page
from tests.support.sample_data import SAMPLE_HOME
from tests.support.server import DashboardServer, running_server


@pytest.fixture(scope="session")
def chromium_path() -> str:
    # Session scope, so this fails before any server is started for a journey.
    if CHROMIUM is None:
        pytest.fail(MISSING_CHROMIUM, pytrace=False)
    return CHROMIUM


def _write_data_home(folder: Path) -> DemoManifest:
    """Demo data written by LangGraph's real AsyncSqliteSaver driving a real graph (memory_core.demo)."""
    return write_demo_home(folder, seed=7)


@pytest.fixture(scope="session")
def sample_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    """One server over a copy of Mycel's own sample home, shared by every journey that only reads it (the
    fleet reports: storage, cost, tools, calibration, cache, search). A module opts in by naming it as its
    `dashboard_server`; a journey that writes, or needs other settings, starts its own."""
    base = tmp_path_factory.mktemp("sample-server")
    home = base / "mycel-home"
    shutil.copytree(SAMPLE_HOME, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    with running_server(base, home) as server:
        yield server


@pytest.fixture(scope="session")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("live")
    home = base / "mycel-home"
    manifest = _write_data_home(home)
    with running_server(base, home, manifest=manifest) as server:
        yield server


# Module scope: Playwright's sync API keeps an event loop running in this thread while it is open, and
# the tests collected after these ones (Django's database, asyncio.run in the demo writer) need none.
@pytest.fixture(scope="module")
def browser(chromium_path: str, dashboard_server: DashboardServer) -> Iterator[object]:
    # Depends on the server so the demo home is written before Playwright starts its event loop here.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=chromium_path, args=CHROMIUM_ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture
def viewer_page(browser: object, dashboard_server: DashboardServer, tmp_path: Path) -> Iterator[BrowserPage]:
    yield from open_logged_in_page(browser, dashboard_server, tmp_path, "viewer")


@pytest.fixture
def operator_page(
    browser: object, dashboard_server: DashboardServer, tmp_path: Path
) -> Iterator[BrowserPage]:
    yield from open_logged_in_page(browser, dashboard_server, tmp_path, "operator")

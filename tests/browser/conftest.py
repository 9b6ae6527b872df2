"""Browser journeys: a real server process (gunicorn, as in production) and Debian's Chromium via Playwright.

Never skipped: without Chromium every journey fails with the command that installs it (`make test` installs
it itself when it runs as root).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from memory_core.demo import DemoManifest, write_demo_home
from tests.conftest import SAMPLE_HOME
from tests.support.server import PASSWORD, ROOT, DashboardServer, running_server

__all__ = ["PASSWORD", "ROOT", "BrowserPage", "DashboardServer"]

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Closed network here: without these flags Chromium keeps trying Google's hosts at every start.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


MISSING_CHROMIUM = "Chromium is missing for the browser tests; install it with: sudo apt-get install chromium fonts-wqy-zenhei"


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


@dataclass
class BrowserPage:
    """A logged-in page that records console errors and page errors, checked after every journey."""

    page: object
    console_errors: list[str]
    shots: Path

    def shot(self, name: str, selector: str | None = None) -> Path:
        """The whole page, or only the element `selector` finds (a card on a long page); copied to
        SCREENSHOT_DIR when it is set, so an operator can look at every shot of a run."""
        path = self.shots / f"{name}.png"
        if selector is None:
            self.page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
        else:
            self.page.locator(selector).screenshot(path=str(path))  # type: ignore[attr-defined]
        target = os.environ.get("SCREENSHOT_DIR")
        if target:
            Path(target).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, Path(target) / path.name)
        return path


def _open_page(
    browser: object, dashboard_server: DashboardServer, tmp_path: Path, username: str
) -> Iterator[BrowserPage]:
    context = browser.new_context(viewport={"width": 1366, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console",
        lambda msg: (
            errors.append(f"{msg.text} ({msg.location.get('url', '')})") if msg.type == "error" else None
        ),
    )
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("dialog", lambda dialog: (errors.append(f"dialog opened: {dialog.message}"), dialog.dismiss()))
    page.goto(f"{dashboard_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", dashboard_server.users[username])
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    yield BrowserPage(page=page, console_errors=errors, shots=tmp_path)
    context.close()


@pytest.fixture
def viewer_page(browser: object, dashboard_server: DashboardServer, tmp_path: Path) -> Iterator[BrowserPage]:
    yield from _open_page(browser, dashboard_server, tmp_path, "viewer")


@pytest.fixture
def operator_page(
    browser: object, dashboard_server: DashboardServer, tmp_path: Path
) -> Iterator[BrowserPage]:
    yield from _open_page(browser, dashboard_server, tmp_path, "operator")

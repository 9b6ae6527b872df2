"""Browser journeys: a real server process (gunicorn, as in production) and Debian's Chromium via Playwright.

Skipped when Chromium is not installed; CI installs it (see .ci/run).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memory_core.demo import DemoManifest, write_demo_home

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PASSWORD = "browser-pass-123"
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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CHROMIUM is None:
        skip = pytest.mark.skip(reason="chromium is not installed (apt-get install chromium)")
        for item in items:
            if "tests/browser" in str(item.fspath):
                item.add_marker(skip)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_data_home(folder: Path) -> DemoManifest:
    """Demo data written by LangGraph's real AsyncSqliteSaver driving a real graph (memory_core.demo)."""
    return write_demo_home(folder, seed=7)


@dataclass
class DashboardServer:
    url: str
    data_home: Path
    manifest: DemoManifest
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path
    users: dict[str, str] = field(default_factory=dict)

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout


@pytest.fixture(scope="session")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("live")
    home = base / "mycel-home"
    manifest = _write_data_home(home)
    port = _free_port()
    env = {
        **os.environ,
        "DASHBOARD_DATA_DIR": str(base / "var"),
        "SECRET_KEY": "browser-tests-only-secret-key-0123456789-abcdefghijklmnop",
        "DEBUG": "false",
        "HOME": str(base / "os-home"),
        "LEON_DB_PATH": str(home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(home),
    }
    log = base / "server.log"
    server = DashboardServer(
        url=f"http://127.0.0.1:{port}", data_home=home, manifest=manifest, env=env, process=None, log=log
    )  # type: ignore[arg-type]
    server.manage("migrate", "--noinput")
    server.manage("dashboard_user", "viewer", "--role", "viewer", "--password", PASSWORD)
    server.manage("dashboard_user", "operator", "--role", "operator", "--password", PASSWORD)
    server.users = {"viewer": PASSWORD, "operator": PASSWORD}
    with log.open("wb") as sink:
        server.process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "mycel_dashboard.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            if server.process.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text()}") from None
            time.sleep(0.2)
    else:
        server.process.kill()
        raise RuntimeError(f"server did not start: {log.read_text()}")
    yield server
    server.process.terminate()
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()


# Module scope: Playwright's sync API keeps an event loop running in this thread while it is open, and
# the tests collected after these ones (Django's database, asyncio.run in the demo writer) need none.
@pytest.fixture(scope="module")
def browser(dashboard_server: DashboardServer) -> Iterator[object]:
    # Depends on the server so the demo home is written before Playwright starts its event loop here.
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@dataclass
class BrowserPage:
    """A logged-in page that records console errors and page errors, checked after every journey."""

    page: object
    console_errors: list[str]
    shots: Path

    def shot(self, name: str) -> Path:
        path = self.shots / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
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

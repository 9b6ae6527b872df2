"""Debian's Chromium driven by Playwright for the browser journeys: where it is, the flags it runs with here,
and a logged-in page that records every console error (tests/browser/conftest.py holds the fixtures)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support.server import DashboardServer

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
MISSING_CHROMIUM = "Chromium is missing for the browser tests; install it with: sudo apt-get install chromium fonts-wqy-zenhei"


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


def open_logged_in_page(
    browser: object, dashboard_server: DashboardServer, tmp_path: Path, username: str
) -> Iterator[BrowserPage]:
    """A new browser context logged in as `username`; a fixture yields from it, and the context closes after
    the test."""
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

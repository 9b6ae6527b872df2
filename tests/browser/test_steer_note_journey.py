"""Issue 26's steer: on a Mycel dev thread whose owner steered a running run, follow the chart to the call
after the steer and read the request as the model received it, dev's steer note first, in a real Chromium
against gunicorn over a real PostgreSQL server."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from memory_core.demo.dev_layout import build_dev_demo
from tests.support.browser import BrowserPage
from tests.support.dev_steer import THREAD, steered_dev_thread
from tests.support.server import DashboardServer, dev_server


@pytest.fixture(scope="module")
def dashboard_server(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("steer")
    url = pg_server.create_database("steer_journey")
    build_dev_demo(url, [steered_dev_thread()])
    with dev_server(base, url) as server:
        yield server


def test_the_call_after_a_steer_shows_devs_note_first(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/{THREAD}/calls/2/")
    request = page.locator("ol.request")
    first = request.locator("li#req-1")
    assert "Steer note" in first.inner_text() and "added at call time · not stored" in first.inner_text()
    assert "Steer requests accepted during an active run are non-preemptive." in first.inner_text()
    facts = page.locator("#call-facts").inner_text()
    handed = int(re.search(r"Messages handed the model\s+([\d,]+)", facts).group(1))  # type: ignore[union-attr]
    assert request.locator("li.msg").count() == handed == 6  # system prompt, note, 4 stored messages
    changed = page.locator("#request-time").inner_text()
    assert "added: dev's steer note (426 characters), the first message after the system prompt" in changed
    assert changed.count("not reproducible: ") == 2  # the tools offered, retries
    viewer_page.shot("steer-note-call", "#request")
    assert viewer_page.console_errors == []

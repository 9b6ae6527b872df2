"""Search journey over Mycel's sample home: a phrase, its highlighted snippet, the link into the timeline."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import BrowserPage, DashboardServer
from tests.conftest import SAMPLE_HOME
from tests.support.server import running_server


@pytest.fixture(scope="module")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("search-journey")
    home = base / "mycel-home"
    shutil.copytree(SAMPLE_HOME, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    with running_server(base, home) as server:
        yield server


def test_a_phrase_is_found_highlighted_and_opens_its_message(viewer_page: BrowserPage, dashboard_server: Any):
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/search/")
    page.fill("input[name=q]", '"write-ahead log" main')
    page.click("#search-form button[type=submit]")
    page.wait_for_selector(".search-hit")
    first = page.locator(".search-hit").first
    assert first.locator("mark").first.inner_text().lower() == "write-ahead log"
    assert "A write-ahead log (WAL)" in first.inner_text()
    viewer_page.shot("search")
    first.locator("header a").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("/threads/m_0D8EzdJXJhk9-1/#msg-1"), page.url
    assert page.locator("#msg-1").is_visible()
    assert viewer_page.console_errors == []


def test_a_hostile_query_in_the_box_says_what_is_wrong(viewer_page: BrowserPage, dashboard_server: Any):
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/search/")
    page.fill("input[name=q]", '"<img src=x onerror=alert(1)>" NEAR(* OR')
    page.click("#search-form button[type=submit]")
    page.wait_for_selector("#search-results")
    assert page.locator("#search-results img").count() == 0
    assert "Nothing matches" in page.inner_text("#search-results")
    assert viewer_page.console_errors == []

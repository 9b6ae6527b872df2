"""Search journey over Mycel's sample home: a phrase, its highlighted snippet, the link into the timeline."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


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

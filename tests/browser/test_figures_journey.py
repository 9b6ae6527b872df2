"""Issue 28's figures, read as an operator reads them over Mycel's sample home in a real browser: a 3-call
chart ticks on whole calls, a context fill over 100 % says it is Mycel's estimate, the dry-run numbers the
summarised messages by their index, /context/ opens its first tab, and a search hit carries its message's
time, not its thread head's. (Storage, Cost, Calibration and the prompt-cache tab: their own journeys.)"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

THREE_CALLS = "m_0D8EzdJXJhk9-1"  # Toad's write-ahead-log thread: 3 model calls
COMPACTING = "m_0D8EzdJXJhk9-2"  # its stored history is 166 % of today's 5,500-token window


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_a_three_call_chart_ticks_on_whole_calls(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/{THREE_CALLS}/")
    page.wait_for_selector("#context-chart .main-svg", timeout=20_000)
    ticks = page.eval_on_selector_all("#context-chart .xtick text", "ts => ts.map(t => t.textContent)")
    assert ticks == ["0", "1", "2", "3"]  # never 0.5, 1.5, …
    viewer_page.shot("thread-three-calls-chart", "#context-chart")
    assert viewer_page.console_errors == []


def test_a_fill_over_the_window_says_it_is_mycels_estimate(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/")
    row = page.locator("table.threads tbody tr", has=page.locator(f"td[title='{COMPACTING}']"))
    stored = row.locator(".stored-fill")
    assert stored.inner_text().startswith("stored 166 %")
    note = stored.locator("abbr.estimate-note")
    assert note.inner_text() == "est."
    assert note.get_attribute("title") == (
        "165.5 % of the window: Mycel's estimate (characters ÷ 2), not the provider's count"
    )
    # A fill under 100 % has no such note.
    assert row.locator(".sent-fill + abbr.estimate-note").count() == 0
    assert "A fill over 100 % is marked" in page.inner_text("main")
    viewer_page.shot("threads-fill-estimate", "table.threads")
    assert viewer_page.console_errors == []


def test_the_dry_run_numbers_summarised_messages_by_their_index(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/{COMPACTING}/dry-run/")
    summarised = page.locator("section.card", has=page.locator("h2", has_text="Summarised messages")).locator(
        "ol"
    )
    items = summarised.locator("> li")
    assert items.count() == 16
    for n in (0, 9, 10, 11, 12, 15):
        assert items.nth(n).inner_text().startswith(f"#{n} "), n
    # No list marker left to clip: each index is drawn inside the list's box.
    assert summarised.evaluate("ol => getComputedStyle(ol).listStyleType") == "none"
    box = summarised.bounding_box()
    index = items.nth(12).locator(".msg-index").bounding_box()
    assert box is not None and index is not None and index["x"] >= box["x"]
    items.nth(12).scroll_into_view_if_needed()
    viewer_page.shot("dry-run-summarised", "#summarised-messages")
    assert viewer_page.console_errors == []


def test_context_opens_its_first_tab(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    response = page.goto(f"{dashboard_server.url}/context/")
    assert response is not None and response.ok
    assert page.url == f"{dashboard_server.url}/context/calibration/"
    assert page.locator("nav [aria-current=page]", has_text="Estimate vs real tokens").count() == 1
    assert viewer_page.console_errors == []


def test_a_search_hit_has_its_messages_time(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/")
    row = page.locator("table.threads tbody tr", has=page.locator(f"td[title='{THREE_CALLS}']"))
    head_time = row.locator("time").get_attribute("datetime")
    page.goto(f"{dashboard_server.url}/search/?q=%22explain+a+write-ahead+log%22")
    hit = page.locator(".search-hit").first
    assert "#0" in hit.locator("header").inner_text()
    when = hit.locator("time.hit-time")
    said = when.get_attribute("datetime")
    assert said is not None and head_time is not None
    # The first message was said seconds before the thread's newest checkpoint, and the hit says so.
    assert said < head_time
    assert re.fullmatch(r"2026-11-30 10:12:\d\d", when.inner_text())
    assert "the checkpoint that first held this message" in (when.get_attribute("title") or "")
    assert "Mycel stores no time on a message" in page.inner_text("#search-times")
    viewer_page.shot("search-hit-time")
    assert viewer_page.console_errors == []

"""Issue 4's journeys in a real Chromium against a real gunicorn over demo data written by LangGraph's saver."""

from __future__ import annotations

import re

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer


def _thread_id(server: DashboardServer, name: str) -> str:
    return server.manifest.thread(name).thread_id


def test_find_a_thread_and_read_it(viewer_page: BrowserPage, dashboard_server: DashboardServer):
    page = viewer_page.page
    lab = _thread_id(dashboard_server, "lab")

    page.click("nav.mainnav >> text=Threads")
    page.wait_for_selector("#thread-rows")
    assert page.locator("#thread-rows tbody tr").count() >= 6
    viewer_page.shot("threads")

    page.fill("#id_q", lab)
    page.wait_for_function(
        "id => [...document.querySelectorAll('#thread-rows tbody tr')].length === 1", arg=lab, timeout=10_000
    )
    assert f"q={lab}" in page.url  # the URL holds the search: back/forward work

    page.click(f"#thread-rows a:has-text('{lab}')")
    page.wait_for_selector("[data-plotly] .main-svg", timeout=15_000)
    traces = page.evaluate("document.querySelector('[data-plotly]').data.length")
    assert traces >= 3
    viewer_page.shot("thread")

    # A hard-cleared result: open it, then its full stored text is one click away.
    cleared = page.locator("li.msg.tool:has(.badge.hard_cleared)").first
    cleared.scroll_into_view_if_needed()
    assert "hard_clear_threshold" in cleared.inner_text()
    summary = cleared.locator("details.long > summary")
    if summary.count():
        summary.first.click()
        page.wait_for_timeout(300)

    # Switch to what the model was sent: the cleared result shows Mycel's marker.
    page.click("nav.switch >> text=/sent/i")
    page.wait_for_url(re.compile(r"view=sent"))
    page.wait_for_selector("li.msg.tool pre.text:has-text('[Tool output cleared —')")
    viewer_page.shot("thread-sent")
    page.go_back()
    page.wait_for_url(re.compile(r"view=stored|/threads/[^?]+/$"))

    assert viewer_page.console_errors == []


def test_open_a_checkpoint_diff(viewer_page: BrowserPage, dashboard_server: DashboardServer):
    page = viewer_page.page
    chat = _thread_id(dashboard_server, "chat")
    page.goto(f"{dashboard_server.url}/threads/{chat}/")
    page.locator("ol.rail a").nth(3).click()
    page.wait_for_selector("#checkpoint-diff")
    assert "What changed" in page.inner_text("main")
    viewer_page.shot("checkpoint")
    assert viewer_page.console_errors == []


def test_compaction_dry_run(viewer_page: BrowserPage, dashboard_server: DashboardServer):
    page = viewer_page.page
    thread = _thread_id(dashboard_server, "compaction")
    page.goto(f"{dashboard_server.url}/threads/{thread}/")
    page.click("text=Compaction dry-run…")
    page.wait_for_selector("#dry-run-result")
    compacts = "#dry-run-result dl.facts div:has(dt:text-is('Compacts on the next call?')) dd .badge"
    assert page.inner_text(compacts) == "yes"
    page.fill("input[name=context_limit]", "1000000")
    page.wait_for_url(re.compile(r"context_limit=1000000"))
    page.wait_for_selector("#dry-run-result .notice:has-text('Proposed values')")
    assert "current config: yes" in page.inner_text("#dry-run-result")
    page.goto(page.url.split("?")[0])
    page.wait_for_selector("#dry-run-result")
    viewer_page.shot("dry-run")
    assert viewer_page.console_errors == []

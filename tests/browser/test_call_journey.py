"""Issue 11's journey: open a thread, click a point of its chart, read that call's exact request — in a
real Chromium against gunicorn, over the demo home's compacting thread and its standalone session."""

from __future__ import annotations

import re

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

# The chart's points in one trace, in call order; Plotly draws each as a path inside .points.
SENT_POINTS = "[data-plotly] .scatterlayer .trace:nth-of-type(3) .points path"


def test_click_a_chart_point_and_read_that_calls_request(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    thread = dashboard_server.manifest.thread("compaction")
    page.goto(f"{dashboard_server.url}/threads/{thread.thread_id}/")
    page.wait_for_selector("[data-plotly] .main-svg", timeout=15_000)
    caption = page.locator("#chart-caption").inner_text()
    assert "From Mycel's record" in caption and "re-compacted at every call" in caption
    viewer_page.shot("record-thread")

    compactions = page.evaluate(
        "document.querySelector('[data-plotly]').data.find(t => t.name === 'compacted (summary stored)').x"
    )
    target = compactions[2]  # the third compaction's call
    point = page.locator(SENT_POINTS).nth(target - 1)
    point.scroll_into_view_if_needed()
    point.click(force=True)
    page.wait_for_url(re.compile(rf"/calls/{target}/$"), timeout=10_000)
    assert page.locator("h1").inner_text().startswith(f"Model call {target}")
    assert page.locator(".page-head .badge.summarised").inner_text() == "compacted before this call"
    request = page.locator("ol.request")
    assert request.locator("li#system-prompt").inner_text().count("not stored") >= 1
    summary = request.locator("li.msg.summary")
    assert summary.count() == 1 and "stored summary" in summary.inner_text()
    facts = page.locator("#call-facts").inner_text()
    handed = int(re.search(r"Messages handed the model\s+([\d,]+)", facts).group(1).replace(",", ""))
    assert request.locator("li.msg").count() == handed  # system prompt + summary + kept messages
    viewer_page.shot("call-page")

    page.click("a[rel=next]")
    page.wait_for_url(re.compile(rf"/calls/{target + 1}/$"))
    assert viewer_page.console_errors == []


def test_a_standalone_session_names_the_limit_its_summaries_need(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/interactive-chat/")
    page.wait_for_selector("[data-plotly] .main-svg", timeout=15_000)
    warning = page.locator("#record-disagrees").inner_text()
    assert "need a context limit between" in warning and "the config in force then gives 1,000,000" in warning
    assert "inferred from summaries" in page.locator("#limit-in-force").inner_text()
    viewer_page.shot("record-standalone")
    assert viewer_page.console_errors == []


def test_a_thread_using_a_sliver_of_a_million_is_readable(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    thread = dashboard_server.manifest.thread("large_window")
    page.goto(f"{dashboard_server.url}/threads/{thread.thread_id}/")
    page.wait_for_selector("[data-plotly] .main-svg", timeout=15_000)
    y_range = page.evaluate("document.querySelector('[data-plotly]').layout.yaxis.range")
    peak = page.evaluate(
        "Math.max(...document.querySelector('[data-plotly]').data.find(t => t.name === 'sent to the model').y)"
    )
    assert y_range[1] < 100_000 and peak > y_range[1] / 2  # zoomed to the data, not to 1,000,000
    notes = " ".join(page.locator("[data-plotly] .annotation-text").all_text_contents())  # SVG: no innerText
    assert "above this view" in notes and "1,000,000" in notes
    viewer_page.shot("record-large-window")
    assert viewer_page.console_errors == []

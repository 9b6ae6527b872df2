"""Issue 15's tool-pressure journey over Mycel's sample home: the heatmap, a click on a cell that lands on
the thread's timeline filtered to that tool's changed results, the table fallback's link, the day view."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

HEATMAP = "(() => { const el = document.getElementById('tools-chart'); return el && el.data ? {x: Array.from(el.data[0].x), y: Array.from(el.data[0].y)} : null; })()"
# The pixel centre of a cell (column c, row r) inside the chart element, from Plotly's own axes.
CELL_AT = """([c, r]) => { const el = document.getElementById('tools-chart'); const l = el._fullLayout;
  return [l.xaxis._offset + l.xaxis.c2p(c), l.yaxis._offset + l.yaxis.c2p(r)]; }"""
TRIMMING = "m_npRsndIka9dx-2"  # the sample thread whose Bash result Mycel trimmed


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_heatmap_cell_click_opens_the_threads_calls_of_that_tool(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/context/tools/")
    page.wait_for_selector("#tools-chart .main-svg", timeout=20_000)
    heat = page.evaluate(HEATMAP)
    assert heat["y"][0] == "Bash" and len(heat["x"]) == 6  # most sent first; the six sample threads
    assert "85 %" in page.inner_text("#tools-table tr[data-tool='Bash']")
    viewer_page.shot("tools-heatmap")

    # Bash x the thread that trimmed: hover shows the counts, a click opens the calls behind it.
    column = heat["x"].index(TRIMMING)
    x, y = page.evaluate(CELL_AT, [column, 0])
    box = page.locator("#tools-chart").bounding_box()
    page.mouse.move(box["x"] + x, box["y"] + y)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=5_000)
    hover = page.locator(".hoverlayer").text_content() or ""
    assert "1 trimmed" in hover and "0 cleared" in hover and "1 spilled" in hover
    viewer_page.shot("tools-heatmap-hover")
    page.mouse.click(box["x"] + x, box["y"] + y)
    page.wait_for_url(f"**/threads/{TRIMMING}/?tool=Bash&show=changed", timeout=20_000)
    page.wait_for_load_state("networkidle")
    matches = page.inner_text("#timeline-matches")
    assert "tool Bash" in matches and matches.startswith("1 of ")  # the one Bash result Mycel trimmed
    # The timeline card alone (the whole Thread page is ten screens tall).
    viewer_page.shot("tools-cell-timeline", "#timeline")

    # The accessible fallback: the same cells as a table, each with its link.
    page.go_back()
    page.wait_for_selector("#tools-chart .main-svg", timeout=20_000)
    page.click("#tools-cells summary")
    row = page.locator("#tools-cells tr[data-tool='Read']").first
    thread_id = row.get_attribute("data-column")
    row.locator("a.cell-link").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith(f"/threads/{thread_id}/?tool=Read")

    # By day: one column, the sample's day.
    page.goto(f"{dashboard_server.url}/context/tools/?by=day")
    page.wait_for_selector("#tools-chart .main-svg", timeout=20_000)
    assert page.evaluate(HEATMAP)["x"] == ["2026-11-30"]
    viewer_page.shot("tools-heatmap-by-day")
    page.goto(f"{dashboard_server.url}/context/tools/?by=odd")
    assert "Ignored by 'odd'" in page.inner_text("body")
    assert viewer_page.console_errors == []

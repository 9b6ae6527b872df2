"""Issue 14's storage journey over Mycel's sample home: read the per-store totals, the chart of the biggest
threads and the ranking, sort by growth, click a thread's bar for its breakdown, then the Thread page's
bytes card links back to it."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

BARS = (
    "(() => { const el = document.getElementById('storage-chart'); return el && el.data ? "
    "el.data.map(t => [t.name, Array.from(t.y), Array.from(t.x)]) : null; })()"
)


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_storage_chart_ranking_and_breakdown(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/storage/")
    page.wait_for_selector("#storage-chart .main-svg", timeout=20_000)
    bars = page.evaluate(BARS)
    by_label = {label: size for _, labels, sizes in bars for label, size in zip(labels, sizes, strict=True)}
    assert len(by_label) == 6
    # The tool-heavy lab thread is the biggest: rank 1 in the chart and in the table.
    assert max(by_label, key=by_label.__getitem__).startswith("1. ")
    rows = page.locator("#storage-rows tbody tr")
    assert rows.count() == 6
    assert "m_npRsndIka9dx-2" in rows.first.inner_text()
    assert "leon.db" in page.inner_text("#storage-stores")
    assert "dbstat" in page.inner_text("#storage-stores")
    assert "Preview what it frees" in page.inner_text("#retention-form-card")
    # Sizes read in units, the exact bytes on hover; the projection says it is one.
    total = page.locator("#storage-total")
    assert total.inner_text() == "2.41 MB" and total.get_attribute("title") == "2,414,568 bytes"
    projected = page.locator("#storage-projected")
    assert re.fullmatch(r"\d{1,3}(\.\d{1,2})? (KB|MB|GB) projected", projected.inner_text())
    assert "Projection" in page.inner_text("#storage-totals")
    assert "projected" in projected.get_attribute("title")
    # A 3-turn thread is too short to fit a line: not called quadratic, its pace the mean per turn.
    short = page.locator("#storage-rows tr[data-thread='m_npRsndIka9dx-1']")
    assert short.locator("td").nth(7).inner_text() == "3"
    assert "quadratic" not in short.inner_text() and "mean" in short.inner_text()
    assert re.fullmatch(r"[\d.]+ KB mean", short.locator("td").nth(8).inner_text())
    viewer_page.shot("storage")

    page.click(".sort-choice >> text=growth per turn")
    page.wait_for_load_state("networkidle")
    assert "sort=growth" in page.url
    assert page.inner_text("#storage-ranking-title") == "Threads by growth per turn"
    growth = [
        int(v)
        for v in page.eval_on_selector_all("#storage-rows tbody tr", "rs => rs.map(r => r.dataset.growth)")
    ]
    assert growth == sorted(growth, reverse=True)

    # Click the biggest thread's bar: its breakdown opens above the ranking.
    page.goto(f"{dashboard_server.url}/storage/")
    page.wait_for_selector("#storage-chart .main-svg", timeout=20_000)
    # The top bar is rank 1; Plotly's drag layer covers the bars, so click where it is drawn.
    page.locator("#storage-chart").scroll_into_view_if_needed()
    boxes = [page.locator("#storage-chart .bars .point").nth(i).bounding_box() for i in range(6)]
    top = min((box for box in boxes if box), key=lambda box: box["y"])
    x, y = top["x"] + top["width"] / 2, top["y"] + top["height"] / 2
    page.mouse.move(x, y)  # Plotly clicks the point it hovers
    page.wait_for_selector("#storage-chart .hovertext")
    page.mouse.click(x, y)
    page.wait_for_selector("#storage-thread", timeout=20_000)
    assert "thread=m_npRsndIka9dx-2" in page.url
    page.wait_for_selector("#thread-bytes .main-svg", timeout=20_000)
    assert page.locator("#checkpoint-rows tbody tr").count() == 40
    assert "messages" in page.inner_text("#channel-rows")
    growth_line = page.inner_text("#thread-growth")
    assert growth_line.startswith("+") and "after 50 more turns" in growth_line
    viewer_page.shot("storage-thread")

    # The Thread page's card says the same and links back to the breakdown.
    page.click("text=Open the thread →")
    page.wait_for_selector("#thread-bytes .main-svg", timeout=20_000)
    assert page.inner_text("#thread-growth") == growth_line
    viewer_page.shot("thread-bytes", "#thread-bytes")
    viewer_page.shot("thread-with-bytes")
    page.click("#thread-bytes-breakdown")
    page.wait_for_selector("#storage-thread")
    assert viewer_page.console_errors == []

"""Issue 15's cache journey over Mycel's sample home: the fleet's re-written tokens per cause, a thread's
calls with the break that re-wrote the cache, then the Config what-if for that thread with a larger
protect_recent, reading the cache-rewrite tokens before and after the change."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

THREAD = "m_npRsndIka9dx-2"  # call 11 trims a result that left protect_recent: 12,665 tokens re-written
BARS = "(() => { const el = document.getElementById('cache-chart'); return el && el.data ? [Array.from(el.data[0].x), Array.from(el.data[0].y)] : null; })()"


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_cache_screen_thread_calls_and_the_whatif_before_and_after(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/context/cache/")
    page.wait_for_selector("#cache-chart .main-svg", timeout=20_000)
    causes, tokens = page.evaluate(BARS)
    assert causes == ["trim", "clear", "compaction", "new summary"]
    table = page.inner_text("#cache-causes")
    assert f"{tokens[0]:,}" in table and f"{tokens[2]:,}" in table
    assert tokens[0] == 12665 and tokens[2] > 0
    # The calls column adds up to the total that heads it: the calls whose request only appended to the
    # one before have their own row (each thread's first call has nothing before it, said in the header).
    rows = page.eval_on_selector_all(
        "#cache-causes tbody tr", "rs => rs.map(r => [r.dataset.cause, r.cells[1].innerText])"
    )
    calls = {cause: int(n.replace(",", "")) for cause, n in rows}
    assert calls["none"] > 0
    assert calls["total"] == sum(n for cause, n in calls.items() if cause != "total")
    # Costs to the cent, the exact value on hover.
    trim_cost = page.locator("#cache-causes tr[data-cause='trim'] td span[title]")
    assert (trim_cost.inner_text(), trim_cost.get_attribute("title")) == ("$0.04", "$0.04369425")
    viewer_page.shot("cache-fleet")

    # pick the thread: its calls, the trim at call 11, each call linked to its call page
    page.click(f"#cache-threads a[href$='thread={THREAD}']")
    page.wait_for_selector("#cache-calls")
    assert f"thread={THREAD}" in page.url
    row = page.inner_text("#cache-calls tr[data-call='11']")
    assert "trim" in row and "12,665" in row and "at message 11" in row
    assert page.get_attribute("#cache-calls tr[data-call='11'] a", "href") == f"/threads/{THREAD}/calls/11/"
    assert "Mycel adds Anthropic's prompt caching for" in page.inner_text("#cache-caching")
    assert page.inner_text("#cache-thread-totals [data-total='rewritten']") == "12,665"
    viewer_page.shot("cache-thread")

    # the Config what-if for it: 12,665 now; protect_recent 6 shields that result to the end
    page.click("#cache-whatif-link")
    page.wait_for_selector("#whatif-cache", timeout=20_000)
    assert page.inner_text("#whatif-cache [data-thread='cache-now']") == "12,665"
    assert page.inner_text("#whatif-cache [data-thread='cache-rewrites']") == "12,665"
    page.fill("#cfg-memory-pruning-protect_recent", "6")
    page.wait_for_function("() => location.search.includes('protect_recent=6')", timeout=15_000)
    page.wait_for_function(
        "() => { const el = document.querySelector(\"#whatif-cache [data-thread='cache-rewrites']\");"
        " return !!el && el.innerText === '0'; }",
        timeout=15_000,
    )
    assert page.inner_text("#whatif-cache [data-thread='cache-now']") == "12,665"
    viewer_page.shot("cache-whatif")
    # the what-if card alone, readable at its size (the full page is long)
    viewer_page.shot("cache-whatif-card", "#whatif")
    assert not viewer_page.console_errors

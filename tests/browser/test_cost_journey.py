"""Issue 14's cost journey over Mycel's sample home: read the chart and the tables, change the period,
open a thread from the per-thread table."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

BARS = "(() => { const el = document.getElementById('cost-chart'); return el && el.data ? el.data.map(t => [t.name, Array.from(t.x), Array.from(t.y)]) : null; })()"


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_cost_chart_tables_period_and_thread_link(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/cost/")
    page.wait_for_selector("#cost-chart .main-svg", timeout=20_000)
    # To the cent, with the exact value (the one --json prints) on hover.
    assert page.inner_text("#cost-total") == "$0.31"
    assert page.get_attribute("#cost-total", "title") == "$0.3091455"
    bars = page.evaluate(BARS)
    # one stacked bar per model on the sample's only day, summing to the total
    assert {name for name, _, _ in bars} == {
        "claude-sonnet-4-5-20250929",
        "claude-opus-4-6",
        "gpt-4o-2024-08-06",
        "claude-haiku-4-5-20250929",
    }
    assert all(x == ["2026-11-30"] for _, x, _ in bars)
    assert abs(sum(y[0] for _, _, y in bars) - 0.3091455) < 1e-9
    models = page.inner_text("#cost-models")
    assert "claude-sonnet-4.5" in models and "normalized match" in models and "exact match" in models
    assert "Mycel's code prices input, output, cache-read and cache-write tokens" in page.inner_text(
        "#reasoning-note"
    )
    assert "older than Mycel's 24 h" in page.inner_text("#cost-totals")
    viewer_page.shot("cost")

    # a period after the sample's day: nothing in it, said so
    today = datetime.now(UTC).date().isoformat()
    page.fill("input[name=since]", today)
    page.click("#cost-period button[type=submit]")
    page.wait_for_load_state("networkidle")
    assert f"since={today}" in page.url
    assert "No model call with usage in this period." in page.inner_text("#cost-chart-section")
    viewer_page.shot("cost-empty-period")

    # back to the sample's day, then open the costliest thread
    page.fill("input[name=since]", "2026-11-30")
    page.fill("input[name=until]", "2026-11-30")
    page.click("#cost-period button[type=submit]")
    page.wait_for_selector("#cost-chart .main-svg", timeout=20_000)
    assert page.inner_text("#cost-total") == "$0.31"
    first = page.locator("#cost-threads tbody tr").first
    assert "m_npRsndIka9dx-2" in first.inner_text()
    first.locator("a").click()
    page.wait_for_load_state("networkidle")
    assert page.url.endswith("/threads/m_npRsndIka9dx-2/")
    assert viewer_page.console_errors == []

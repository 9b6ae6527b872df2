"""A second real gunicorn over a data home full of hostile strings: a viewer reads everything, nothing runs.

Every payload that could execute sets `window.__pwned` or opens a dialog; after each step the page must
hold no injected element, the flag must be undefined, and no console error (a CSP refusal included).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.hostile.payloads import MARKUP, SECRETS, HostileHome, write_hostile_home
from tests.support.browser import BrowserPage, open_logged_in_page
from tests.support.server import DashboardServer, running_server

INJECTED = """() => {
  const selector = 'img[src="x"], svg[onload], iframe, object, embed, base, meta[http-equiv],'
    + ' script:not([src]):not([type="application/json"]), [onerror], [onload], [onclick], [onmouseover],'
    + ' a[href^="javascript:"], [style*="url("]';
  // htmx and Plotly add <style> elements of their own: a planted one is known by its off-site URL.
  const styles = [...document.querySelectorAll('style')].filter((el) => el.textContent.includes('evil.example'));
  const found = [...document.querySelectorAll(selector), ...styles];
  return {pwned: typeof window.__pwned, top: typeof window.top.__pwned, found: found.map((el) => el.outerHTML.slice(0, 160))};
}"""


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    # Requested before `browser`: the home is written (asyncio) before Playwright's event loop starts.
    base = tmp_path_factory.mktemp("hostile-live")
    home = write_hostile_home(base / "mycel-home", secrets=SECRETS)
    with running_server(base, home.folder, manifest=home) as server:
        yield server


@pytest.fixture
def hostile_page(hostile_server: DashboardServer, browser: object, tmp_path: Path) -> Iterator[BrowserPage]:
    yield from open_logged_in_page(browser, hostile_server, tmp_path, "operator")


def _assert_nothing_ran(viewer: BrowserPage, step: str) -> None:
    state = viewer.page.evaluate(INJECTED)  # type: ignore[attr-defined]
    assert state == {"pwned": "undefined", "top": "undefined", "found": []}, step
    assert viewer.console_errors == [], step


def test_a_hostile_thread_renders_as_text_everywhere(
    hostile_page: BrowserPage, hostile_server: DashboardServer
):
    page = hostile_page.page
    home: HostileHome = hostile_server.manifest
    url = hostile_server.url
    main = home.thread_id

    page.goto(f"{url}/threads/")  # type: ignore[attr-defined]
    page.wait_for_selector("#thread-rows tbody tr")  # type: ignore[attr-defined]
    assert MARKUP["img_onerror"] in page.inner_text("#thread-rows")  # shown as text  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "threads list")

    page.goto(f"{url}/threads/{main}/")  # type: ignore[attr-defined]
    page.wait_for_selector('[data-plotly="fill-figure"] .main-svg', timeout=15_000)  # type: ignore[attr-defined]
    for run in page.locator("details.unchanged-run > summary").all():  # type: ignore[attr-defined]
        run.click()  # unfold the runs of unchanged messages first, so every message below is visible
    for summary in page.locator("li.msg details > summary").all():  # type: ignore[attr-defined]
        summary.click()
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    assert MARKUP["script"] in page.inner_text("#timeline")  # type: ignore[attr-defined]
    # Hover a point of the chart: Plotly draws the hover label from the figure's data.
    point = page.locator('[data-plotly="fill-figure"] .scatterlayer .trace .points path').first  # type: ignore[attr-defined]
    point.scroll_into_view_if_needed()
    point.hover(force=True)
    page.wait_for_selector('[data-plotly="fill-figure"] .hoverlayer .hovertext', timeout=5_000)  # type: ignore[attr-defined]
    assert "tokens" in (page.locator('[data-plotly="fill-figure"] .hoverlayer').text_content() or "")  # type: ignore[attr-defined]
    page.wait_for_selector("#panel-queue table", timeout=10_000)  # type: ignore[attr-defined]
    page.wait_for_selector("#panel-run-events table", timeout=10_000)  # type: ignore[attr-defined]
    for summary in page.locator(".panel details > summary").all():  # type: ignore[attr-defined]
        summary.click()
    assert MARKUP["img_onerror"] in page.inner_text("#panel-queue")  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "thread, stored, expanded, hovered, panels")

    page.click("nav.switch >> text=/sent/i")  # type: ignore[attr-defined]
    page.wait_for_url(re.compile(r"view=sent"))  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "thread, sent")

    page.locator("ol.rail a").last.click()  # type: ignore[attr-defined]
    page.wait_for_selector("#checkpoint-diff")  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "checkpoint diff")

    for thread_id in (home.metadata_thread_id, home.odd_id_thread_id):
        page.goto(f"{url}/threads/{quote(thread_id, safe='')}/")  # type: ignore[attr-defined]
        page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
        page.locator("ol.rail a").first.click()  # type: ignore[attr-defined]
        page.wait_for_selector("#checkpoint-diff")  # type: ignore[attr-defined]
        _assert_nothing_ran(hostile_page, f"thread and checkpoint of {thread_id}")

    page.goto(f"{url}/threads/{main}/dry-run/")  # type: ignore[attr-defined]
    page.wait_for_selector("#dry-run-result")  # type: ignore[attr-defined]
    page.fill("input[name=context_limit]", "2000")  # type: ignore[attr-defined]
    page.wait_for_url(re.compile(r"context_limit=2000"))  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "dry-run")

    page.goto(f"{url}/config/?thread={main}")  # type: ignore[attr-defined]
    page.wait_for_selector("#whatif-chart .main-svg", timeout=15_000)  # type: ignore[attr-defined]
    page.fill("#cfg-memory-pruning-soft_trim_chars", "100")  # type: ignore[attr-defined]
    page.wait_for_function("() => location.search.includes('soft_trim_chars=100')", timeout=15_000)  # type: ignore[attr-defined]
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    _assert_nothing_ran(hostile_page, "config what-if")
    hostile_page.shot("hostile-config")

    log = hostile_server.log_text()
    assert not [value for value in SECRETS.values() if value in log]
    assert "Traceback" not in log

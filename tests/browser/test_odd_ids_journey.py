"""Odd ids in a real Chromium against a real gunicorn: a thread whose id has slashes, or runs to 3,000
characters, is linked from the list, opens, shows its checkpoints and its spilled output, and rolls back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core.ids import short_id
from tests.support.browser import BrowserPage, open_logged_in_page
from tests.support.odd_ids import CHECKPOINT_IDS, ODD_IDS, TOOL_CALL_ID, write_odd_home
from tests.support.server import DashboardServer, running_server


@pytest.fixture(scope="module")
def odd_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("odd-live")
    home = write_odd_home(base / "mycel-home")
    with running_server(base, home) as server:
        yield server


@pytest.fixture
def odd_page(browser: object, odd_server: DashboardServer, tmp_path: Path) -> Iterator[BrowserPage]:
    yield from open_logged_in_page(browser, odd_server, tmp_path, "operator")


@pytest.mark.parametrize("key", ["slash", "long"])
def test_an_odd_thread_id_opens_from_the_list_and_rolls_back(
    odd_page: BrowserPage, odd_server: DashboardServer, key: str
) -> None:
    page = odd_page.page
    thread_id = ODD_IDS[key]
    page.goto(f"{odd_server.url}/threads/")
    row_link = page.locator(f'#thread-rows td[title="{thread_id}"] a')
    assert row_link.inner_text() == short_id(thread_id)
    row_link.click()
    page.wait_for_selector("#timeline")
    assert page.locator("h1 .mono").get_attribute("title") == thread_id
    page.wait_for_selector("[data-plotly] .main-svg", timeout=15_000)  # the chart draws for this id too
    page.wait_for_load_state("networkidle")  # and the lazy panels have loaded
    assert page.evaluate("document.querySelector('[data-plotly]').data.length") >= 3
    assert page.locator("section.panel:has-text('Open the')").count() == 0
    odd_page.shot(f"odd-id-{key}")

    # the spilled output opens from its badge, under its odd tool-call id
    spilled = page.locator("li.msg.tool .badge.spilled a")
    assert spilled.get_attribute("href").endswith("/")
    spilled.click()
    page.wait_for_selector("pre")
    assert page.locator("main").inner_text().count(TOOL_CALL_ID) >= 1
    assert f"the full output for {thread_id!r}" in page.content().replace("&#x27;", "'")
    page.go_back()

    # the first checkpoint, then the rollback to it
    page.click(f'#rail a[title="{CHECKPOINT_IDS[0]}"]')
    page.wait_for_selector("text=Roll back to here…")
    page.click("text=Roll back to here…")
    page.wait_for_selector("form.confirm")
    force = page.locator("input[name=force]")
    if force.count():  # the planted checkpoints are seconds old, so the thread may look busy
        force.check()
    page.click("form.confirm button[type=submit]")
    page.wait_for_selector("ul.flash")
    assert "Rolled back: the active checkpoint is now" in page.locator("ul.flash").inner_text()
    assert page.locator("h1 .mono").get_attribute("title") == thread_id
    assert odd_page.console_errors == []

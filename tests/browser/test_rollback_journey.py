"""Issue 5's rollback journey: preview the impact, confirm, see the new head, undo — in a real browser."""

from __future__ import annotations

import re

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

CHECKPOINT = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _applied(verb: str) -> str:
    """The flash a rollback or undo leaves, as a pattern."""
    return (
        f"{verb}: the active checkpoint is now {CHECKPOINT} \\(was {CHECKPOINT}\\)\\. Nothing was deleted\\."
    )


def _active_step(page) -> str:
    return page.locator("ol.rail li.active").first.inner_text()


def test_operator_rolls_back_and_undoes(operator_page: BrowserPage, dashboard_server: DashboardServer):
    page = operator_page.page
    thread = dashboard_server.manifest.thread("qa").thread_id
    page.goto(f"{dashboard_server.url}/threads/{thread}/")
    rail = page.locator("ol.rail li")
    before = rail.count()
    # Pick an older checkpoint from the rail and open it.
    rail.nth(before - 3).locator("a").click()
    page.wait_for_selector("#rollback")
    page.click("#rollback a.button.danger")
    page.wait_for_selector("#rollback-report")
    report = page.inner_text("#rollback-report")
    assert "Messages that leave the active history" in report
    assert "Nothing is deleted" in report
    operator_page.shot("rollback-preview")

    page.click("form.confirm button[type=submit]")
    page.wait_for_url(re.compile(rf"/threads/{thread}/$"))
    assert re.fullmatch(_applied("Rolled back"), page.inner_text(".flash").strip())
    assert page.locator("ol.rail li").count() == before + 1
    notice = page.inner_text("section[aria-labelledby=rail-title] p.notice")
    assert notice == "The active checkpoint was written by a rollback. Undo it…"
    operator_page.shot("rolled-back")

    page.click("text=Undo it…")
    page.wait_for_selector("#rollback-report")
    page.click("form.confirm button[type=submit]")
    page.wait_for_url(re.compile(rf"/threads/{thread}/$"))
    assert re.fullmatch(_applied("Undone"), page.inner_text(".flash").strip())
    assert page.locator("ol.rail li").count() == before + 2

    page.click("nav.mainnav >> text=Audit")
    page.wait_for_selector("#audit-rows")
    rows = page.inner_text("#audit-rows")
    assert "Roll back" in rows and "Undo rollback" in rows
    operator_page.shot("audit")
    assert operator_page.console_errors == []


def test_viewer_sees_no_rollback_button(viewer_page: BrowserPage, dashboard_server: DashboardServer):
    page = viewer_page.page
    thread = dashboard_server.manifest.thread("qa").thread_id
    page.goto(f"{dashboard_server.url}/threads/{thread}/")
    page.locator("ol.rail li a").last.click()
    page.wait_for_selector("#rollback")
    assert page.locator("#rollback a.button.danger").count() == 0
    assert "Only operators" in page.inner_text("#rollback")
    assert viewer_page.console_errors == []

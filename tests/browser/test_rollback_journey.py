"""Issue 5's rollback journey: preview the impact, confirm, see the new head, undo — in a real browser."""

from __future__ import annotations

import re

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

CHECKPOINT = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def _applied(verb: str, way_back: str) -> str:
    """The flash a rollback or undo leaves, with its way back, as a pattern."""
    return (
        f"{verb}: the active checkpoint is now {CHECKPOINT} \\(was {CHECKPOINT}\\)\\. Nothing was deleted\\. "
        f"{re.escape(way_back)}"
    )


def _written_here(page, verb: str) -> None:
    """Right after the operator's own write the thread is not "Running": the page says who wrote the head."""
    assert page.locator("#running-mark").count() == 0, page.inner_text("#live-thread")
    note = page.inner_text("#head-written-here")
    assert re.fullmatch(
        f"{verb} by operator at \\d{{4}}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC: the active checkpoint is the "
        "dashboard's copy, not an agent's run\\.",
        note,
    ), note


def _in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= page.viewport_size["height"]


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
    assert re.fullmatch(_applied("Rolled back", "Undo…"), page.inner_text(".flash").strip())
    assert page.locator("ol.rail li").count() == before + 1
    notice = page.inner_text("section[aria-labelledby=rail-title] p.notice")
    assert notice == "The active checkpoint was written by a rollback. Undo it…"
    _written_here(page, "Rolled back")
    # The way back sits where the success is reported, on screen without scrolling.
    assert _in_view(page, ".flash a.way-back")
    operator_page.shot("rolled-back")
    operator_page.shot("rolled-back-banner", ".flash")
    operator_page.shot("rolled-back-status", "#live")

    page.click(".flash a.way-back")
    page.wait_for_selector("#rollback-report")
    assert page.inner_text("#rollback-report h1") == "Undo the last rollback"
    page.click("form.confirm button[type=submit]")
    page.wait_for_url(re.compile(rf"/threads/{thread}/$"))
    assert re.fullmatch(_applied("Undone", "Redo the rollback…"), page.inner_text(".flash").strip())
    assert page.locator("ol.rail li").count() == before + 2
    _written_here(page, "Rollback undone")
    operator_page.shot("undone")
    # An undo's way back is the rollback again, previewed first.
    page.click(".flash a.way-back")
    page.wait_for_selector("#rollback-report")
    assert page.inner_text("#rollback-report h1").startswith("Roll back to ")
    assert "Messages that leave the active history" in page.inner_text("#rollback-report")

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

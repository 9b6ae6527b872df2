"""A long timeline in Chromium: a link into a folded run of unchanged messages opens it, and the filter
select narrows the timeline in place (htmx) with the URL holding the filter."""

from __future__ import annotations

import re

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

_FOLDED = "[...document.querySelectorAll('details.unchanged-run li.msg')].map(li => li.id)"


def test_a_link_to_a_folded_message_opens_its_run(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    lab = dashboard_server.manifest.thread("lab").thread_id
    url = f"{dashboard_server.url}/threads/{lab}/"
    page.goto(url)
    folded = page.evaluate(_FOLDED)
    assert len(folded) >= 2, "the lab thread has a long run of unchanged messages"
    assert not page.locator(f"#{folded[0]}").is_visible()  # folded until asked for

    page.goto(f"{url}#{folded[0]}")  # a link from elsewhere (the checkpoint page, a shared URL)
    page.wait_for_function("id => document.getElementById(id).checkVisibility()", arg=folded[0])
    assert page.locator(f"#{folded[0]}").is_visible()

    page.goto(url)
    page.evaluate("id => { window.location.hash = id; }", folded[-1])  # a link in the page (hashchange)
    page.wait_for_function("id => document.getElementById(id).checkVisibility()", arg=folded[-1])
    box = page.locator(f"#{folded[-1]}").bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]  # scrolled to it
    assert viewer_page.console_errors == []


def test_the_tool_filter_narrows_the_timeline_in_place(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    lab = dashboard_server.manifest.thread("lab").thread_id
    page.goto(f"{dashboard_server.url}/threads/{lab}/")
    page.select_option("form.timeline-filter select[name=tool]", "Bash")
    page.wait_for_selector("#timeline-matches")
    assert re.search(r"tool=Bash", page.url)  # the URL holds the filter: reload and back work
    assert re.fullmatch(r"\d+ of \d+ messages", page.locator("#timeline-matches strong").inner_text())
    roles = page.locator("#timeline li.msg .role").all_inner_texts()
    assert roles and all(r == "AI" or r == "Tool result · Bash" for r in roles)
    # Only the timeline was swapped: each chart is still there once.
    assert page.locator('[data-plotly="fill-figure"]').count() == 1
    assert page.locator('[data-plotly="thread-bytes-figure"]').count() == 1
    viewer_page.shot("thread-filtered")
    assert viewer_page.console_errors == []

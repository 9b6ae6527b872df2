from __future__ import annotations

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer


def test_login_leads_to_the_home_page_without_console_errors(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
):
    page = viewer_page.page
    assert page.url.rstrip("/") == dashboard_server.url
    assert "Sign out" in page.inner_text("header")
    viewer_page.shot("home")
    assert viewer_page.console_errors == []


def test_anonymous_visitor_is_sent_to_login(browser, dashboard_server: DashboardServer):
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{dashboard_server.url}/")
    assert "/login/" in page.url
    assert page.locator("input[name=password]").count() == 1
    context.close()

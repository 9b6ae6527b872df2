"""Issue 14's retention journey: from Storage, pick a policy, read what it frees, export the script, and
find the export in the audit log — in a real browser, as an operator."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer


def test_operator_plans_a_policy_and_exports_the_script(
    operator_page: BrowserPage, dashboard_server: DashboardServer
) -> None:
    page = operator_page.page
    page.goto(f"{dashboard_server.url}/storage/")
    form = page.locator("#retention-form")
    form.locator("input[name=keep_last]").fill("2")
    form.locator("button[type=submit], input[type=submit]").first.click()
    page.wait_for_url(re.compile(r"/storage/retention/\?"))
    page.wait_for_selector("#retention-plan")

    frees = page.locator("#retention-frees")
    assert int(frees.get_attribute("data-bytes") or "0") > 0
    # A size in units (formatting layer), the exact bytes on hover.
    assert re.fullmatch(r"\d[\d.]* (B|KB|MB|GB)", frees.inner_text())
    assert frees.get_attribute("title") == f"{int(frees.get_attribute('data-bytes') or 0):,} bytes"
    assert "Keep the last 2 checkpoints of each thread" in page.inner_text("#retention-policy")
    assert "Nothing is deleted here" in page.inner_text("main")
    assert "Always kept, whatever the policy" in page.inner_text("#retention-plan")
    rows = page.locator("#retention-rows tbody tr")
    assert rows.count() >= 1
    assert "head" in rows.first.inner_text()
    operator_page.shot("retention-plan")

    with page.expect_download() as caught:
        page.click("#retention-export-form button[type=submit]")
    download = caught.value
    assert re.fullmatch(r"mycel-retention-\d{8}-\d{6}\.sql", download.suggested_filename)
    script = Path(download.path()).read_text(encoding="utf-8")
    assert script.startswith("-- Mycel retention plan")
    assert f"-- Frees {frees.get_attribute('data-bytes')} bytes" in script

    page.goto(f"{dashboard_server.url}/audit/?action=retention_export")
    audit = page.inner_text("main")
    assert "Export a retention script" in audit and "operator" in audit
    operator_page.shot("retention-audit")
    assert operator_page.console_errors == []

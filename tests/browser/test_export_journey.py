"""Issue 16's export journey: from the Thread page a viewer downloads the Markdown transcript and the JSON
bundle, and finds both exports in the audit log — in a real browser, against the real server."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer


def test_viewer_exports_a_thread_as_markdown_and_json(
    viewer_page: BrowserPage, dashboard_server: DashboardServer
) -> None:
    page = viewer_page.page
    thread_id = dashboard_server.manifest.thread("compaction").thread_id
    page.goto(f"{dashboard_server.url}/threads/{quote(thread_id, safe='')}/")
    form = page.locator("#export-form")
    form.scroll_into_view_if_needed()
    form.locator("select[name=format]").select_option("md")
    viewer_page.shot("thread-export-form")

    with page.expect_download() as caught:
        form.locator("button[type=submit]").click()
    markdown = caught.value
    assert re.fullmatch(r"mycel-[A-Za-z0-9._-]+-[0-9a-f]{8}\.md", markdown.suggested_filename)
    text = Path(markdown.path()).read_text(encoding="utf-8")
    assert text.startswith("# Thread `") and "## #0 Human" in text and "**▶ model call 1**" in text
    assert "### Summary " in text  # the compaction scenario's summary, at its boundary

    form.locator("select[name=format]").select_option("json")
    with page.expect_download() as caught:
        form.locator("button[type=submit]").click()
    bundle = json.loads(Path(caught.value.path()).read_text(encoding="utf-8"))
    assert bundle["format"] == "mycel-memory-export" and bundle["thread_id"] == thread_id
    assert dashboard_server.manifest.api_key not in json.dumps(bundle)

    page.goto(f"{dashboard_server.url}/audit/?action=export")
    audit = page.inner_text("main")
    assert audit.count("Export a thread") >= 2 and "viewer" in audit
    viewer_page.shot("export-audit")
    assert viewer_page.console_errors == []

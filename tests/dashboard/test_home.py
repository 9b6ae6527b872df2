from __future__ import annotations

import re
from pathlib import Path


def test_pages_require_login(client, db):
    response = client.get("/")
    assert response.status_code == 302
    assert response.url.startswith("/login/")


def test_login_page_renders(client, db):
    response = client.get("/login/")
    assert response.status_code == 200
    assert b"Sign in" in response.content


def test_home_lists_found_and_missing_files(viewer_client, sample_home: Path):
    response = viewer_client.get("/")
    assert response.status_code == 200
    body = response.content.decode()
    for name in ("leon.db", "summary.db", "file_ops.db", "events.db"):
        row = re.search(
            rf"<code>{re.escape(str(sample_home / name))}</code></td>\s*<td>(.*?)</td>", body, re.S
        )
        assert row and '<span class="badge ok">found</span>' in row.group(1), name


def test_home_says_demo_when_no_mycel_data(viewer_client):
    response = viewer_client.get("/")
    assert (
        "No Mycel data was found (set <code>LEON_DB_PATH</code> or use <code>~/.leon</code>), so the dashboard "
        "shows demo data written by LangGraph's own saver."
    ) in response.content.decode()


def test_security_headers_present(viewer_client):
    response = viewer_client.get("/")
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"

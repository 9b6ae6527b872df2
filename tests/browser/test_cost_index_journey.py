"""The Cost page from the fleet index, as an operator over a fleet of more threads than a page shows: Mycel's
sample home and 60 more threads written through LangGraph's real SqliteSaver, a real gunicorn server whose
first /metrics scrape builds the index (the rest of the records read in the background). The page pages the
threads costliest first, its figures are `mycel-memory cost --json`'s (which walks the checkpoints), and a
call made while the server runs counts at the next load."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.core.store_builders import build_thread
from tests.support.browser import BrowserPage
from tests.support.sample_data import SAMPLE_HOME
from tests.support.server import DashboardServer, running_server

EXTRA = 60


@pytest.fixture(scope="module")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("cost-index")
    home = base / "mycel-home"
    shutil.copytree(SAMPLE_HOME, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for n in range(EXTRA):
        build_thread(home / "leon.db", f"t-fleet-{n:02}", turns=1 + n % 3, parallel=1 + n % 2, tool_chars=200)
    with running_server(base, home, workers=1) as server:
        yield server


def walked(server: DashboardServer) -> dict[str, Any]:
    script = Path(sys.executable).with_name("mycel-memory")
    done = subprocess.run(
        [str(script), "cost", "--json"],
        env=server.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def records_read(page: Any, url: str) -> None:
    """Scrape until the record pass has read every thread's record (the first scrape builds the index)."""
    for _ in range(120):
        body = page.request.get(f"{url}/metrics").text()
        if re.search(r"^mycel_memory_records_pending 0\.0$", body, re.M):
            return
        time.sleep(0.5)
    raise AssertionError("the record pass did not finish")


def test_cost_pages_from_the_index(viewer_page: BrowserPage, dashboard_server: DashboardServer) -> None:
    page = viewer_page.page
    records_read(page, dashboard_server.url)
    expected = walked(dashboard_server)
    count = expected["thread_count"]
    assert count == len(expected["threads"]) > 50

    page.goto(f"{dashboard_server.url}/cost/")
    assert page.locator("#cost-records-pending").count() == 0 and page.locator("#fleet-pending").count() == 0
    assert page.inner_text("#cost-threads-range") == (
        f"Threads 1–50 of {count} with a call in this period, costliest first."
    )
    total = expected["totals"]["cost_usd"]
    assert page.get_attribute("#cost-total", "title") == f"${total}"
    rows = page.locator("#cost-threads tbody tr")
    assert rows.count() == 50
    shown = [rows.nth(i).locator("td a").get_attribute("title") for i in range(50)]
    assert shown == [t["thread_id"] for t in expected["threads"][:50]]
    viewer_page.shot("cost-index-page-1")

    page.get_by_role("link", name="Cheaper →").click()
    page.wait_for_load_state("networkidle")
    assert "page=2" in page.url
    assert page.inner_text("#cost-threads-range") == (
        f"Threads 51–{count} of {count} with a call in this period, costliest first."
    )
    assert page.locator("#cost-threads tbody tr").count() == count - 50
    assert page.get_by_role("link", name="← Costlier").is_visible()
    assert page.get_by_role("link", name="Cheaper →").count() == 0
    viewer_page.shot("cost-index-page-2")

    # A call made while the server runs: the next load reads the moved thread's record itself.
    calls = int(page.inner_text("#cost-totals div:nth-of-type(2) dd").replace(",", ""))
    build_thread(Path(dashboard_server.env["LEON_DB_PATH"]), "t-fleet-new", turns=1, parallel=1)
    page.goto(f"{dashboard_server.url}/cost/")
    assert int(page.inner_text("#cost-totals div:nth-of-type(2) dd").replace(",", "")) == calls + 2
    assert page.locator("#cost-records-pending").count() == 0
    assert walked(dashboard_server)["totals"]["calls"] == calls + 2
    assert viewer_page.console_errors == []

"""The Context tabs from the fleet index, as an operator over a fleet of more threads than a page lists:
Mycel's sample home and 120 more threads written through LangGraph's real SqliteSaver, a real gunicorn
server whose first /metrics scrape builds the index; its builder reads every record and sums the tabs in the
background. Each tab then answers from that sum, says so, lists the first of its long lists with their
counts, and its figures are the CLI's (`--page` prints the tab's very document, `--json` walks the fleet).
A call made while the server runs leaves the sum behind, which the tab says, until the builder catches up."""

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

EXTRA = 120  # more threads than the calibration tab's 100 rows


@pytest.fixture(scope="module")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("context-index")
    home = base / "mycel-home"
    shutil.copytree(SAMPLE_HOME, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for n in range(EXTRA):
        build_thread(home / "leon.db", f"t-fleet-{n:03}", turns=1 + n % 3, parallel=1 + n % 2, tool_chars=900)
    with running_server(base, home, workers=1) as server:
        yield server


def cli(server: DashboardServer, *argv: str) -> dict[str, Any]:
    script = Path(sys.executable).with_name("mycel-memory")
    done = subprocess.run(
        [str(script), *argv], env=server.env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def summed(page: Any, url: str, path: str) -> None:
    """Load the tab until it answers from a sum that is not behind (the first scrape builds the index and
    the builder then reads every record and sums)."""
    page.request.get(f"{url}/metrics")
    for _ in range(240):
        page.goto(f"{url}{path}")
        if page.locator("#fleet-kept").count() and not page.locator("#fleet-kept-behind").count():
            return
        time.sleep(0.5)
    raise AssertionError(f"{path} never answered from a current sum")


def test_the_context_tabs_from_the_index(viewer_page: BrowserPage, dashboard_server: DashboardServer) -> None:
    page, url = viewer_page.page, dashboard_server.url
    summed(page, url, "/context/calibration/")
    kept = cli(dashboard_server, "calibration", "--page")
    walked = cli(dashboard_server, "calibration", "--json")
    threads = walked["analysed_threads"]
    assert kept["analysed_threads"] == threads == len(walked["threads"]) > 100
    assert kept["kept_behind_threads"] == 0 and kept["kept_as_of"]
    assert re.fullmatch(
        rf"From the fleet index: {threads:,} threads as summed at \d{{4}}-\d\d-\d\d \d\d:\d\d UTC\.",
        page.inner_text("#fleet-kept"),
    )
    rows = sum(len(t["models"]) for t in walked["threads"])
    assert kept["thread_rows_count"] == rows
    body = page.inner_text("main")
    assert f"the 100 with the most unseen crossings, then the most calls, of {rows:,}" in body
    table = page.locator("tr[data-thread]")
    assert table.count() == 100
    assert [m["model"] for m in kept["models"]] == [m["model"] for m in walked["models"]]
    for shown, whole in zip(kept["models"], walked["models"], strict=True):
        assert shown["calls"] == whole["calls"] and shown["fit"] == whole["fit"]
    viewer_page.shot("context-index-calibration")

    summed(page, url, "/context/tools/")
    tools = cli(dashboard_server, "tools", "--json")
    assert page.inner_text("#tools-sent") == f"{tools['sent_chars']:,}"
    assert page.inner_text("#tools-re-requests") == f"{len(tools['re_requests']):,}"
    first = tools["tools"][0]
    assert len(first["threads"]) > 50
    summary = page.locator("details.tool-threads summary").first.inner_text()
    assert f"{len(first['threads']):,} threads (the 50 that sent the most of it listed)" in summary
    viewer_page.shot("context-index-tools")

    summed(page, url, "/context/cache/")
    cache = cli(dashboard_server, "cache", "--all", "--json")
    assert page.locator("#cache-threads tbody tr").count() == 100
    assert f"of {cache['thread_count']:,}" in page.inner_text("#cache-threads-cut")
    assert cache["thread_count"] == len(cache["threads"]) > 100
    viewer_page.shot("context-index-cache")

    # A call made while the server runs: the tab says its sum is behind, then catches up.
    calls = cli(dashboard_server, "tools", "--page")["calls"]
    build_thread(
        Path(dashboard_server.env["LEON_DB_PATH"]), "t-fleet-new", turns=1, parallel=1, tool_chars=900
    )
    page.goto(
        f"{url}/context/tools/"
    )  # its look catches up the head; the record is the builder's, started now
    assert "figures are as of before 1 thread that moved since" in page.inner_text("#fleet-kept-behind")
    viewer_page.shot("context-index-tools-behind")
    summed(page, url, "/context/tools/")
    assert cli(dashboard_server, "tools", "--page")["calls"] == calls + 2
    assert viewer_page.console_errors == []


def test_storage_from_the_index(viewer_page: BrowserPage, dashboard_server: DashboardServer) -> None:
    """Storage over the same fleet: once the index is built the page ranks, pages and sums each thread's
    footprint kept there, and its figures are `storage --json`'s (which reads the same index); a thread
    written while the server runs is in the next load."""
    page, url = viewer_page.page, dashboard_server.url
    page.request.get(f"{url}/metrics")  # the first scrape builds the index (if the other journey did not)
    for _ in range(240):
        page.goto(f"{url}/storage/")
        if page.locator('#storage-totals[data-from-index="yes"]').count():
            break
        time.sleep(0.5)
    else:
        raise AssertionError("Storage never answered from the fleet index")
    report = cli(dashboard_server, "storage", "--json")
    assert report["from_index"] is True and report["behind"] == 0 and report["without_bytes"] == 0
    threads = report["threads"]
    assert report["thread_count"] == len(threads) > EXTRA
    assert page.inner_text("#storage-threads") == f"{len(threads):,}"
    assert page.get_attribute("#storage-total", "title") == f"{report['total_bytes']:,} bytes"
    shown = page.eval_on_selector_all("#storage-rows tbody tr", "rs => rs.map(r => r.dataset.thread)")
    assert shown == [t["thread_id"] for t in threads[:50]]
    viewer_page.shot("storage-index")
    page.get_by_role("link", name="Smaller →").first.click()
    shown = page.eval_on_selector_all("#storage-rows tbody tr", "rs => rs.map(r => r.dataset.thread)")
    assert shown == [t["thread_id"] for t in threads[50:100]]
    page.goto(f"{url}/storage/?sort=projected&turns=200")
    projected = cli(dashboard_server, "storage", "--json", "--turns", "200")["threads"]
    ranked = sorted(projected, key=lambda t: (-t["projected_bytes"], -t["bytes"], t["thread_id"]))
    rows = page.eval_on_selector_all(
        "#storage-rows tbody tr", "rs => rs.map(r => [r.dataset.thread, Number(r.dataset.projected)])"
    )
    assert rows == [[t["thread_id"], t["projected_bytes"]] for t in ranked[:50]]
    viewer_page.shot("storage-index-projected")

    build_thread(
        Path(dashboard_server.env["LEON_DB_PATH"]), "t-storage-new", turns=2, parallel=1, tool_chars=900
    )
    page.goto(f"{url}/storage/")
    assert page.inner_text("#storage-threads") == f"{len(threads) + 1:,}"
    after = cli(dashboard_server, "storage", "--json")
    assert "t-storage-new" in {t["thread_id"] for t in after["threads"]}
    assert page.get_attribute("#storage-total", "title") == f"{after['total_bytes']:,} bytes"
    assert viewer_page.console_errors == []

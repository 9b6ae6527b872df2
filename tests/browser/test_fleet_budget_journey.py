"""A fleet report page over a big fleet, seen as an operator would: with the time budget spent at once
(DASHBOARD_FLEET_BUDGET_S=0, a real gunicorn server over Mycel's sample home), the calibration page shows the
threads analysed so far and says so; each click on "reload to go on" goes on until the note is gone."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.sample_data import SAMPLE_HOME
from tests.support.server import DashboardServer, running_server


@pytest.fixture(scope="module")
def dashboard_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("live-budget")
    home = base / "mycel-home"
    shutil.copytree(SAMPLE_HOME, home)
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    # One worker: the analysed threads are kept per process, so every reload finds the last one's.
    with running_server(base, home, extra_env={"DASHBOARD_FLEET_BUDGET_S": "0"}, workers=1) as server:
        yield server


def test_reloading_a_cut_short_report_finishes_it(viewer_page: BrowserPage, dashboard_server: Any) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/context/calibration/")
    note = page.locator("#fleet-pending")
    assert note.is_visible()
    text = note.inner_text()
    assert text.startswith("Analysed 1 of ") and "(newest first) within this page's time budget" in text
    total = int(note.get_attribute("data-analysed") or 0) + int(note.get_attribute("data-pending") or 0)
    assert total >= 5
    viewer_page.shot("fleet-budget-pending")
    for analysed in range(2, total + 1):
        page.locator("#fleet-pending a", has_text="reload to go on").click()
        page.wait_for_load_state("networkidle")
        if analysed < total:
            assert page.locator("#fleet-pending").get_attribute("data-analysed") == str(analysed)
    assert page.locator("#fleet-pending").count() == 0
    assert page.locator("[data-model]").count() > 0  # the whole report, per model
    viewer_page.shot("fleet-budget-done")
    assert viewer_page.console_errors == []

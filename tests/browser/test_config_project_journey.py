"""Issue 28's project-layer journey over a copy of a real Mycel home: the thread's working folder is on the
machine Mycel ran on, so the Config screen does not offer it as a save target; it says why and names
MYCEL_PROJECT_DIR."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

THREAD = "m_npRsndIka9dx-2"  # cwd /home/operator/.leon/workspaces/morel-lab: another machine's folder
WORKSPACE = Path("/home/operator/.leon/workspaces/morel-lab")


@pytest.fixture(scope="module")
def dashboard_server(sample_server: DashboardServer) -> DashboardServer:
    return sample_server  # only reads the sample home (a refused preview writes nothing): the shared server


def test_a_working_folder_from_another_machine_is_no_save_target(
    operator_page: BrowserPage, dashboard_server: DashboardServer
) -> None:
    assert not WORKSPACE.exists()
    page = operator_page.page
    page.goto(f"{dashboard_server.url}/config/?thread={THREAD}")
    project = page.locator("input[name=layer][value=project]")
    assert project.is_disabled()
    assert page.locator("input[name=layer][value=user]").is_checked()
    note = page.inner_text("#project-folder-missing")
    assert note == (
        f"{WORKSPACE} does not exist on this machine: it was the thread's working folder (Mycel's cwd) on the "
        "machine it ran on. To save a project layer, set MYCEL_PROJECT_DIR to the project's folder here and "
        "restart the dashboard."
    )
    operator_page.shot("config-project-elsewhere", "#config-editor fieldset:last-of-type")

    # A preview asked for by hand is refused with the same words, and nothing is created.
    page.goto(
        f"{dashboard_server.url}/config/preview/?thread={THREAD}&layer=project"
        "&memory.pruning.soft_trim_chars=1000"
    )
    refusal = page.inner_text("#save-panel .problem")
    assert refusal.startswith(f"Not saved: {WORKSPACE} does not exist on this machine")
    assert page.locator("#save-panel button:has-text('Save to the project layer')").count() == 0
    assert not WORKSPACE.exists()
    assert operator_page.console_errors == []

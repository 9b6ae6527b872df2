"""Issue 28's config journey: a save shows the saved state at once and reports itself with its way back;
back to "no file" and forward again, each previewed as a diff and confirmed; the Audit screen words a key
the file did not set."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer

SOFT = "#cfg-memory-pruning-soft_trim_chars"
ROW = f".cfg-row:has({SOFT})"
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC"
VERSION = r"runtime\.json\.bak-\d{8}T\d{6}(-\d+)?"


@pytest.fixture
def no_user_file(dashboard_server: DashboardServer) -> Iterator[Path]:
    """The shared demo home without its user runtime.json or history, put back afterwards."""
    home = dashboard_server.data_home
    aside = home.parent / "config-aside"
    aside.mkdir()
    for name in ("runtime.json", ".history"):
        if (home / name).exists():
            shutil.move(home / name, aside / name)
    try:
        yield home / "runtime.json"
    finally:
        for name in ("runtime.json", ".history"):
            if (home / name).is_dir():
                shutil.rmtree(home / name)
            else:
                (home / name).unlink(missing_ok=True)
            if (aside / name).exists():
                shutil.move(aside / name, home / name)
        aside.rmdir()


def _editor_row(page) -> tuple[str, str]:
    """The soft_trim_chars row's layer badge and its "now" value, as the editor shows them."""
    return page.inner_text(f"{ROW} .badge.layer"), page.inner_text(f"{ROW} .now")


def _preview_and_confirm(page, button: str) -> None:
    page.wait_for_selector("#restore-preview table.diff", timeout=15_000)
    page.click(f"#restore-preview button:has-text('{button}')")
    page.wait_for_selector("#save-panel .saved", timeout=15_000)


def test_save_shows_the_saved_state_and_every_write_has_its_way_back(
    operator_page: BrowserPage, dashboard_server: DashboardServer, no_user_file: Path
) -> None:
    page = operator_page.page
    page.goto(f"{dashboard_server.url}/config/")
    page.wait_for_selector(SOFT)
    assert _editor_row(page) == ("system", "now 3,000")

    # Propose 1,000, preview the diff and save: a new file.
    page.fill(SOFT, "1000")
    page.wait_for_function("() => location.search.includes('soft_trim_chars=1000')", timeout=15_000)
    page.check("input[name=layer][value=user]")
    page.click("button:has-text('Preview the diff')")
    page.wait_for_selector("#save-panel table.diff", timeout=15_000)
    page.click("#save-panel button:has-text('Save to the user layer')")
    page.wait_for_selector("#save-panel .saved", timeout=15_000)
    assert no_user_file.exists()
    saved = page.inner_text("#save-panel .saved")
    assert saved == f"Saved {no_user_file}, a new file: there was none before. Back to no file…", saved
    # Without a reload, the editor says where the value comes from now, and the what-if agrees with it.
    page.wait_for_function(
        f"() => document.querySelector('{ROW} .now').innerText === 'now 1,000'", timeout=15_000
    )
    assert _editor_row(page) == ("user", "now 1,000")
    assert page.input_value(SOFT) == "1000"
    page.wait_for_function(
        "() => document.querySelector('#whatif').innerText.includes('No change proposed yet')", timeout=15_000
    )
    page.wait_for_function(
        "() => [...document.querySelectorAll('#effective tr')].some(r => "
        "r.innerText.includes('memory.pruning.soft_trim_chars') && r.innerText.includes('1,000') "
        "&& r.innerText.includes('user'))",
        timeout=15_000,
    )
    operator_page.shot("config-saved")
    operator_page.shot("config-saved-panel", "#save-panel")
    operator_page.shot("config-saved-row", ROW)

    # The history knows "no file": the save at that time created it.
    page.wait_for_function(
        "() => document.querySelector('#history').innerText.includes('no file')", timeout=15_000
    )
    created = page.inner_text("#history table.history tbody tr")
    assert re.search(f"no file — the save at {STAMP} created it\\s+removes the file \\(1 key\\)", created), (
        created
    )

    # Back to no file, from the report: previewed as a diff, then confirmed.
    page.click("#save-panel a.way-back")
    page.wait_for_selector("#restore-preview", timeout=15_000)
    preview = page.inner_text("#restore-preview")
    assert f"Restoring no file into the user layer removes {no_user_file}" in preview
    assert re.search(r"memory\.pruning\.soft_trim_chars\s+1,000\s+\(removed\)", preview), preview
    assert no_user_file.exists()  # nothing is written before the confirmation
    operator_page.shot("config-restore-preview", "#save-panel")
    _preview_and_confirm(page, "Remove the file (back to no file)")
    assert not no_user_file.exists()
    removed = page.inner_text("#save-panel .saved")
    assert re.fullmatch(
        f"Removed {re.escape(str(no_user_file))}: back to no file, as before the save at {STAMP} created it; "
        f"the version it replaced is kept as {VERSION}\\. Put the removed file back…",
        removed,
    ), removed
    page.wait_for_function(
        f"() => document.querySelector('{ROW} .now').innerText === 'now 3,000'", timeout=15_000
    )
    assert _editor_row(page) == ("system", "now 3,000")

    # The removal's way back: the file with 1,000 again, previewed and confirmed.
    page.click("#save-panel a.way-back")
    preview = page.wait_for_selector("#restore-preview", timeout=15_000).inner_text()
    assert re.search(r"memory\.pruning\.soft_trim_chars\s+\(absent\)\s+1,000", preview), preview
    _preview_and_confirm(page, "Restore this version")
    assert '"soft_trim_chars": 1000' in no_user_file.read_text()
    restored = page.inner_text("#save-panel .saved")
    assert re.fullmatch(
        f"Restored the version replaced at {STAMP} into {re.escape(str(no_user_file))}, where there was no "
        "file. Back to no file…",
        restored,
    ), restored
    page.wait_for_function(
        f"() => document.querySelector('{ROW} .now').innerText === 'now 1,000'", timeout=15_000
    )
    operator_page.shot("config-restored")
    operator_page.shot("config-restored-panel", "#save-panel")
    operator_page.shot("config-history", "#history")

    # The Audit screen says what the key was before the first save, never "None".
    page.click("nav.mainnav >> text=Audit")
    page.wait_for_selector("#audit-rows")
    rows = page.inner_text("#audit-rows")
    assert "memory.pruning.soft_trim_chars: default 3,000 → 1,000" in rows, rows
    assert re.search(
        f"restored {VERSION}\\.absent \\(back to no file: removed the file\\); "
        "memory.pruning.soft_trim_chars: 1,000 → \\(removed\\)",
        rows,
    ), rows
    assert "None" not in rows
    operator_page.shot("config-audit")
    assert operator_page.console_errors == []

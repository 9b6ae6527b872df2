"""The Thread page's side panels keep long values (paths, JSON, ids and commands without spaces) inside
their column, at a wide and a narrow window: they wrap or scroll, never spill over or get cut off."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core.demo import write_demo_home
from tests.support.browser import BrowserPage
from tests.support.server import DashboardServer, running_server

PANELS = ("sandbox", "queue", "file-operations", "run-events")
LONG_PATH = "/home/operator/.leon/workspaces/" + "/".join(f"a-rather-deep-folder-{n:02d}" for n in range(14))
LONG_TOKEN = "sk-not-a-secret-" + "x7Qz" * 90  # 376 characters, not one space
LONG_COMMAND = "cd " + LONG_PATH + " && python -m pytest -q " + "--deselect=tests/test_" + "y" * 200


def lengthen_panel_values(home: Path, thread_id: str) -> None:
    """Give every panel of `thread_id` values far wider than the side column, in Mycel's own tables."""
    with sqlite3.connect(home / "file_ops.db") as db:
        db.execute(
            "UPDATE file_operations SET file_path = ?, checkpoint_id = ? WHERE thread_id = ?",
            (f"{LONG_PATH}/make_readings.py", LONG_TOKEN, thread_id),
        )
    with sqlite3.connect(home / "sandbox.db") as db:
        db.execute(
            "UPDATE abstract_terminals SET cwd = ?, env_delta_json = ? WHERE thread_id = ?",
            (LONG_PATH, json.dumps({"PATH": LONG_PATH * 2, "TOKEN_HINT": LONG_TOKEN}), thread_id),
        )
    with sqlite3.connect(home / "queue.db") as db:
        db.execute(
            "INSERT INTO message_queue (thread_id, content, notification_type, source, sender_name)"
            " VALUES (?, ?, 'steer', 'owner', ?)",
            (thread_id, LONG_COMMAND, LONG_TOKEN[:120]),
        )
    with sqlite3.connect(home / "events.db") as db:
        (run_id,) = db.execute(
            "SELECT run_id FROM run_events WHERE thread_id = ? LIMIT 1", (thread_id,)
        ).fetchone()
        for data in ({"command": LONG_COMMAND}, {"path": LONG_PATH, "id": LONG_TOKEN}):
            db.execute(
                "INSERT INTO run_events (thread_id, run_id, event_type, data, message_id) VALUES (?, ?, ?, ?, ?)",
                (thread_id, run_id, "tool_call", json.dumps(data), LONG_TOKEN[:90]),
            )


@pytest.fixture(scope="module")
def long_values_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("long-values")
    home = base / "mycel-home"
    manifest = write_demo_home(home, seed=7)
    lengthen_panel_values(home, manifest.thread("lab").thread_id)
    with running_server(base, home, manifest=manifest) as server:
        yield server


@pytest.fixture
def long_values_page(
    long_values_server: DashboardServer, browser: object, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[BrowserPage]:
    # long_values_server comes first: the demo home is written before Playwright's event loop runs here.
    width = request.param
    context = browser.new_context(viewport={"width": width, "height": 900})  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{long_values_server.url}/login/")
    page.fill("input[name=username]", "viewer")
    page.fill("input[name=password]", long_values_server.users["viewer"])
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    yield BrowserPage(page=page, console_errors=errors, shots=tmp_path)
    context.close()


# What each panel must satisfy, measured in the page: its box stays in the column and has no horizontal
# overflow; every value (cell, summary, text block) lies inside the panel's visible width, so none is
# hidden past the edge of a horizontal scroll; and no value clips its own text without a scrollbar.
_MEASURE = """
name => {
  const panel = document.getElementById('panel-' + name);
  const column = panel.closest('.thread-side').getBoundingClientRect();
  const box = panel.getBoundingClientRect();
  const said = el => el.tagName + ': ' + el.textContent.trim().slice(0, 40);
  const values = [...panel.querySelectorAll('td, th, summary, pre, p, caption')];
  const outside = values.filter(el => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && (r.right > box.right + 1 || r.left < box.left - 1);
  }).map(said);
  const clipped = values.filter(el => {
    const scrolls = ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
    return !scrolls && el.scrollWidth > el.clientWidth + 1;
  }).map(said);
  return {
    panelOverflow: panel.scrollWidth - panel.clientWidth,
    outsideColumn: Math.max(box.right - column.right, column.left - box.left),
    outside, clipped, values: values.length,
  };
}
"""


@pytest.mark.parametrize("long_values_page", [1280, 900], indirect=True, ids=["1280px", "900px"])
def test_side_panels_keep_long_values_inside_their_column(
    long_values_page: BrowserPage, long_values_server: DashboardServer
):
    page = long_values_page.page
    lab = long_values_server.manifest.thread("lab").thread_id
    page.goto(f"{long_values_server.url}/threads/{lab}/")
    for name in PANELS:
        page.wait_for_selector(f"#panel-{name} table", timeout=15_000)
    # Open every long value, so the measure covers the expanded text too.
    page.evaluate("document.querySelectorAll('.thread-side details').forEach(d => d.open = true)")
    width = page.viewport_size["width"]
    long_values_page.shot(f"panels-{width}", ".thread-side")
    long_values_page.shot(f"thread-panels-{width}")
    for name in PANELS:
        measured = page.evaluate(_MEASURE, name)
        assert measured["panelOverflow"] <= 1, (name, measured)
        assert measured["outsideColumn"] <= 1, (name, measured)
        assert measured["values"] > 5, (name, measured)  # the measure saw the panel's content
        assert measured["outside"] == [], (name, measured)
        assert measured["clipped"] == [], (name, measured)
    assert LONG_TOKEN[:40] in page.locator("#panel-file-operations").inner_text()
    assert long_values_page.console_errors == []

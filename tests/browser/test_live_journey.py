"""Following the agent live: an operator has a thread page and the Threads list open while a real LangGraph
graph (tests/integration/writer_process.py, AsyncSqliteSaver on leon.db in WAL) plays a new turn beside the
server. Without a reload the thread page shows the running mark and a "N new messages" pill (the operator
is reading the top, so nothing moves under them), the pill brings the new turn in, the chart has one more
call, the list moves the thread to the top, and Search finds the new message."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memory_core.demo import determinism, write_demo_home
from tests.integration.live_server import ROOT, start_server, stop_process
from tests.integration.writer_process import WriterPlan
from tests.support.browser import CHROMIUM_ARGS

KEY = "lab"  # the demo's longest timeline: its end is below the fold at 1366 x 900


@pytest.fixture(scope="module")
def live_setup(tmp_path_factory: pytest.TempPathFactory, chromium_path: str) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("live-journey")
    home = base / "mycel-home"
    # The writer uses the wall clock: the demo's own turns must lie in its past, or every thread looks busy.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(determinism, "_BASE_EPOCH", min(determinism._BASE_EPOCH, time.time() - 86_400))
        manifest = write_demo_home(home, seed=7)
    thread_id = next(t.thread_id for t in manifest.threads if t.key == KEY)
    control = base / "control"
    control.mkdir()
    plan = WriterPlan(
        home=str(home),
        log=str(base / "writer.jsonl"),
        control=str(control),
        hot=(),
        resume=(thread_id,),
        resume_turns=1,
        max_seconds=90.0,
    )
    plan_file = base / "plan.json"
    plan_file.write_text(plan.to_json(), encoding="utf-8")
    with start_server(base, home) as server:
        out = (base / "writer.out").open("wb")
        writer = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/integration/writer_process.py"), str(plan_file)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        from playwright.sync_api import sync_playwright

        try:
            with sync_playwright() as playwright:
                chromium = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
                yield {
                    "server": server,
                    "browser": chromium,
                    "thread_id": thread_id,
                    "control": control,
                    "log": Path(plan.log),
                    "writer_out": base / "writer.out",
                }
                chromium.close()
        finally:
            (control / "stop").touch()
            with contextlib.suppress(subprocess.TimeoutExpired):
                writer.wait(timeout=20)
            stop_process(writer)
            out.close()


def _logged(path: Path, kind: str) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["kind"] == kind]


def _wait(predicate: Any, what: str, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _log_in(context: Any, server: Any) -> Any:
    page = context.new_page()
    page.goto(f"{server.url}/login/")
    page.fill("input[name=username]", "viewer")
    page.fill("input[name=password]", server.users["viewer"])
    page.click("button[type=submit]")
    page.wait_for_load_state("networkidle")
    return page


def test_a_new_turn_appears_without_a_reload(live_setup: dict[str, Any], tmp_path: Path) -> None:
    server, thread_id = live_setup["server"], live_setup["thread_id"]
    _wait(lambda: _logged(live_setup["log"], "ready"), "the writer to start")
    context = live_setup["browser"].new_context(viewport={"width": 1366, "height": 900})
    errors: list[str] = []
    page = _log_in(context, server)
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/threads/{thread_id}/")
    page.wait_for_selector("#fill-figure", state="attached")
    page.wait_for_function(
        "document.querySelector('[data-plotly=\"fill-figure\"]')._fullLayout !== undefined"
    )
    before = int(page.get_attribute("#live-thread", "data-messages") or 0)
    points = page.evaluate("document.querySelector('[data-plotly=\"fill-figure\"]').data[0].x.length")
    assert page.locator("#running-mark").count() == 0, "the demo's turns are a day old: not running"
    assert page.locator("text=live turn 1").count() == 0

    rows = context.new_page()
    rows.goto(f"{server.url}/threads/?sort=updated")
    rows.wait_for_selector("#thread-rows")
    first_row = rows.locator("#thread-rows tbody tr").first
    was_first = first_row.locator("td").first.get_attribute("title")

    started = time.monotonic()
    (live_setup["control"] / f"go-{thread_id}").touch()  # the agent takes its next turn now
    _wait(lambda: _logged(live_setup["log"], "run_done"), "the writer's turn")

    # The running mark: the newest checkpoint is seconds old (and the run may still be open).
    page.wait_for_selector("#running-mark", timeout=15_000)
    assert "Running" in page.inner_text("#running-mark")
    # The operator reads the top of the page: the new messages wait behind the pill, nothing moved.
    pill = page.locator("#live-new")
    pill.wait_for(state="visible", timeout=15_000)
    seen_after = time.monotonic() - started
    # A poll may have caught the turn half-written (the owner's message and the call, say): the next polls
    # bring the rest, and the pill then counts every new message of the finished turn.
    page.wait_for_function(
        """before => {
            const shown = Number(document.getElementById('live-thread').dataset.messages);
            const pill = document.getElementById('live-new');
            return shown >= before + 4 && !pill.hidden && pill.textContent.startsWith((shown - before) + ' new message');
        }""",
        arg=before,
        timeout=15_000,
    )
    assert page.evaluate("window.scrollY") == 0
    assert "new message" in pill.inner_text()
    assert page.locator("text=live turn 1").count() == 0
    page.screenshot(path=str(tmp_path / "live-thread-running.png"), full_page=False)

    pill.click()
    page.wait_for_selector("text=live turn 1 on", timeout=5_000)
    assert page.locator(f"#msg-{before}").is_visible()  # scrolled to the first new message
    after = int(page.get_attribute("#live-thread", "data-messages") or 0)
    assert after >= before + 4  # the owner's turn, the tool call, its result, the answer
    placed = int(page.get_attribute("#timeline", "data-live-messages") or 0)
    assert placed == after  # the pill placed the finished turn, not a half-written one
    assert "Turn 1 done." in page.inner_text("#timeline")
    grown = page.evaluate("document.querySelector('[data-plotly=\"fill-figure\"]').data[0].x.length")
    assert grown >= points + 2, (points, grown)  # two model calls more, drawn in place
    page.screenshot(path=str(tmp_path / "live-thread-new-turn.png"), full_page=False)
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1  # never reloaded

    # The list, open all along with the pointer elsewhere, moved the thread to the top by itself.
    rows.wait_for_function(
        "id => document.querySelector('#thread-rows tbody tr td').title === id", arg=thread_id, timeout=15_000
    )
    print(f"first row before the turn: {was_first}")
    rows.screenshot(path=str(tmp_path / "live-threads.png"), full_page=False)

    # Search finds the new message, linked to it in the timeline.
    search = context.new_page()
    search.goto(f"{server.url}/search/?q=%22live+turn+1%22")
    hit = (
        search.locator("li.search-hit")
        .filter(has=search.locator("a[href*='#msg-']"))
        .filter(has_text=f"live turn 1 on {thread_id}")
        .first
    )
    hit.wait_for(timeout=10_000)
    assert f"/threads/{thread_id}/" in (hit.locator("a").first.get_attribute("href") or "")
    assert hit.locator("mark").first.inner_text().lower() == "live turn 1"  # highlighted
    search.screenshot(path=str(tmp_path / "live-search.png"), full_page=False)
    assert not errors, errors
    print(f"new turn on screen {seen_after:.1f} s after the writer was let go")
    context.close()

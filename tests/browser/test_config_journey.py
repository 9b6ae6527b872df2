"""Issue 5's config journey: move a slider, see the proposed trace in the chart, save to the user layer."""

from __future__ import annotations

import json
from typing import Any

from tests.support.browser import BrowserPage

CHART_TRACES = "(() => { const el = document.getElementById('whatif-chart'); return el && el.data ? el.data.map(t => t.name) : null; })()"
PROPOSED_SENT = "proposed: sent to the model"


def test_move_a_slider_see_the_chart_change_and_save(operator_page: BrowserPage, dashboard_server: Any):
    page = operator_page.page
    user_file = dashboard_server.data_home / "runtime.json"
    original = user_file.read_bytes() if user_file.exists() else None
    try:
        page.click("nav.mainnav >> text=Config")
        page.wait_for_selector("#whatif-chart .main-svg", timeout=15_000)
        before = page.evaluate(CHART_TRACES)
        assert "sent to the model" in before and PROPOSED_SENT not in before
        current_sent = page.evaluate(
            "document.getElementById('whatif-chart').data.find(t => t.name === 'sent to the model').y"
        )

        # The keyboard on the slider: Home jumps to its minimum (100 characters).
        page.focus("#cfg-memory-pruning-soft_trim_chars-range")
        page.keyboard.press("Home")
        assert page.input_value("#cfg-memory-pruning-soft_trim_chars") == "100"
        page.wait_for_function(
            f"() => {{ const names = {CHART_TRACES}; return !!names && names.includes('{PROPOSED_SENT}'); }}",
            timeout=15_000,
        )
        proposed_sent = page.evaluate(
            f"document.getElementById('whatif-chart').data.find(t => t.name === '{PROPOSED_SENT}').y"
        )
        assert len(proposed_sent) == len(current_sent)
        assert sum(proposed_sent) < sum(current_sent)  # trimming at 100 characters sends less
        assert "soft_trim_chars=100" in page.url  # the proposal lives in the URL
        assert "memory.pruning.soft_trim_chars" in page.inner_text("#whatif ul.changes")

        # Typing into the number input moves the slider and recomputes too.
        page.fill("#cfg-memory-pruning-soft_trim_chars", "1500")
        page.wait_for_function("() => location.search.includes('soft_trim_chars=1500')", timeout=15_000)
        page.wait_for_function(
            "() => !!document.querySelector('#whatif ul.changes') && "
            "document.querySelector('#whatif ul.changes').innerText.includes('1,500')",
            timeout=15_000,
        )
        assert page.input_value("#cfg-memory-pruning-soft_trim_chars-range") == "1500"

        # Save to the user layer: the diff first, then the save itself.
        page.check("input[name=layer][value=user]")
        page.click("button:has-text('Preview the diff')")
        page.wait_for_selector("#save-panel table.diff", timeout=15_000)
        assert "memory.pruning.soft_trim_chars" in page.inner_text("#save-panel table.diff")
        page.click("#save-panel button:has-text('Save to the user layer')")
        page.wait_for_selector("#save-panel .saved", timeout=15_000)
        saved_line = page.inner_text("#save-panel .saved")
        kept = "; the previous version is kept as runtime.json.bak-" if original is not None else "."
        assert saved_line.startswith(f"Saved {user_file}{kept}"), saved_line
        assert (
            "Mycel reads runtime.json only when it builds an agent: restart Mycel's backend (or delete the "
            "thread's agent) before the new memory settings apply."
        ) in page.inner_text("#save-panel .warning")
        saved = json.loads(user_file.read_text())
        assert saved["memory"]["pruning"]["soft_trim_chars"] == 1500
        # The config-saved event refreshes the effective values: now from the user layer.
        page.wait_for_function(
            "() => [...document.querySelectorAll('#effective tr')].some(r => "
            "r.innerText.includes('memory.pruning.soft_trim_chars') && r.innerText.includes('1,500'))",
            timeout=15_000,
        )
        operator_page.shot("config")
        assert operator_page.console_errors == []
    finally:
        # Other journeys share this server and its data home.
        if original is None:
            user_file.unlink(missing_ok=True)
        else:
            user_file.write_bytes(original)

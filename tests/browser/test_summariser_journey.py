"""Issue 26's summariser: on Mycel dev's evidence threads (written by dev's own code, on a real PostgreSQL
server), the call after a prompt-too-long recovery shows what dev's summariser received, in dev's shape and
sizes as the scripted model logged them; the dry-run shows the request dev would send next."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import BrowserPage
from tests.support.sample_data import DEV_EVIDENCE
from tests.support.server import DashboardServer, dev_server

RECOVERED = "m_evPtlRecov26-1"  # the provider refused call 7; dev compacted its input before call 8
LOG = json.loads((DEV_EVIDENCE / "driver_log.json").read_text())


def _summariser_sizes_before(thread_id: str, step: int) -> list[list[int]]:
    """What the scripted model received as summariser requests before step call `step` (1-based): the
    size of each message of each request."""
    steps, pending = 0, []
    for call in (c for c in LOG["model_calls"] if c["thread"] == thread_id):
        if call["kind"] != "step":
            pending.append([chars for _, chars in call["sent"]])
            continue
        steps += 1
        if steps == step:
            return pending
        pending = []
    raise AssertionError(f"{thread_id} has no step call {step}")


@pytest.fixture(scope="module")
def dashboard_server(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardServer]:
    base = tmp_path_factory.mktemp("summariser")
    url = pg_server.create_database("summariser_journey")
    pg_server.load_sql(url, DEV_EVIDENCE / "dump.sql")
    with dev_server(base, url, leon_db=DEV_EVIDENCE / "leon.db") as server:
        yield server


def test_the_call_after_a_recovery_shows_what_devs_summariser_received(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/{RECOVERED}/calls/7/")
    assert "refused by the provider" in page.inner_text(".page-head")
    page.click("a[rel=next]")
    page.wait_for_url(re.compile(r"/calls/8/$"))
    section = page.locator("#summariser")
    words = section.inner_text()
    assert "after the provider refused the call before" in words and "Mycel dev's shape" in words
    logged = _summariser_sizes_before(RECOVERED, 8)
    assert logged, "the scripted model logged the recovery's summariser request"
    requests = section.locator(".summariser-request")
    assert requests.count() == len(logged)
    for number, sizes in enumerate(logged, start=1):
        request = section.locator(f"#summariser-request-{number}")
        heads = request.locator("li.msg header").all_inner_texts()
        assert [int(re.search(r"([\d,]+) chars", h).group(1).replace(",", "")) for h in heads] == sizes  # type: ignore[union-attr]
        assert "max_tokens 20,000" in request.locator("h3").inner_text()
    assert "COMPACT_SYSTEM_PROMPT: 69 characters" in section.locator("li.msg.system").first.inner_text()
    viewer_page.shot("summariser-after-recovery", "#summariser")
    assert viewer_page.console_errors == []


def test_the_dry_run_shows_the_request_dev_would_send(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/{RECOVERED}/dry-run/?context_limit=2000")
    result = page.locator("#dry-run-result")
    assert "the summariser requests are in dev's shape" in result.inner_text()
    request = page.locator("#dry-run-request-1")
    assert "max_tokens 20,000" in request.locator("h3").inner_text()
    roles = request.locator("li.msg header .role").all_inner_texts()
    assert roles == ["System", "Human"]
    human = request.locator("li.msg.human")
    human.locator("summary").click()
    text = human.locator("pre").inner_text()
    assert text.startswith("Summarize this conversation:") and "SUMMARY_PROMPT: 598 characters" in text
    viewer_page.shot("dry-run-dev-summariser", "#dry-run-result")
    assert viewer_page.console_errors == []


def test_a_thread_whose_summaries_dev_never_stored_says_what_the_record_assumes(
    viewer_page: BrowserPage, dashboard_server: Any
) -> None:
    # m_evNoSumRow26-1 ran with no summary store: the record sizes its summaries by the provider's counts,
    # estimates their characters, and says so in a card of its own, beside (not inside) the record's
    # disagreements with the config; the call page marks the summary's size as the provider's.
    page = viewer_page.page
    page.goto(f"{dashboard_server.url}/threads/m_evNoSumRow26-1/")
    card = page.locator("#record-assumes")
    assert card.is_visible()
    words = card.inner_text()
    assert "What the record assumes" in words
    assert "The provider's counts give their size: 146, 146, 146 tokens" in words
    assert "No summary row holds" not in page.locator("#record-disagrees").inner_text()
    viewer_page.shot("thread-assumed-summary-length", "#record-assumes")
    viewer_page.shot("thread-assumed-summary-length-page")
    page.goto(f"{dashboard_server.url}/threads/m_evNoSumRow26-1/calls/8/")
    summary = page.locator("#req-1")
    assert "146 tokens (provider)" in summary.inner_text()
    assert page.locator("#summary-by-provider").is_visible()
    viewer_page.shot("call-unstored-summary-by-provider", "#req-1")
    viewer_page.shot("call-unstored-summary-by-provider-page")
    assert viewer_page.console_errors == []

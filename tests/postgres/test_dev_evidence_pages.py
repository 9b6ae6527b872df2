"""The call pages of Mycel dev's prompt-too-long evidence threads (tests/data/mycel-dev-evidence): a
refused request shown as one, with no answer; dev's terminal error shown as dev's, not as the model's;
a call whose input only an older history holds read from it; and no page of those threads that fails."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from memory_core.rules.dev_recovery import PROMPT_TOO_LONG_TEXT
from tests.support.postgres import database_name
from tests.support.sample_data import DEV_EVIDENCE

LOG = json.loads((DEV_EVIDENCE / "driver_log.json").read_text())
EXHAUSTED = "m_evPtlRecov26-2"  # calls 7 and 8 refused; the run ended with dev's terminal error
RECOVERED = "m_evPtlRecov26-1"  # call 7 refused, the retry answered
BREAKER = "m_evBreaker026-1"


@pytest.fixture(scope="module")
def evidence_url(pg_server: Any) -> str:
    url: str = pg_server.create_database(database_name("dev_evidence_pages"))
    pg_server.load_sql(url, DEV_EVIDENCE / "dump.sql")
    return url


@pytest.fixture
def evidence_client(
    client: Client,
    db: None,
    settings: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    evidence_url: str,
) -> Client:
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH"):
        monkeypatch.delenv(name, raising=False)
    shutil.copy(DEV_EVIDENCE / "leon.db", tmp_path / "leon.db")
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("LEON_POSTGRES_URL", evidence_url)
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    return client


def _call(client: Client, thread_id: str, number: int) -> str:
    response = client.get(reverse("call", args=[thread_id, number]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def _steps(thread_id: str) -> list[dict[str, Any]]:
    return [c for c in LOG["model_calls"] if c["thread"] == thread_id and c["kind"] == "step"]


def test_a_refused_request_is_a_call_with_no_answer(evidence_client: Client) -> None:
    assert _steps(RECOVERED)[6]["step_action"].startswith("raise:prompt_too_long")
    page = _call(evidence_client, RECOVERED, 7)
    assert "refused by the provider (prompt too long)" in page
    assert 'id="refused-note"' in page
    assert "The model answered" not in page
    assert 'id="terminal-error"' not in page  # the retry was answered: no terminal error here
    assert 'id="earlier-history"' in page  # its input is only in the history before the recovery


def test_dev_terminal_error_is_shown_as_dev_wrote_it_not_as_an_answer(evidence_client: Client) -> None:
    page = _call(evidence_client, EXHAUSTED, 8)
    assert "refused by the provider (prompt too long)" in page
    assert "The model answered" not in page
    assert 'id="terminal-error"' in page
    assert f"Error: {PROMPT_TOO_LONG_TEXT}" in page
    assert "no model wrote" in page


def test_a_call_of_a_rewritten_history_shows_that_history(evidence_client: Client) -> None:
    page = _call(evidence_client, RECOVERED, 2)
    assert 'id="earlier-history"' in page
    assert "The model answered" in page
    assert "Release note 1 is consistent" in page  # the answer the head no longer holds
    assert "refused by the provider" not in page


def test_an_unstored_summary_on_the_call_page_is_sized_by_the_provider(evidence_client: Client) -> None:
    page = _call(evidence_client, "m_evNoSumRow26-1", 8)
    assert "146 tokens by the provider's counts, its characters estimated" in page
    assert "146 tokens (provider)" in page and "chars (estimated)" in page
    stored = _call(evidence_client, "m_evNoSumRow26-2", 12)  # a summary row's text: measured as stored
    assert 'id="summary-by-provider"' not in stored and "(estimated)" not in stored


@pytest.mark.parametrize("thread_id", [RECOVERED, EXHAUSTED, BREAKER])
def test_every_page_of_a_recovered_thread_answers(evidence_client: Client, thread_id: str) -> None:
    for name in ("thread", "dry_run"):
        assert evidence_client.get(reverse(name, args=[thread_id])).status_code == 200
    for number in range(1, len(_steps(thread_id)) + 1):
        assert evidence_client.get(reverse("call", args=[thread_id, number])).status_code == 200
    for name in ("context_calibration", "context_cache", "context_tools", "cost", "storage"):
        response = evidence_client.get(reverse(name))
        assert response.status_code == 200
        assert "Could not compute" not in response.content.decode()  # a section that failed says so


def test_the_thread_page_says_what_the_record_assumes_apart_from_what_disagrees(
    evidence_client: Client,
) -> None:
    # m_evNoSumRow26-1's summaries were kept in dev's memory only: sized by the provider's counts, their
    # characters estimated, shown in its own box, not among the record's disagreements with the config.
    page = evidence_client.get(reverse("thread", args=["m_evNoSumRow26-1"])).content.decode()
    assumes = page[page.index('id="record-assumes"') :]
    assumes = html.unescape(assumes[: assumes.index("</section>")])
    assert "The provider's counts give their size: 146, 146, 146 tokens" in assumes
    assert "characters is stored nowhere" in assumes
    disagrees = page[page.index('id="record-disagrees"') :]
    assert "No summary row holds" not in html.unescape(disagrees[: disagrees.index("</section>")])
    stored = evidence_client.get(reverse("thread", args=["m_evNoSumRow26-2"])).content.decode()
    assert 'id="record-assumes"' not in stored  # its later summaries are stored rows

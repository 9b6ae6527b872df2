"""The cache screen over Mycel's sample home: the very figures `mycel-memory cache --json` prints."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from tests.support.cli import cli_json

TRIMMED_THREAD = "m_npRsndIka9dx-2"  # call 11 drops a result out of protect_recent: a trim at message 10
COMPACTED_THREAD = "m_0D8EzdJXJhk9-2"


def test_fleet_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys) -> None:
    response = viewer_client.get(reverse("context_cache"))
    assert response.status_code == 200
    cli = cli_json(capsys, "cache", "--all", "--json")
    assert response.context["fleet"] == cli
    body = response.content.decode()
    totals = cli["totals"]["current"]
    assert totals["by_cause"]["trim"]["rewritten_tokens"] > 0
    assert totals["by_cause"]["compaction"]["rewritten_tokens"] > 0
    assert f"{totals['rewritten_tokens']:,}" in body
    assert f"${totals['cost_usd']}" in body
    # the chart's bars are the cause totals, and every thread links to its own view
    figure = response.context["figure"]
    assert figure["data"][0]["y"] == [
        totals["by_cause"][c]["rewritten_tokens"] for c in ("trim", "clear", "compaction", "new summary")
    ]
    for thread in cli["threads"]:
        assert f"?thread={thread['thread_id']}" in body
    assert 'data-plotly="cache-figure"' in body


@pytest.mark.parametrize("thread_id", [TRIMMED_THREAD, COMPACTED_THREAD])
def test_thread_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys, thread_id: str) -> None:
    response = viewer_client.get(reverse("context_cache"), {"thread": thread_id})
    assert response.status_code == 200
    cli = cli_json(capsys, "cache", thread_id, "--json")
    assert response.context["thread"] == cli
    body = response.content.decode()
    for call in cli["calls"]:
        # each call links to its call page and shows its re-written tokens
        assert reverse("call", args=[thread_id, call["call"]]) in body
        if call["cost_usd"]:
            assert f"${call['cost_usd']}" in body
    assert f"{cli['totals']['current']['rewritten_tokens']:,}" in body
    assert f"{reverse('config')}?thread={thread_id}" in body
    assert "Mycel adds Anthropic&#x27;s prompt caching for" in body or "Mycel adds Anthropic's prompt" in body


def test_the_trim_in_the_sample_is_named_at_its_message(viewer_client, sample_home: Path) -> None:
    response = viewer_client.get(reverse("context_cache"), {"thread": TRIMMED_THREAD})
    calls = response.context["thread"]["calls"]
    broken = [c for c in calls if c["cause"] == "trim"]
    assert [(c["call"], c["break_index"], c["shared_prefix_messages"]) for c in broken] == [(11, 11, 12)]


@pytest.mark.parametrize("value", ["no-such-thread", "<script>alert(1)</script>", "x" * 600])
def test_bad_thread_is_a_message(viewer_client, sample_home: Path, value: str) -> None:
    response = viewer_client.get(reverse("context_cache"), {"thread": value})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "showing every thread" in body or "Ignored thread" in body
    assert response.context["fleet"]["totals"]["current"]["calls"] > 0


def test_no_pricing_cache_shows_tokens_only(viewer_client, sample_home: Path) -> None:
    (sample_home / "pricing_cache.json").unlink()
    response = viewer_client.get(reverse("context_cache"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "nothing is priced; tokens are still counted" in body
    totals = response.context["fleet"]["totals"]["current"]
    assert totals["cost_usd"] is None and totals["rewritten_tokens"] > 0


@pytest.mark.parametrize("protect", ["3", "6"])
def test_config_whatif_shows_the_cache_rewrites_of_cache_json(
    viewer_client, sample_home: Path, capsys, protect
) -> None:
    response = viewer_client.get(
        reverse("config"), {"thread": TRIMMED_THREAD, "memory.pruning.protect_recent": protect}
    )
    assert response.status_code == 200
    whatif = response.context["whatif"]
    cli = cli_json(capsys, "cache", TRIMMED_THREAD, "--protect-recent", protect, "--json")
    totals = cli["totals"]
    assert whatif.chosen.cache_rewrites == (
        totals["current"]["rewritten_tokens"],
        totals["proposed"]["rewritten_tokens"],
    )
    # Today's config (protect_recent 3) re-writes 12,665 tokens at call 11; 6 shields that result to the end.
    assert whatif.chosen.cache_rewrites == ((12665, 12665) if protect == "3" else (12665, 0))
    body = response.content.decode()
    assert 'data-thread="cache-rewrites">' + f"{whatif.chosen.cache_rewrites[1]:,}" in body
    fleet = cli_json(capsys, "cache", "--all", "--protect-recent", protect, "--json")
    assert whatif.cache_rewrites == (
        fleet["totals"]["current"]["rewritten_tokens"],
        fleet["totals"]["proposed"]["rewritten_tokens"],
    )

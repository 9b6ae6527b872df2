"""The calibration screen over Mycel's sample home: the very figures `mycel-memory calibration --json`
prints, each recommendation linked to the Config what-if with its value proposed."""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from memory_core import figures
from tests.support.calibration_cut import page_calibration
from tests.support.cli import cli_json


@pytest.mark.parametrize("model", [None, "claude-sonnet-4-5-20250929"])
def test_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys, model: str | None) -> None:
    response = viewer_client.get(reverse("context_calibration"), {"model": model} if model else {})
    assert response.status_code == 200
    cli = cli_json(capsys, "calibration", *(["--model", model] if model else []), "--json")
    page = response.context["calibration"]
    assert page == page_calibration(cli)  # the CLI's very figures, cut as a page shows them
    assert page["thread_rows_count"] == sum(len(t["models"]) for t in cli["threads"])
    body = response.content.decode()
    assert [m["model"] for m in cli["models"]] == (
        [model]
        if model
        else [
            "claude-haiku-4-5-20250929",
            "claude-opus-4-6",
            "claude-sonnet-4-5-20250929",
            "gpt-4o-2024-08-06",
        ]
    )
    for m in cli["models"]:
        assert f'data-model="{m["model"]}"' in body
        provider = m["estimate_ratio"]["provider"]
        # One rounding rule (memory_core/figures.py): ratios to two decimals, token counts whole; the
        # exact --json value on hover.
        p50 = provider["p50"]
        assert f'<td class="num" title="{p50}">{figures.ratio(p50)}</td>' in body
        if m["fit"]:
            overhead, rate = m["fit"]["overhead_tokens"], m["fit"]["rate"]
            assert f'data-fit="overhead" title="{overhead} tokens">{figures.count(overhead)}<' in body
            assert f'data-fit="rate" title="{rate}">{figures.ratio(rate)}<' in body
            assert f'data-fit="recommended-limit">{m["recommended_context_limit"]:,}<' in body
    assert "calibration-figure" in body


def test_whatif_links_propose_the_recommended_values(viewer_client, sample_home: Path, capsys) -> None:
    response = viewer_client.get(reverse("context_calibration"))
    cli = cli_json(capsys, "calibration", "--json")
    sonnet = next(m for m in cli["models"] if m["model"] == "claude-sonnet-4-5-20250929")
    section = next(s for s in response.context["sections"] if s.data["model"] == sonnet["model"])
    query = parse_qs(urlsplit(section.limit_whatif_url).query)
    assert query["runtime.context_limit"] == [str(sonnet["recommended_context_limit"])]
    assert query["thread"] == [section.whatif_thread]
    dev = parse_qs(urlsplit(section.trigger_whatif_url).query)
    assert dev["rules"] == ["dev"] and dev["trigger_tokens"] == [str(sonnet["recommended_trigger_tokens"])]
    body = response.content.decode()
    assert html.escape(section.limit_whatif_url) in body
    # The Config page takes the link as it is: the proposed limit is in its what-if.
    config = viewer_client.get(section.limit_whatif_url.split("#")[0])
    assert config.status_code == 200
    assert config.context["proposal"].values == {"runtime.context_limit": sonnet["recommended_context_limit"]}


def test_a_model_too_few_calls_says_why_there_is_no_recommendation(viewer_client, sample_home: Path) -> None:
    response = viewer_client.get(reverse("context_calibration"), {"model": "claude-haiku-4-5-20250929"})
    body = response.content.decode()
    assert "No recommendation: 4 call(s) with a provider count; a fit needs at least 5" in body
    assert "see it in the what-if" not in body


@pytest.mark.parametrize("model", ["<script>alert(1)</script>", "x" * 600])
def test_an_unknown_or_bad_model_is_a_message(viewer_client, sample_home: Path, model: str) -> None:
    response = viewer_client.get(reverse("context_calibration"), {"model": model})
    assert response.status_code == 200
    body = response.content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "No model call used the model" in body or "Ignored model" in body
    assert len(response.context["calibration"]["models"]) == 4  # every model instead


def test_an_empty_home_says_there_is_nothing_to_calibrate(viewer_client, tmp_path: Path) -> None:
    response = viewer_client.get(reverse("context_calibration"))
    assert response.status_code == 200
    assert response.context["calibration"]["models"] == []
    assert "No model call to calibrate." in response.content.decode()


def test_per_thread_rows_link_their_threads(viewer_client, sample_home: Path, capsys) -> None:
    response = viewer_client.get(reverse("context_calibration"))
    cli = cli_json(capsys, "calibration", "--json")
    rows = response.context["thread_rows"]
    assert len(rows) == sum(len(t["models"]) for t in cli["threads"]) == 6
    by_id = {t["thread_id"]: t["models"] for t in cli["threads"]}
    body = response.content.decode()
    for row in rows:
        assert row.data in by_id[row.thread_id]
        assert f'href="{reverse("thread", args=[row.thread_id])}"' in body

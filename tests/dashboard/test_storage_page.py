"""The Storage screen over Mycel's sample home: the very figures `mycel-memory storage --json` prints,
the ranking's sorts and pages, one thread's breakdown, the retention form, and bad input said plainly."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core import figures
from tests.core.store_builders import build_thread
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at

_ROW = re.compile(
    r'<tr data-thread="([^"]*)" data-bytes="(\d+)" data-growth="(\d+)" data-projected="(\d+)" '
    r'data-checkpoints="(\d+)">'
)


def _page_rows(body: str) -> list[tuple[str, int, int, int, int]]:
    return [(unescape(t), int(b), int(g), int(p), int(c)) for t, b, g, p, c in _ROW.findall(body)]


@pytest.mark.parametrize(
    ("query", "args"),
    [({}, []), ({"sort": "growth"}, []), ({"sort": "projected", "turns": "10"}, ["--turns", "10"])],
)
def test_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys, query, args) -> None:
    response = viewer_client.get(reverse("storage"), query)
    assert response.status_code == 200
    body = response.content.decode()
    cli = cli_json(capsys, "storage", *args, "--json")
    expected = {
        t["thread_id"]: (
            t["thread_id"],
            t["bytes"],
            t["growth_bytes_per_turn"],
            t["projected_bytes"],
            t["checkpoints"],
        )
        for t in cli["threads"]
    }
    rows = _page_rows(body)
    assert sorted(rows) == sorted(expected.values())
    # Ranked as asked: by bytes, growth per turn or projected size, biggest first.
    column = {"bytes": 1, "growth": 2, "projected": 3}[query.get("sort", "bytes")]
    assert [r[column] for r in rows] == sorted((r[column] for r in rows), reverse=True)
    # Sizes in units, their exact bytes in the title: the same numbers as --json.
    total = re.search(r'id="storage-total" title="([\d,]+) bytes">([^<]+)<', body)
    assert total is not None and int(total.group(1).replace(",", "")) == cli["total_bytes"]
    assert total.group(2) == figures.size(cli["total_bytes"])
    projected = re.search(r'id="storage-projected" title="([\d,]+) bytes, projected[^"]*">([^<]+)<', body)
    assert projected is not None and int(projected.group(1).replace(",", "")) == cli["projected_total_bytes"]
    assert projected.group(2).strip() == figures.size(cli["projected_total_bytes"])
    assert cli["projected_total_bytes"] == sum(t["projected_bytes"] for t in cli["threads"])
    for store in cli["stores"]:
        assert f'data-store="{store["store"]}"' in body
    assert 'id="storage-chart"' in body and 'id="storage-figure"' in body
    assert "sk-ant-FAKE" not in body


def test_retention_form_opens_the_retention_preview(viewer_client, sample_home: Path) -> None:
    body = viewer_client.get(reverse("storage")).content.decode()
    form = re.search(
        r'<form class="filters" id="retention-form" method="get" action="([^"]+)">(.*?)</form>', body, re.S
    )
    assert form is not None and form.group(1) == reverse("retention")
    fields = form.group(2)
    assert 'type="number" name="keep_last"' in fields
    assert 'type="checkbox" name="heads_only"' in fields
    assert 'type="number" name="idle_days"' in fields
    assert "Preview what it frees" in fields


def test_thread_breakdown_matches_the_cli(viewer_client, sample_home: Path, capsys) -> None:
    thread_id = "m_0D8EzdJXJhk9-2"
    response = viewer_client.get(reverse("storage"), {"thread": thread_id})
    assert response.status_code == 200
    body = response.content.decode()
    cli = cli_json(capsys, "storage", thread_id, "--json")
    detail = response.context["detail"]
    assert [(r.checkpoint_id, r.total, r.turn) for r in detail.rows] == [
        (r["checkpoint_id"], r["bytes"], r["turn"]) for r in cli["checkpoint_rows"]
    ]
    assert detail.head_checkpoint_id == cli["head_checkpoint_id"]
    assert [(c.channel, c.total) for c in detail.channels] == [
        (c["channel"], c["bytes"]) for c in cli["channels"]
    ]
    assert body.count('<tr><td class="num">') >= len(cli["checkpoint_rows"])
    growth = response.context["bytes_card"].growth_words
    assert growth.startswith("+") and "after 50 more turns" in growth
    assert growth in unescape(body)
    assert 'id="thread-bytes-figure"' in body
    # The rest of the page still ranks every thread.
    assert len(_page_rows(body)) == len(cli_json(capsys, "storage", "--json")["threads"])


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"sort": "<script>alert(1)</script>"}, "Ignored sort"),
        ({"turns": "-3"}, "Ignored turns ahead"),
        ({"turns": "lots"}, "Ignored turns ahead"),
        ({"page": "0"}, "Ignored page"),
        ({"page": "999"}, "only 1 page"),
        ({"thread": "no-such-thread"}, "No checkpoint store holds a thread"),
        ({"thread": "~_w"}, "Ignored thread"),
    ],
)
def test_bad_input_is_named_and_the_rest_works(viewer_client, sample_home: Path, query, said) -> None:
    response = viewer_client.get(reverse("storage"), query)
    assert response.status_code == 200
    body = unescape(response.content.decode())
    assert said in body
    assert "<script>alert(1)</script>" not in response.content.decode()
    assert len(_page_rows(response.content.decode())) == 6


def test_pages_and_odd_ids(viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "data-home"
    home.mkdir()
    odd = "user/42 <b>x</b>"
    build_thread(home / "leon.db", odd, turns=2)
    for n in range(55):
        build_thread(home / "leon.db", f"t{n:02d}", turns=1)
    point_env_at(monkeypatch, home)
    first = viewer_client.get(reverse("storage")).content.decode()
    second = viewer_client.get(reverse("storage"), {"page": "2"}).content.decode()
    assert len(_page_rows(first)) == 50 and len(_page_rows(second)) == 6
    assert "page 1 of 2" in first and "page 2 of 2" in second
    assert "<b>x</b>" not in first
    # The odd id's breakdown link carries its URL form and opens it.
    link = re.search(r'href="(/storage/\?thread=~[^"&]+)', first)
    assert link is not None
    detail = viewer_client.get(unescape(link.group(1)))
    assert detail.status_code == 200
    assert detail.context["detail"].thread.thread_id == odd


def test_no_mycel_data_is_a_message(viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    point_env_at(monkeypatch, tmp_path / "nowhere")
    response = viewer_client.get(reverse("storage"))
    assert response.status_code == 200
    assert 'id="retention-form"' in response.content.decode()


def test_thread_page_shows_its_bytes_per_checkpoint(viewer_client, sample_home: Path, capsys) -> None:
    thread_id = "m_0D8EzdJXJhk9-2"
    response = viewer_client.get(reverse("thread", args=[thread_id]))
    assert response.status_code == 200
    body = unescape(response.content.decode())
    cli = cli_json(capsys, "storage", thread_id, "--json")
    card = response.context["bytes_card"]
    assert (card.row.bytes, card.row.growth_bytes_per_turn, card.row.projected_bytes) == (
        cli["bytes"],
        cli["growth_bytes_per_turn"],
        cli["projected_bytes"],
    )
    assert card.growth_words in body and "projected" in card.growth_words
    figure = json.loads(
        re.search(r'id="thread-bytes-figure" type="application/json">(.*?)</script>', body, re.S)[1]
    )
    stacked = [sum(values) for values in zip(*(trace["y"] for trace in figure["data"]), strict=True)]
    assert stacked == [r["bytes"] for r in cli["checkpoint_rows"]]
    assert f'href="/storage/?thread={thread_id}"' in body


@pytest.mark.parametrize("damage", ["truncated", "garbage", "locked"])
def test_a_broken_leon_db_is_named_and_the_page_works(
    viewer_client, sample_home: Path, settings, damage
) -> None:
    from tests.dashboard.broken_homes import exclusively_locked, random_bytes, truncated

    db = sample_home / "leon.db"
    settings.DASHBOARD_STORE_TIMEOUT_MS = 100
    if damage == "locked":
        with exclusively_locked(db):
            response = viewer_client.get(reverse("storage"), {"thread": "m_npRsndIka9dx-2"})
        said = "leon.db is locked"
    else:
        (truncated if damage == "truncated" else random_bytes)(db)
        response = viewer_client.get(reverse("storage"), {"thread": "m_npRsndIka9dx-2"})
        said = "leon.db"
    assert response.status_code == 200
    body = unescape(response.content.decode())
    assert re.search(r'<p class="problem" role="alert">[^<]*' + re.escape(said), body)
    assert 'id="retention-form"' in body
    assert "Traceback" not in body
    if damage == "locked":
        # Once the lock is gone the same page reads every thread again (nothing kept the failure).
        assert len(_page_rows(viewer_client.get(reverse("storage")).content.decode())) == 6

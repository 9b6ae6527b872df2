"""A secret a tool printed (`env` shows OPENAI_API_KEY=sk-…) reaches no page, no CLI output and no export:
the stores' border masks it to its own length, so every figure Mycel's rules take from a text's length
(pruning, its estimate) is what it is on the text as stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core import memo
from memory_core.cli.reading import open_reader
from memory_core.stores import checkpoints
from mycel_dashboard.cli import main
from tests.dashboard.planting import plant_env_dump
from tests.support.mycel_env import empty_home

KEY = "sk-proj-PrintedByEnv0123456789ab"
TOKEN = "hdr-token-0099887766"
OUTPUT = f"OPENAI_API_KEY={KEY}\nPATH=/usr/bin\n" + "LINE=1\n" * 900 + f"Authorization: Bearer {TOKEN}"
THREAD = "t-env"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = empty_home(monkeypatch, tmp_path)
    plant_env_dump(folder / "leon.db", THREAD, key=KEY, output=OUTPUT)
    assert KEY.encode() in (folder / "leon.db").read_bytes()  # Mycel's file keeps it; we only read
    return folder


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out + err


def test_a_printed_secret_reaches_no_page(viewer_client, home: Path) -> None:
    urls = [
        reverse("thread", args=[THREAD]),
        reverse("thread", args=[THREAD]) + "?view=sent",
        reverse("call", args=[THREAD, 1]),
        reverse("message_text", args=[THREAD, 2]),
        reverse("search") + "?q=OPENAI_API_KEY",
    ]
    for url in urls:
        response = viewer_client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert KEY not in body and TOKEN not in body, url
    full = viewer_client.get(reverse("message_text", args=[THREAD, 2])).content.decode()
    assert "OPENAI_API_KEY=" + "*" * len(KEY) in full  # the operator still sees that a key was printed


def test_nor_the_cli_and_the_figures_are_those_of_the_stored_text(
    db: None, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    outputs = [
        _cli(capsys, "thread", THREAD, "--json"),
        _cli(capsys, "calls", THREAD, "--json"),
        _cli(capsys, "dry-run", THREAD, "--json", "--show-text"),
        _cli(capsys, "export", THREAD, "--format", "md"),
    ]
    for text in outputs:
        assert KEY not in text and TOKEN not in text
    masked = json.loads(_cli(capsys, "calls", THREAD, "--json"))
    with monkeypatch.context() as unmasked:
        unmasked.setattr(checkpoints, "masked_texts", lambda value: value)
        unmasked.setenv("MYCEL_MEMORY_CACHE_DIR", str(home.parent / "cache-unmasked"))  # no kept facts
        memo.reset()
        as_stored = json.loads(_cli(capsys, "calls", THREAD, "--json"))
        state = open_reader().get_state(THREAD).value
        assert state is not None and state.messages[2].text == OUTPUT  # really the text as stored

    # Every call's sizes, Mycel's estimate and the pruning decisions; tiktoken (shown beside them, never
    # used by Mycel's rules) counts the mask's tokens, not the key's.
    def rules_figures(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: v for k, v in call.items() if k != "tiktoken_tokens"} for call in calls]

    assert rules_figures(masked) == rules_figures(as_stored)
    assert any(call["soft_trimmed"] for call in masked)  # the env dump is pruned: its length decides


def test_the_series_counts_the_text_as_the_pages_show_it(home: Path) -> None:
    # One figure: the series (which skips the border for speed) counts tiktoken on the text the pages show.
    from memory_core.tokens import default_counter

    reader, count = open_reader(), default_counter().count
    points = reader.list_checkpoints(THREAD).value
    for point in points:
        state = reader.get_state(THREAD, point.checkpoint_id).value
        assert state is not None
        assert point.tiktoken_tokens == sum(count(m.text) for m in state.messages), point.checkpoint_id
    assert any(KEY not in m.text and "*" * len(KEY) in m.text for m in state.messages)

"""Every id round-trips: thread, checkpoint and tool-call ids are arbitrary strings (LangGraph puts no rule
on them), and each one lists, links, opens, rolls back and shows its spilled output — in the dashboard and
in the CLI. The data is written by LangGraph's real SqliteSaver."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.ids import short_id
from tests.support.mycel_env import point_env_at
from tests.support.odd_ids import CHECKPOINT_IDS, ODD_IDS, TOOL_CALL_ID, write_odd_home


@pytest.fixture
def odd_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = write_odd_home(tmp_path / "odd-home")
    point_env_at(monkeypatch, folder)
    return folder


def _text(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def test_the_list_shows_and_links_every_thread(viewer_client, odd_home: Path) -> None:
    listing = _text(viewer_client.get(reverse("threads")))
    for thread_id in ODD_IDS.values():
        assert html.escape(short_id(thread_id)) in listing
        assert f'href="{reverse("thread", args=[thread_id])}"' in listing


@pytest.mark.parametrize("key", ODD_IDS)
def test_each_id_opens_every_page_and_rolls_back(operator_client, odd_home: Path, key: str) -> None:
    thread_id = ODD_IDS[key]
    page = _text(operator_client.get(reverse("thread", args=[thread_id])))
    assert html.escape(short_id(thread_id)) in page
    # the rail links each checkpoint under its own id, and each opens
    for checkpoint_id in CHECKPOINT_IDS:
        url = reverse("checkpoint", args=[thread_id, checkpoint_id])
        assert f'href="{html.escape(url)}"' in page
        checkpoint = _text(operator_client.get(url))
        assert html.escape(short_id(checkpoint_id)) in checkpoint
    # the spilled result links to its file, which opens whole
    spill_url = reverse("spill", args=[thread_id, TOOL_CALL_ID])
    assert f'href="{html.escape(spill_url)}"' in page
    assert html.escape(f"the full output for {thread_id!r}") in _text(operator_client.get(spill_url))
    for panel in ("sandbox", "queue", "file-operations", "run-events", "integrity"):
        _text(operator_client.get(reverse("panel", args=[thread_id, panel])))
    assert "dry-run" in _text(operator_client.get(reverse("dry_run", args=[thread_id])))
    # the timeline links the first model call's page, which opens
    call_url = reverse("call", args=[thread_id, 1])
    assert f'href="{html.escape(call_url)}"' in page
    assert "Model call 1" in _text(operator_client.get(call_url))
    # roll back to the first checkpoint: preview, then apply
    preview_url = reverse("rollback_preview", args=[thread_id, CHECKPOINT_IDS[0]])
    preview = _text(operator_client.get(preview_url))
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', preview).group(1)
    applied = operator_client.post(
        reverse("rollback_apply", args=[thread_id, CHECKPOINT_IDS[0]]),
        {"fingerprint": fingerprint, "force": "on"},
    )
    assert applied.status_code == 302
    assert applied["Location"] == reverse("thread", args=[thread_id])
    after = _text(operator_client.get(applied["Location"]))
    assert "Rolled back: the active checkpoint is now" in after


@pytest.mark.parametrize("key", ["slash", "control", "long"])
def test_the_cli_reads_each_id(odd_home: Path, key: str) -> None:
    thread_id = ODD_IDS[key]
    run = subprocess.run(
        [sys.executable, "-m", "memory_core", "thread", thread_id, "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    shown = json.loads(run.stdout)
    assert shown["thread_id"] == thread_id
    assert {c["checkpoint_id"] for c in shown["checkpoints"]} == set(CHECKPOINT_IDS)

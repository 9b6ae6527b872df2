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
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core.ids import short_id
from tests.conftest import point_env_at

ODD_IDS = {
    "slash": "user/42",
    "query": "a?b#c%d&e=f",
    "spaces": "with space  and +plus",
    "dots": "..",
    "percent": "%2F%2e%2e%00",
    "tilde": "~not-base64!",
    "cjk": "分身/线程-1",
    "control": "ctl\x01\x1f\x7f\u200bend",
    "long": ("segment/" * 400)[:3000],
}
# Checkpoint ids sort as text (LangGraph's newest is the greatest): these sort before a uuid6 id, so the
# checkpoint a rollback writes is the newest, as it is with Mycel's own ids.
CHECKPOINT_IDS = ("0 cp/1?#%", "0 cp/2 分身 ..")
TOOL_CALL_ID = "call/1 ?#% 工具"


def _plant(leon_db: Path, workspace: Path, thread_id: str) -> None:
    """Two checkpoints under odd ids; the second holds a spilled tool result under an odd tool-call id."""
    spill = workspace / ".leon" / "tool-results" / f"{TOOL_CALL_ID}.txt"
    spill.parent.mkdir(parents=True, exist_ok=True)
    spill.write_text(f"the full output for {thread_id!r}")
    notice = f"Output too large (60000 bytes). Full output saved to: {spill}\n\nPreview (first 2048 bytes):\nx\n..."
    histories = [
        [HumanMessage("hello", id="h1"), AIMessage("hi", id="a1")],
        [
            HumanMessage("hello", id="h1"),
            AIMessage("hi", id="a1"),
            HumanMessage("read it", id="h2"),
            AIMessage("", id="a2", tool_calls=[{"id": TOOL_CALL_ID, "name": "Read", "args": {"path": "x"}}]),
            ToolMessage(notice, tool_call_id=TOOL_CALL_ID, id="t1"),
            AIMessage("done", id="a3"),
        ],
    ]
    with SqliteSaver.from_conn_string(str(leon_db)) as saver:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for step, (checkpoint_id, messages) in enumerate(zip(CHECKPOINT_IDS, histories, strict=True)):
            checkpoint = empty_checkpoint()
            checkpoint["id"] = checkpoint_id
            checkpoint["channel_values"] = {"messages": messages}
            checkpoint["channel_versions"] = {"messages": step + 1}
            config = saver.put(
                config, checkpoint, {"source": "loop", "step": step, "parents": {}}, {"messages": step + 1}
            )


@pytest.fixture
def odd_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "odd-home"
    folder.mkdir()
    for key, thread_id in ODD_IDS.items():
        _plant(folder / "leon.db", folder / "workspaces" / key, thread_id)
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

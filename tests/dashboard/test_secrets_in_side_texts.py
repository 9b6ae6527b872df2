"""A key printed into the texts beside the messages (a stored summary, a queued message, a run event's
payload, a file the agent wrote, a sandbox's working folder, an agent's name) reaches no page, panel, API
answer, CLI output, search result or export: the stores' border masks it to its own length, as it does in
messages (issue 25: it showed in 15 places)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.demo.graph import RunEventsTableRow
from memory_core.demo.tables import (
    MemberRow,
    MessageQueueTableRow,
    SandboxRecord,
    SummaryEntry,
    ThreadsTableRow,
    write_file_operations,
    write_queue,
    write_run_events,
    write_sandbox,
    write_summaries,
    write_threads_table,
)
from memory_core.demo.tools import FileOperationsTableRow
from mycel_dashboard.cli import main as dashboard_cli
from tests.core.store_builders import build_thread
from tests.support.cli import run_cli
from tests.support.mycel_env import empty_home

AGENT = "m_sideTexts"
THREAD = f"{AGENT}-1"
# One secret in each shape tools and people print them; each value is unique, so a find names its shape.
SECRETS = {
    "OPENAI_API_KEY=": "sk-side-openai-7001aa",
    "Authorization: Bearer ": "side-bearer-7002bb",
    "api_key=": "side-apikey-7003cc",
    "ANTHROPIC_API_KEY=": "sk-ant-side-7004dd",
    "SECRET_TOKEN=": "side-token-7005ee",
}
PRINTED = "\n".join(f"{name}{value}" for name, value in SECRETS.items())


def _found(text: str) -> list[str]:
    return [value for value in SECRETS.values() if value in text]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = empty_home(monkeypatch, tmp_path)
    build_thread(folder / "leon.db", THREAD, turns=3)
    now = 1_767_225_600.0
    write_threads_table(
        folder / "leon.db",
        [ThreadsTableRow(THREAD, AGENT, "local", "gpt-4o-mini", str(folder), None, None, 1, 0, now)],
        [
            MemberRow(
                AGENT,
                f"agent api_key={SECRETS['api_key=']}",
                "mycel_agent",
                None,
                None,
                None,
                None,
                now,
                now,
                2,
            )
        ],
    )
    write_summaries(
        folder / "summary.db",
        [SummaryEntry(f"{THREAD}_s", THREAD, f"Summary: the env held\n{PRINTED}", 2, 4, False, None, True,
                      "2026-01-01T00:00:00")],
    )  # fmt: skip
    write_queue(
        folder / "queue.db",
        [MessageQueueTableRow(THREAD, f"use this:\n{PRINTED}", "steer", "owner", "u1", "Owner", "2026-01-01 00:00:00")],
    )  # fmt: skip
    write_run_events(
        folder / "events.db",
        [RunEventsTableRow(THREAD, "run-1", "tool_result", {"content": PRINTED, "nested": [{"out": PRINTED}]},
                           None, "2026-01-01 00:00:00")],
    )  # fmt: skip
    write_file_operations(
        folder / "file_ops.db",
        [FileOperationsTableRow("op-1", THREAD, "run-1", now, "write", f"{folder}/.env", None, PRINTED,
                                json.dumps([{"new_string": PRINTED}]))],
    )  # fmt: skip
    write_sandbox(
        folder / "sandbox.db",
        [SandboxRecord(THREAD, "vol-1", "/tmp/vol", "lease-1", "inst-1", "term-1",
                       f"/work/SECRET_TOKEN={SECRETS['SECRET_TOKEN=']}", "sess-1", "rt-1", "evt-1",
                       "2026-01-01T00:00:00", "2026-01-01T00:00:00", "2026-01-01T00:00:00Z")],
    )  # fmt: skip
    on_disk = b"".join(p.read_bytes() for p in folder.rglob("*.db"))
    assert all(value.encode() in on_disk for value in SECRETS.values())  # Mycel's files keep them
    return folder


def test_planted_side_texts_are_read_at_all(viewer_client, home: Path) -> None:
    # Guards the test below: the planted texts do reach the pages, masked, so finding no value is hiding.
    queue = viewer_client.get(reverse("panel", args=[THREAD, "queue"])).content.decode()
    assert "OPENAI_API_KEY=" + "*" * len(SECRETS["OPENAI_API_KEY="]) in queue
    events = viewer_client.get(reverse("panel", args=[THREAD, "run-events"])).content.decode()
    assert "ANTHROPIC_API_KEY=" in events


def test_no_page_panel_api_answer_cli_output_or_export_shows_a_side_text_secret(
    viewer_client, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from django.contrib.auth.models import User

    from mycel_dashboard.api.tokens import create_token

    thread = reverse("thread", args=[THREAD])
    pages = [
        reverse("threads"),
        thread,
        thread + "?view=sent",
        reverse("call", args=[THREAD, 1]),
        reverse("call", args=[THREAD, 2]),
        reverse("dry_run", args=[THREAD]),
        reverse("search") + "?q=OPENAI_API_KEY",
        reverse("search") + "?q=SECRET_TOKEN",
        *(reverse("panel", args=[THREAD, p]) for p in ("sandbox", "queue", "file-operations", "run-events")),
    ]
    seen = 0
    for url in pages:
        response = viewer_client.get(url)
        assert response.status_code == 200, url
        assert _found(response.content.decode()) == [], url
        seen += 1
    for fmt in ("json", "md"):
        response = viewer_client.post(reverse("thread_export", args=[THREAD]), {"format": fmt})
        assert response.status_code == 200 and _found(response.content.decode()) == [], fmt
    token = create_token(User.objects.get(username="viewer"))[1]
    for url in (
        reverse("api_threads"),
        reverse("api_thread", args=[THREAD]),
        reverse("api_calls", args=[THREAD]),
        reverse("api_search") + "?q=OPENAI_API_KEY",
    ):
        response = viewer_client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code == 200 and _found(response.content.decode()) == [], url
    for argv in (
        ["threads", "--json"],
        ["thread", THREAD, "--json"],
        ["calls", THREAD, "--json"],
        ["search", "OPENAI_API_KEY", "--json"],
    ):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, (argv, err)
        assert _found(out + err) == [], argv
    assert dashboard_cli(["export", THREAD, "--format", "md"]) == 0  # audited: the dashboard's entry point
    out, err = capsys.readouterr()
    assert "## " in out and _found(out + err) == []
    assert seen == len(pages)

"""The PostgreSQL half of tests/dashboard/test_secrets_in_side_texts.py: a key printed into Mycel dev's own
side tables (agent.summaries, agent.message_queue, agent.run_events, agent.file_operations) and into the
agent's name reaches no page, panel, API answer or CLI output; the mask shows where it was."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from memory_core import memo
from mycel_dashboard.api.tokens import create_token
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres

SECRETS = {
    "OPENAI_API_KEY=": "sk-pgside-openai-8001aa",
    "Authorization: Bearer ": "pgside-bearer-8002bb",
    "api_key=": "pgside-apikey-8003cc",
    "ANTHROPIC_API_KEY=": "sk-ant-pgside-8004dd",
    "SECRET_TOKEN=": "pgside-token-8005ee",
}
PRINTED = "\n".join(f"{name}{value}" for name, value in SECRETS.items())


def _found(text: str) -> list[str]:
    return [value for value in SECRETS.values() if value in text]


@pytest.fixture
def planted(pg_dev_demo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url, written = pg_dev_demo
    thread = next(w for w in written if w.summary_ids)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE agent.summaries SET summary_text = %s WHERE thread_id = %s", (PRINTED, thread.thread_id)
        )
        conn.execute(
            "UPDATE agent.message_queue SET content = %s WHERE thread_id = %s", (PRINTED, thread.thread_id)
        )
        conn.execute(
            "UPDATE agent.run_events SET data = %s WHERE thread_id = %s",
            (json.dumps({"content": PRINTED}), thread.thread_id),
        )
        conn.execute(
            "UPDATE agent.file_operations SET after_content = %s WHERE thread_id = %s",
            (PRINTED, thread.thread_id),
        )
    point_env_at_postgres(monkeypatch, tmp_path, url)
    memo.reset()
    return thread.thread_id


def test_no_page_api_answer_or_cli_output_shows_a_key_printed_into_devs_side_tables(
    client, db, settings, tmp_path: Path, planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    viewer = User.objects.create_user("viewer", password="viewer-pass-123")
    client.force_login(viewer)
    queue = client.get(reverse("panel", args=[planted, "queue"])).content.decode()
    assert "OPENAI_API_KEY=" + "*" * len(SECRETS["OPENAI_API_KEY="]) in queue  # read, and masked
    thread = reverse("thread", args=[planted])
    for url in (
        thread,
        thread + "?view=sent",
        reverse("threads"),
        *(reverse("panel", args=[planted, p]) for p in ("queue", "file-operations", "run-events")),
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert _found(response.content.decode()) == [], url
    token = create_token(viewer)[1]
    answer = client.get(reverse("api_thread", args=[planted]), HTTP_AUTHORIZATION=f"Bearer {token}")
    assert answer.status_code == 200 and _found(answer.content.decode()) == []
    for argv in (["thread", planted, "--json"], ["threads", "--json"]):
        code, out, err = run_cli(capsys, *argv)
        assert code == 0, err
        assert _found(out + err) == [], argv

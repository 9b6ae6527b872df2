"""Export from the page: a viewer may download a thread (or one checkpoint) as the JSON bundle or the
Markdown transcript — the very file `mycel-memory export` writes — and every export, refused ones too,
is in the audit log; the CLI's as `cli:$USER`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core.app.export import export_bundle
from memory_core.cli.reading import open_reader
from memory_core.demo import FAKE_API_KEY
from memory_core.export.markdown import bundle_markdown
from mycel_dashboard.cli import main
from mycel_dashboard.models import AuditEntry
from tests.hostile.payloads import SECRETS, write_hostile_home
from tests.support.mycel_env import point_env_at
from tests.support.odd_ids import CHECKPOINT_IDS, ODD_IDS, write_odd_home

THREAD = "m_0D8EzdJXJhk9-2"  # the sample thread with seven summaries
FILENAME = re.compile(r'attachment; filename="(mycel-[A-Za-z0-9._-]+-[0-9a-f]{8}\.(json|md))"')


def _export(client, thread_id: str, **data: str):
    return client.post(reverse("thread_export", args=[thread_id]), data)


def _without_time(bundle: dict) -> dict:
    return {k: v for k, v in bundle.items() if k != "exported_at"}


def test_the_thread_page_offers_the_export(viewer_client, sample_home: Path) -> None:
    page = viewer_client.get(reverse("thread", args=[THREAD])).content.decode()
    assert 'id="export-form"' in page and f'action="{reverse("thread_export", args=[THREAD])}"' in page
    head = open_reader().head_checkpoint_id(THREAD)
    checkpoint = viewer_client.get(reverse("checkpoint", args=[THREAD, head])).content.decode()
    assert 'id="export-form"' in checkpoint and f'name="checkpoint" value="{head}"' in checkpoint


def test_a_viewer_downloads_the_bundle_and_it_is_audited(viewer_client, viewer, sample_home: Path) -> None:
    response = _export(viewer_client, THREAD, format="json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert FILENAME.fullmatch(response["Content-Disposition"])
    bundle = json.loads(response.content)
    expected = export_bundle(open_reader(), THREAD, exported_at=datetime.now(UTC))
    assert _without_time(bundle) == _without_time(expected)  # the CLI's bundle, by the same function
    assert FAKE_API_KEY not in response.content.decode()  # Mycel copied it into every checkpoint's metadata
    entry = AuditEntry.objects.get()
    assert (entry.user, entry.actor, entry.action, entry.result, entry.thread_id) == (
        viewer,
        "viewer",
        "export",
        "applied",
        THREAD,
    )
    assert entry.target == bundle["checkpoint_id"]
    assert entry.after == {
        "format": "json",
        "checkpoint_id": bundle["checkpoint_id"],
        "messages": 24,
        "calls": 12,
        "summaries": 7,
    }


def test_the_markdown_download_holds_every_human_message(viewer_client, sample_home: Path) -> None:
    response = _export(viewer_client, THREAD, format="md")
    assert response.status_code == 200 and response["Content-Type"] == "text/markdown; charset=utf-8"
    assert FILENAME.fullmatch(response["Content-Disposition"]).group(2) == "md"
    text = response.content.decode()
    bundle = export_bundle(open_reader(), THREAD, exported_at=datetime.now(UTC))
    assert text.split("\n", 8)[-1] == bundle_markdown(bundle).split("\n", 8)[-1]  # past the export time
    for message in bundle["messages"]:
        if message["type"] == "human":
            assert message["content"] in text


def test_one_checkpoint(viewer_client, sample_home: Path) -> None:
    oldest = open_reader().list_checkpoints(THREAD).value[-1].checkpoint_id
    bundle = json.loads(_export(viewer_client, THREAD, format="json", checkpoint=oldest).content)
    assert bundle["checkpoint_id"] == oldest and len(bundle["messages"]) < 24
    assert AuditEntry.objects.get().target == oldest


@pytest.mark.parametrize(
    ("data", "status", "said"),
    [
        ({"format": "pdf"}, 400, "format"),
        ({}, 400, "format"),
        ({"format": "json", "checkpoint": "no-such-checkpoint"}, 404, "no checkpoint 'no-such-checkpoint'"),
    ],
)
def test_bad_input_is_a_message_and_refused_in_the_audit_log(
    viewer_client, sample_home: Path, data: dict, status: int, said: str
) -> None:
    response = _export(viewer_client, THREAD, **data)
    assert response.status_code == status and response["Content-Type"].startswith("text/plain")
    assert said in response.content.decode() and "Content-Disposition" not in response
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result) == ("export", "refused") and said in entry.message


def test_an_unknown_thread_is_404(viewer_client, sample_home: Path) -> None:
    response = _export(viewer_client, "<script>alert(1)</script>", format="json")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/plain")
    assert AuditEntry.objects.get().result == "refused"


def test_export_is_post_only_and_needs_a_login(client, viewer_client, sample_home: Path) -> None:
    assert viewer_client.get(reverse("thread_export", args=[THREAD])).status_code == 405
    viewer_client.logout()
    assert _export(client, THREAD, format="json").status_code in (302, 403)
    assert not AuditEntry.objects.exists()


def test_every_odd_id_downloads_under_a_safe_name(viewer_client, tmp_path: Path, monkeypatch) -> None:
    point_env_at(monkeypatch, write_odd_home(tmp_path / "odd"))
    names = set()
    for thread_id in ODD_IDS.values():
        response = _export(viewer_client, thread_id, format="md", checkpoint=CHECKPOINT_IDS[0])
        assert response.status_code == 200, thread_id
        found = FILENAME.fullmatch(response["Content-Disposition"])
        assert found and ".." not in found.group(1), response["Content-Disposition"]
        names.add(found.group(1))
    assert len(names) == len(ODD_IDS)
    assert {e.thread_id for e in AuditEntry.objects.all()} == set(ODD_IDS.values())


def test_the_cli_export_is_audited_as_cli_user(
    db, sample_home: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("USER", "ops")
    target = tmp_path / "thread.json"
    assert main(["export", THREAD, "-o", str(target)]) == 0
    assert "recorded in the audit log" in capsys.readouterr().err
    bundle = json.loads(target.read_text(encoding="utf-8"))
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.action, entry.result, entry.thread_id, entry.target) == (
        "cli:ops",
        "export",
        "applied",
        THREAD,
        str(target.resolve()),
    )
    assert entry.after["checkpoint_id"] == bundle["checkpoint_id"]
    assert main(["export", THREAD, "--format", "md"]) == 0  # stdout without -o
    assert "## #0 Human" in capsys.readouterr().out
    assert AuditEntry.objects.filter(target="stdout").count() == 1


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["export", "no-such-thread"], "unknown thread 'no-such-thread'"),
        (["export", THREAD, "--checkpoint", "nope"], "no checkpoint 'nope'"),
        (["export", THREAD, "--format", "pdf"], "--format: must be json or md"),
    ],
)
def test_cli_bad_input_is_one_line_and_nothing_recorded(db, sample_home: Path, capsys, argv, said) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], lines
    assert not AuditEntry.objects.exists()


def test_no_planted_secret_or_live_markup_in_any_export_of_the_hostile_home(
    viewer_client, tmp_path: Path, monkeypatch
) -> None:
    home = write_hostile_home(tmp_path / "hostile", secrets=SECRETS)
    point_env_at(monkeypatch, home.folder)
    on_disk = b"".join(p.read_bytes() for p in home.folder.rglob("*") if p.is_file())
    assert all(value.encode() in on_disk for value in SECRETS.values())  # they are there to leak
    for thread_id in home.thread_ids:
        for fmt in ("json", "md"):
            response = _export(viewer_client, thread_id, format=fmt)
            assert response.status_code == 200, (thread_id, fmt)
            body = response.content.decode()
            assert [v for v in SECRETS.values() if v in body] == [], (thread_id, fmt)
            assert FILENAME.fullmatch(response["Content-Disposition"]), response["Content-Disposition"]
            assert not response["Content-Type"].startswith("text/html")

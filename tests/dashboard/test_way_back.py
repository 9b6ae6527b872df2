"""Every write reports itself with its way back (issue 28, B): a config save links to restoring the version it
replaced, a restore to the version it replaced in turn (back to "no file" too), each previewed as a diff
before it is confirmed; a rollback's banner links to its undo, an undo's to the rollback again; the thread
is not "Running" because the dashboard wrote its head; the project layer is no target when its folder is on
another machine; the audit log never says None."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from memory_core.stores.runtime_config import BACKUP_PREFIX
from mycel_dashboard.models import AuditEntry

THREAD = "m_npRsndIka9dx-2"  # cwd /home/operator/.leon/workspaces/morel-lab, not on this machine
SOFT = "memory.pruning.soft_trim_chars"
SAVE_PANEL = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "save-panel"}


def _versions(home: Path) -> Iterator[Path]:
    """The versions saves replaced (.history also keeps what each save wrote, runtime.json.wrote-…)."""
    return (p for p in (home / ".history").iterdir() if p.name.startswith(BACKUP_PREFIX))


def _hash(body: str) -> str:
    found = re.search(r'name="sha256" value="([0-9a-f]*)"', body)
    assert found, "the confirming form carries the file's hash"
    return found.group(1)


def _save(client: Client, value: str, **extra: str):
    params = {"thread": THREAD, "layer": "user", SOFT: value, **extra}
    preview = client.get(reverse("config_preview"), params, **SAVE_PANEL).content.decode()
    return client.post(reverse("config_save"), {**params, "sha256": _hash(preview)}, **SAVE_PANEL)


def _way_back(body: str) -> tuple[str, str]:
    """The report's way-back link (its URL and its words)."""
    found = re.search(r'<a class="button way-back" id="way-back" href="([^"]+)"[^>]*>([^<]+)</a>', body)
    assert found, body
    return html.unescape(found.group(1)), found.group(2)


def _confirm_restore(client: Client, url: str):
    """Open a restore's preview, check it wrote nothing, and confirm it."""
    preview = client.get(url, **SAVE_PANEL)
    assert preview.status_code == 200
    body = preview.content.decode()
    version = re.search(r'name="version" value="([^"]+)"', body).group(1)
    layer = re.search(r'name="layer" value="([^"]+)"', body).group(1)
    form = {"layer": layer, "version": version, "sha256": _hash(body), "thread": THREAD}
    return body, client.post(reverse("config_restore"), form, **SAVE_PANEL)


def test_a_save_shows_the_saved_state_and_links_to_the_version_it_replaced(
    operator_client: Client, sample_home: Path
) -> None:
    user = sample_home / "runtime.json"
    user.write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 2500}}}))
    response = _save(operator_client, "2000")
    assert response.status_code == 200
    body = response.content.decode()
    backup = next(_versions(sample_home)).name
    assert f"Saved <code>{user}</code>; the previous version is kept as <code>{backup}</code>." in body
    url, words = _way_back(body)
    assert words == "Restore the previous version…"
    assert url == f"{reverse('config_restore_preview')}?layer=user&version={backup}&thread={THREAD}"
    # The editor comes along, swapped out of band: its badge and "now" are the file's new ones.
    editor = re.search(r'<form id="config-editor"[^>]*hx-swap-oob="true".*?</form>', body, re.S)
    assert editor, "the save answer brings the editor"
    row = re.search(
        r'<div class="cfg-row[^"]*">\s*<label for="cfg-memory-pruning-soft_trim_chars">.*?</div>\s*</div>',
        editor.group(0),
        re.S,
    )
    assert row and "layer-user" in row.group(0) and "now 2,000" in row.group(0), row

    # The way back: a diff first, nothing written until confirmed.
    preview, restored = _confirm_restore(operator_client, url)
    assert re.search(
        r"<code>memory.pruning.soft_trim_chars</code></td><td>2,000</td><td><strong>2,500", preview
    )
    assert restored.status_code == 200
    assert json.loads(user.read_text()) == {"memory": {"pruning": {"soft_trim_chars": 2500}}}
    report = restored.content.decode()
    newest = sorted(_versions(sample_home), key=lambda p: p.stat().st_ctime_ns)[-1].name
    assert f"the version it replaced is kept as <code>{newest}</code>." in report
    url, words = _way_back(report)
    assert words == "Restore the version it replaced…" and f"version={newest}" in url
    # ... and the restore's own way back puts the 2,000 back.
    _, again = _confirm_restore(operator_client, url)
    assert again.status_code == 200
    assert json.loads(user.read_text()) == {"memory": {"pruning": {"soft_trim_chars": 2000}}}


def test_back_to_no_file_and_forward_again(operator_client: Client, sample_home: Path) -> None:
    user = sample_home / "runtime.json"
    body = _save(operator_client, "1000").content.decode()
    assert f"Saved <code>{user}</code>, a new file: there was none before." in body
    url, words = _way_back(body)
    assert words == "Back to no file…" and url.endswith(f"&thread={THREAD}") and ".absent" in url
    history = operator_client.get(reverse("config"), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="history")
    assert re.search(
        r"<strong>no file</strong> <span[^>]*>— the save at [0-9: -]+ UTC created it",
        history.content.decode(),
    )

    preview, removed = _confirm_restore(operator_client, url)
    assert f"removes <code>{user}</code>" in preview and "Remove the file (back to no file)" in preview
    assert removed.status_code == 200 and not user.exists()
    report = removed.content.decode()
    assert f"Removed <code>{user}</code>: back to no file" in report
    url, words = _way_back(report)
    assert words == "Put the removed file back…"
    entry = AuditEntry.objects.filter(action=AuditEntry.Action.CONFIG_RESTORE).get()
    assert (
        "(back to no file: removed the file); memory.pruning.soft_trim_chars: 1,000 → (removed)"
        in entry.message
    )

    # With no file now, "no file" is nothing to restore: said, and no button.
    marker = next(p.name for p in _versions(sample_home) if p.name.endswith(".absent"))
    nothing = operator_client.get(
        reverse("config_restore_preview"), {"layer": "user", "version": marker}, **SAVE_PANEL
    ).content.decode()
    assert "does not exist: it is already “no file”." in nothing and "Remove the file" not in nothing

    _, back = _confirm_restore(operator_client, url)
    assert back.status_code == 200
    assert json.loads(user.read_text()) == {"memory": {"pruning": {"soft_trim_chars": 1000}}}


def test_a_restore_preview_of_an_unknown_version_says_so(viewer_client: Client, sample_home: Path) -> None:
    response = viewer_client.get(
        reverse("config_restore_preview"),
        {"layer": "user", "version": "runtime.json.bak-20200101T000000"},
        **SAVE_PANEL,
    )
    assert response.status_code == 200
    assert "is not a saved version of" in response.content.decode()
    malformed = viewer_client.get(
        reverse("config_restore_preview"), {"layer": "user", "version": "../runtime.json"}, **SAVE_PANEL
    )
    assert malformed.status_code == 400 and "Cannot restore" in malformed.content.decode()


def test_the_audit_log_says_what_a_key_the_file_did_not_set_was(
    operator_client: Client, sample_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _save(operator_client, "1000")
    saved = AuditEntry.objects.get(action=AuditEntry.Action.CONFIG_SAVE, result=AuditEntry.Result.APPLIED)
    assert saved.message == f"{SOFT}: default 3,000 → 1,000"
    # Into the project layer while the user layer sets it: that layer and its value.
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("MYCEL_PROJECT_DIR", str(project))
    _save(operator_client, "1500", layer="project")
    entry = AuditEntry.objects.filter(action=AuditEntry.Action.CONFIG_SAVE).order_by("-id").first()
    assert entry is not None and entry.message == f"{SOFT}: (not set; user layer 1,000) → 1,500"
    assert "None" not in "".join(AuditEntry.objects.values_list("message", flat=True))


def test_a_working_folder_from_another_machine_is_no_save_target(
    operator_client: Client, sample_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    page = operator_client.get(reverse("config"), {"thread": THREAD}).content.decode()
    assert re.search(r'<input type="radio" name="layer" value="project" disabled', page)
    assert "/home/operator/.leon/workspaces/morel-lab does not exist on this machine" in page
    assert "MYCEL_PROJECT_DIR" in page
    chosen = operator_client.get(reverse("config"), {"thread": THREAD, "layer": "project"}).content.decode()
    assert re.search(r'<input type="radio" name="layer" value="user" checked>', chosen)
    params = {"thread": THREAD, "layer": "project", SOFT: "1000"}
    preview = operator_client.get(reverse("config_preview"), params, **SAVE_PANEL).content.decode()
    assert "Not saved: /home/operator/.leon/workspaces/morel-lab does not exist on this machine" in preview
    response = operator_client.post(reverse("config_save"), {**params, "sha256": ""}, **SAVE_PANEL)
    assert response.status_code == 400
    assert not Path("/home/operator/.leon/workspaces/morel-lab").exists()
    # MYCEL_PROJECT_DIR naming a missing folder is said as such.
    monkeypatch.setenv("MYCEL_PROJECT_DIR", str(tmp_path / "gone"))
    page = operator_client.get(reverse("config"), {"thread": THREAD}).content.decode()
    assert f"MYCEL_PROJECT_DIR names {tmp_path / 'gone'}, which does not exist on this machine." in page


def _checkpoints(home: Path) -> list[str]:
    with sqlite3.connect(home / "leon.db") as conn:
        rows = conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (THREAD,)
        )
        return [row[0] for row in rows]


def _apply(client: Client, preview_url: str, apply_url: str) -> str:
    preview = client.get(preview_url).content.decode()
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', preview).group(1)
    response = client.post(apply_url, {"fingerprint": fingerprint}, follow=True)
    assert response.status_code == 200
    return response.content.decode()


def test_a_rollback_banner_links_to_its_undo_and_the_thread_is_not_running(
    operator_client: Client, sample_home: Path
) -> None:
    ids = _checkpoints(sample_home)
    target = ids[10]
    page = _apply(
        operator_client,
        reverse("rollback_preview", args=[THREAD, target]),
        reverse("rollback_apply", args=[THREAD, target]),
    )
    rollback = _checkpoints(sample_home)[-1]
    # The dashboard wrote the head a moment ago: not an agent at work.
    live = operator_client.get(reverse("thread_live", args=[THREAD]), HTTP_HX_REQUEST="true").content.decode()
    assert 'id="running-mark"' not in live, live
    assert re.search(r'id="head-written-here">Rolled back by operator at [0-9: -]+ UTC', live)
    banner = re.search(r'<ul class="flash" role="status">(.*?)</ul>', page, re.S).group(1)
    assert f'<a class="way-back" href="{reverse("undo_preview", args=[THREAD])}">Undo…</a>' in banner

    page = _apply(
        operator_client, reverse("undo_preview", args=[THREAD]), reverse("undo_apply", args=[THREAD])
    )
    banner = re.search(r'<ul class="flash" role="status">(.*?)</ul>', page, re.S).group(1)
    redo = reverse("rollback_preview", args=[THREAD, rollback])
    assert f'<a class="way-back" href="{redo}">Redo the rollback…</a>' in banner
    assert 'id="running-mark"' not in page
    assert re.search(r'id="head-written-here">Rollback undone by operator at', page)


def test_a_kept_versions_keys_are_text_and_its_secrets_stay_hidden(
    viewer_client: Client, sample_home: Path
) -> None:
    user = sample_home / "runtime.json"
    user.write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 2000}}}))
    kept = sample_home / ".history" / "runtime.json.bak-20261201T100000"
    kept.parent.mkdir()
    kept.write_text(
        json.dumps(
            {"<img src=x onerror=alert(1)>": "<script>alert(2)</script>", "api_key": "sk-live-4f9a8b7c6d5e"}
        )
    )
    for response in (
        viewer_client.get(reverse("config")),
        viewer_client.get(
            reverse("config_restore_preview"), {"layer": "user", "version": kept.name}, **SAVE_PANEL
        ),
    ):
        body = response.content.decode()
        assert response.status_code == 200
        assert "&lt;img src=x onerror=alert(1)&gt;" in body and "<img src=x" not in body
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in body and "<script>alert(2)" not in body
        assert "api_key" in body and "sk-live-4f9a8b7c6d5e" not in body
    assert "Only operators may restore" in body

"""Paths taken from the data (spill notices, tool call ids, thread workspaces, config layers) stay in their folders.

Outside files hold a marker; no response may ever contain it, whatever the URL or the data says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.demo import MemberRow, ThreadsTableRow, write_threads_table
from tests.dashboard.planting import plant_thread
from tests.hostile.pages import body_of
from tests.support.mycel_env import point_env_at

OUTSIDE = "OUTSIDE-CONTENT-must-never-be-served"
SPILL_THREAD = "m_paths-1"
DOTTED_THREAD = "m_paths-2"
NOTICE = (
    "Output too large (99999 bytes). Full output saved to: {path}\n\nPreview (first 2048 bytes):\nabc\n..."
)


def _call(tool_call_id: str, notice_path: str) -> list:
    return [
        AIMessage(content="", id=f"a-{tool_call_id}", tool_calls=[{"id": tool_call_id, "name": "Read", "args": {}}]),
        ToolMessage(content=NOTICE.format(path=notice_path), tool_call_id=tool_call_id, id=f"t-{tool_call_id}"),
    ]  # fmt: skip


@pytest.fixture
def paths_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "paths-home"
    workspace = home / "workspaces" / "ws"
    results = workspace / ".leon" / "tool-results"
    results.mkdir(parents=True)
    outside = tmp_path / "outside"
    (outside / ".leon" / "tool-results").mkdir(parents=True)
    secret = outside / "secret.txt"
    secret.write_text(OUTSIDE)
    (outside / "call_dirlink.txt").write_text(OUTSIDE)
    (outside / "runtime.json").write_text(
        json.dumps({"memory": {"pruning": {"protect_recent": 7}}, "note": OUTSIDE})
    )
    (results / "call_good.txt").write_text("the real spilled output")
    (results / "call_link.txt").symlink_to(secret)
    # A second workspace whose tool-results folder is a link to the outside folder.
    linked = home / "workspaces" / "linked"
    (linked / ".leon").mkdir(parents=True)
    (linked / ".leon" / "tool-results").symlink_to(outside)

    messages = [
        HumanMessage(content="go", id="h1"),
        *_call("call_good", f"{results}/call_good.txt"),
        *_call("call_link", f"{results}/call_link.txt"),
        *_call("call_dots", f"{results}/../../../../outside/secret.txt"),
        *_call("call_abs", str(secret)),
        *_call("call_etc", "/etc/passwd"),
        *_call("call_dirlink", f"{linked}/.leon/tool-results/call_dirlink.txt"),
        *_call("../../outside/secret", f"{results}/../../outside/secret.txt"),
        AIMessage(content="done", id="a-end"),
    ]
    plant_thread(home / "leon.db", SPILL_THREAD, messages, metadata={"model": "gpt-4o-mini"})
    plant_thread(
        home / "leon.db",
        DOTTED_THREAD,
        [HumanMessage(content="x", id="x")],
        metadata={"model": "gpt-4o-mini"},
    )
    write_threads_table(
        home / "leon.db",
        [
            ThreadsTableRow(SPILL_THREAD, "m_paths", "local", None, str(workspace), None, None, 1, 0, 1.0),
            ThreadsTableRow(DOTTED_THREAD, "m_paths", "local", None, f"{workspace}/../../../outside", None, None, 0, 1, 1.0),
        ],
        [MemberRow("m_paths", "Paths", "mycel_agent", None, None, None, None, 1.0, 1.0, 3)],
    )  # fmt: skip
    point_env_at(monkeypatch, home)
    return {"home": home, "workspace": workspace, "outside": outside, "secret": secret}


def _get(client: Client, url: str) -> tuple[int, str]:
    response = client.get(url)
    return response.status_code, body_of(response)


def test_a_spill_inside_its_folder_is_served(viewer_client: Client, paths_home: dict[str, Path]):
    status, body = _get(viewer_client, reverse("spill", args=[SPILL_THREAD, "call_good"]))
    assert status == 200 and "the real spilled output" in body


@pytest.mark.parametrize(
    "tool_call_id",
    [
        "call_link",  # a symlink in tool-results pointing at an outside file
        "call_dots",  # the notice climbs out with ..
        "call_abs",  # the notice names an absolute outside path
        "call_etc",  # the notice names /etc/passwd
        "call_dirlink",  # the tool-results folder itself is a link outside
        "secret",
    ],
)
def test_spill_paths_from_the_data_cannot_leave_the_folder(
    viewer_client: Client, paths_home: dict[str, Path], tool_call_id: str
):
    status, body = _get(viewer_client, reverse("spill", args=[SPILL_THREAD, tool_call_id]))
    assert status in (200, 404)
    assert OUTSIDE not in body and "root:x:0:0" not in body
    if status == 200:
        assert 'class="problem"' in body  # said plainly, not served


def test_a_hard_link_or_a_fifo_in_the_spill_folder_is_not_served(
    viewer_client: Client, paths_home: dict[str, Path]
):
    import os

    results = paths_home["workspace"] / ".leon" / "tool-results"
    # A hard link is the outside file itself (same inode): no symlink anywhere for a resolve() to catch.
    (results / "call_link.txt").unlink()
    (results / "call_link.txt").hardlink_to(paths_home["secret"])
    status, body = _get(viewer_client, reverse("spill", args=[SPILL_THREAD, "call_link"]))
    assert OUTSIDE not in body
    assert status == 200 and 'class="problem"' in body  # said plainly, not served
    # A named pipe would block the worker reading it: refused without opening it for a read that waits.
    (results / "call_link.txt").unlink()
    os.mkfifo(results / "call_link.txt")
    status, body = _get(viewer_client, reverse("spill", args=[SPILL_THREAD, "call_link"]))
    assert status == 200 and 'class="problem"' in body


@pytest.mark.parametrize(
    "raw_id",
    [
        "..%2f..%2f..%2foutside%2fsecret",
        "..%2f..%2fetc%2fpasswd",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "%2fetc%2fpasswd",
        "..",
        ".call_good",
        "call_good%00",
        "..%5c..%5coutside%5csecret",
        "call_good.txt%2f..%2f..%2f..%2f..%2foutside%2fsecret",
    ],
)
def test_url_encoded_traversal_in_the_url_is_refused(
    viewer_client: Client, paths_home: dict[str, Path], raw_id: str
):
    status, body = _get(viewer_client, f"/threads/{SPILL_THREAD}/spill/{raw_id}/")
    assert status in (200, 400, 404)
    assert OUTSIDE not in body and "root:x:0:0" not in body
    assert "the real spilled output" not in body or raw_id == "call_good"


def test_the_thread_page_links_spills_only_by_plain_ids(viewer_client: Client, paths_home: dict[str, Path]):
    status, body = _get(viewer_client, reverse("thread", args=[SPILL_THREAD]))
    assert status == 200 and OUTSIDE not in body
    for link in re.findall(rf"/threads/{SPILL_THREAD}/spill/([^/\"]+)/", body):
        assert ".." not in link and "%2F" not in link.upper()


def test_config_layers_cannot_write_or_show_outside(operator_client: Client, paths_home: dict[str, Path]):
    workspace, outside = paths_home["workspace"], paths_home["outside"]
    before = (outside / "runtime.json").read_bytes()
    # The project layer file is a link to a file outside the workspace.
    (workspace / ".leon" / "runtime.json").symlink_to(outside / "runtime.json")
    # A "backup" in the history folder that is a link to an outside file.
    history = workspace / ".leon" / ".history"
    history.mkdir()
    (history / "runtime.json.bak-20200101T000000").symlink_to(paths_home["secret"])

    page = body_of(operator_client.get(f"{reverse('config')}?thread={SPILL_THREAD}"))
    assert "runtime.json.bak-20200101T000000" not in page  # a link is not offered as a version
    save = {
        "thread": SPILL_THREAD,
        "layer": "project",
        "sha256": "",
        "memory.pruning.soft_trim_chars": "1500",
    }
    response = operator_client.post(reverse("config_save"), save)
    assert response.status_code in (400, 409)
    assert (outside / "runtime.json").read_bytes() == before

    restore = {"thread": SPILL_THREAD, "layer": "project", "version": "runtime.json.bak-20200101T000000"}
    response = operator_client.post(reverse("config_restore"), restore)
    assert response.status_code in (400, 409) and OUTSIDE not in body_of(response)
    for version in ("../../outside/secret.txt", "/etc/passwd", "runtime.json.bak-1/../../x"):
        response = operator_client.post(reverse("config_restore"), {**restore, "version": version})
        assert response.status_code == 400
    assert (outside / "runtime.json").read_bytes() == before
    assert (workspace / ".leon" / "runtime.json").is_symlink()


def test_a_workspace_with_dots_is_never_written(operator_client: Client, paths_home: dict[str, Path]):
    outside = paths_home["outside"]
    before = sorted(p.name for p in (outside / ".leon").iterdir())
    page = body_of(operator_client.get(f"{reverse('config')}?thread={DOTTED_THREAD}"))
    assert OUTSIDE not in page
    save = {
        "thread": DOTTED_THREAD,
        "layer": "project",
        "sha256": "",
        "memory.pruning.soft_trim_chars": "1500",
    }
    response = operator_client.post(reverse("config_save"), save)
    assert response.status_code in (400, 409)
    assert sorted(p.name for p in (outside / ".leon").iterdir()) == before
    assert not (outside / ".leon" / "runtime.json").exists()


def test_a_user_layer_linked_to_a_non_json_file_shows_a_message_not_its_content(
    viewer_client: Client, paths_home: dict[str, Path]
):
    user = paths_home["home"] / "runtime.json"
    user.symlink_to(paths_home["secret"])
    status, page = _get(viewer_client, reverse("config"))
    assert status == 200
    assert OUTSIDE not in page
    assert "not valid JSON" in page

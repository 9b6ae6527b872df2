"""Rollback and undo through the web: preview, permissions, CSRF, stale previews, audit."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from django.test import Client

from mycel_dashboard.models import AuditEntry

THREAD = "m_npRsndIka9dx-2"


def _ids(home: Path) -> list[str]:
    with sqlite3.connect(home / "leon.db") as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (THREAD,)
            )
        ]


def _fingerprint(body: str) -> str:
    found = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', body)
    assert found, "the preview carries the head fingerprint"
    return found.group(1)


def test_preview_shows_the_impact_report_without_writing(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    response = operator_client.get(f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Messages that leave the active history" in body
    assert "Nothing is deleted" in body
    assert "File operations after the target, <strong>not reverted</strong>: 0" in body
    assert _ids(sample_home) == ids


def test_preview_partial_for_htmx_varies_on_hx_request(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    response = operator_client.get(
        f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/", HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert "HX-Request" in response["Vary"]
    assert b'id="rollback-report"' in response.content
    assert b"<html" not in response.content


def test_operator_rolls_back_then_undoes(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    preview = operator_client.get(f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/").content.decode()
    response = operator_client.post(
        f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/apply/", {"fingerprint": _fingerprint(preview)}
    )
    assert response.status_code == 302
    after = _ids(sample_home)
    assert len(after) == len(ids) + 1
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.thread_id, entry.actor) == (
        "rollback",
        "applied",
        THREAD,
        "operator",
    )
    assert entry.after["previous_head_checkpoint_id"] == ids[-1]
    assert entry.after["new_head_checkpoint_id"] == after[-1]

    undo_preview = operator_client.get(f"/threads/{THREAD}/undo/").content.decode()
    response = operator_client.post(
        f"/threads/{THREAD}/undo/apply/", {"fingerprint": _fingerprint(undo_preview)}
    )
    assert response.status_code == 302
    assert len(_ids(sample_home)) == len(ids) + 2
    assert AuditEntry.objects.filter(action="undo", result="applied").count() == 1


def test_a_viewer_cannot_roll_back(viewer_client, sample_home: Path):
    ids = _ids(sample_home)
    preview = viewer_client.get(f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/").content.decode()
    assert "Only operators may rollback" in preview
    response = viewer_client.post(
        f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/apply/", {"fingerprint": "0" * 16}
    )
    assert response.status_code == 403
    assert _ids(sample_home) == ids


def test_a_forged_post_without_csrf_is_refused(operator, sample_home: Path):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    ids = _ids(sample_home)
    response = client.post(
        f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/apply/", {"fingerprint": "0" * 16}
    )
    assert response.status_code == 403
    assert _ids(sample_home) == ids


def test_a_stale_preview_is_refused_and_audited(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    stale = _fingerprint(
        operator_client.get(f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/").content.decode()
    )
    # Another operator rolls back first: the thread's head moves.
    fresh = _fingerprint(
        operator_client.get(f"/threads/{THREAD}/checkpoints/{ids[5]}/rollback/").content.decode()
    )
    operator_client.post(f"/threads/{THREAD}/checkpoints/{ids[5]}/rollback/apply/", {"fingerprint": fresh})
    response = operator_client.post(
        f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/apply/", {"fingerprint": stale}
    )
    assert response.status_code == 409
    assert "changed since you previewed" in response.content.decode()
    assert len(_ids(sample_home)) == len(ids) + 1
    assert AuditEntry.objects.filter(result="refused").count() == 1


@pytest.mark.parametrize(
    "path", ["/threads/nope/checkpoints/x/rollback/", "/threads/{thread}/checkpoints/nope/rollback/"]
)
def test_unknown_thread_or_checkpoint_is_404(operator_client, sample_home: Path, path: str):
    assert operator_client.get(path.format(thread=THREAD)).status_code == 404


def test_undo_without_a_rollback_says_so(operator_client, sample_home: Path):
    response = operator_client.get(f"/threads/{THREAD}/undo/")
    assert response.status_code == 200
    assert "Nothing to undo" in response.content.decode()
    assert (
        operator_client.post(f"/threads/{THREAD}/undo/apply/", {"fingerprint": "0" * 16}).status_code == 409
    )


def test_rollback_is_post_only(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    assert operator_client.get(f"/threads/{THREAD}/checkpoints/{ids[3]}/rollback/apply/").status_code == 405


def _agent_step_from(home: Path, loaded_id: str) -> None:
    """Mycel's next checkpoint, as its saver writes it under the checkpoint its run loaded."""
    from langgraph.checkpoint.base.id import uuid6
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(str(home / "leon.db")) as saver:
        saver.is_setup = True  # never let the saver alter Mycel's schema
        loaded = saver.get_tuple(
            {"configurable": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": loaded_id}}
        )
        assert loaded is not None
        step = int(loaded.metadata.get("step") or 0) + 1
        checkpoint = {**loaded.checkpoint, "id": str(uuid6(clock_seq=step))}
        config = {"configurable": {"thread_id": THREAD, "checkpoint_ns": "", "checkpoint_id": loaded_id}}
        saver.put(config, checkpoint, {"source": "loop", "step": step, "parents": {}}, {})


def _roll_back(client: Client, target: str) -> None:
    preview = client.get(f"/threads/{THREAD}/checkpoints/{target}/rollback/").content.decode()
    response = client.post(
        f"/threads/{THREAD}/checkpoints/{target}/rollback/apply/", {"fingerprint": _fingerprint(preview)}
    )
    assert response.status_code == 302


def test_a_rollback_overtaken_by_a_run_that_loaded_the_old_head_is_flagged(
    operator_client, sample_home: Path
):
    ids = _ids(sample_home)
    _roll_back(operator_client, ids[10])
    page = operator_client.get(f"/threads/{THREAD}/").content.decode()
    assert 'id="rollback-overtaken"' not in page and "written by a rollback" in page

    _agent_step_from(sample_home, ids[-1])  # the run had loaded the head the rollback replaced
    page = operator_client.get(f"/threads/{THREAD}/").content.decode()
    warning = page[page.index('id="rollback-overtaken"') :].split("</p>")[0]
    assert "no longer active" in warning
    assert ids[-1] in warning and ids[10] in warning
    assert f"/threads/{THREAD}/checkpoints/{ids[10]}/rollback/" in warning


def test_a_run_that_continues_from_the_rollback_is_not_flagged(operator_client, sample_home: Path):
    ids = _ids(sample_home)
    _roll_back(operator_client, ids[10])
    _agent_step_from(sample_home, _ids(sample_home)[-1])
    page = operator_client.get(f"/threads/{THREAD}/").content.decode()
    assert 'id="rollback-overtaken"' not in page

"""The per-call page: Mycel's exact request at call N, from the record (sample home: Mycel's own rows)."""

from __future__ import annotations

import html
from pathlib import Path

from django.urls import reverse

from memory_core.demo import write_demo_home
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.mycel_env import point_env_at

COMPACTING = "m_0D8EzdJXJhk9-2"
TOOL_HEAVY = "m_npRsndIka9dx-2"


def _body(client, thread_id: str, number: int) -> str:
    response = client.get(reverse("call", args=[thread_id, number]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_split_turn_call_shows_the_stored_summary_then_the_kept_messages(
    viewer_client, sample_home: Path
) -> None:
    reader = MycelReader(resolve_locations())
    row = next(r for r in reader.list_summaries(COMPACTING).value if r.compacted_at == 15)
    assert row.is_split_turn
    body = _body(viewer_client, COMPACTING, 8)  # the AI message at index 15 is the 8th call
    assert "compacted before this call" in body
    assert html.escape(row.summary_text[:200]) in body  # its real text, split-turn part included
    assert "Turn Context (split turn)" in body
    # system prompt (not stored) + summary + messages[12:15]
    request = body[body.index('id="request"') :]
    assert request.count('<li class="msg ') == 1 + 1 + (15 - row.compact_up_to_index)
    # Before it, the two requests Mycel main's summariser got (the history, then the split turn's prefix):
    # roles and sizes as `calls --json` gives them, Mycel's prompt named with its length, not copied.
    summariser = body[body.index('id="summariser"') : body.index('id="request"')]
    assert "the split turn&#x27;s prefix" in summariser or "the split turn's prefix" in summariser
    assert summariser.count('<li class="msg ') == 4
    assert "Mycel&#x27;s SUMMARY_PROMPT: 393 characters" in summariser
    for origin in range(row.compact_up_to_index, 15):
        assert f'#msg-{origin}"' in body
    assert 'href="#msg-0"' not in body and '#msg-11"' not in body
    assert "System prompt" in body and "not stored" in body


def test_a_call_shows_its_pruned_results_with_their_badges(viewer_client, sample_home: Path) -> None:
    last = _body(viewer_client, TOOL_HEAVY, 13)
    assert "soft-trimmed 6,431 → 3,019 chars" in last
    assert "[...trimmed...]" in last
    assert "provider" in last.lower() and "tiktoken" in last


def test_a_compaction_whose_summary_was_not_stored_says_so(
    viewer_client, tmp_path: Path, monkeypatch
) -> None:
    folder = tmp_path / "demo"
    manifest = write_demo_home(folder, seed=7)
    point_env_at(monkeypatch, folder)
    thread = manifest.thread("unsaved_summary")
    (lost,) = thread.summaries_not_stored
    messages = MycelReader(resolve_locations()).get_state(thread.thread_id).value.messages
    number = [i for i, m in enumerate(messages) if m.type.value == "ai"].index(lost) + 1
    body = _body(viewer_client, thread.thread_id, number)
    assert "compacted, summary not stored" in body and "(text not stored)" in body
    after = _body(viewer_client, thread.thread_id, number + 1)
    assert "not stored: Mycel compacted but saved no row" in after  # its cache served the next call


def test_a_call_that_does_not_exist_is_a_404(viewer_client, sample_home: Path) -> None:
    assert viewer_client.get(f"/threads/{COMPACTING}/calls/0/").status_code == 404
    missing = viewer_client.get(f"/threads/{COMPACTING}/calls/13/")
    assert missing.status_code == 404
    assert viewer_client.get("/threads/nobody/calls/1/").status_code == 404

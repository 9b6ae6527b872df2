from __future__ import annotations

import json
import re
from pathlib import Path

from tests.support.mycel_env import write_config_in_force

HTMX = {"HTTP_HX_REQUEST": "true"}
TOOL_HEAVY = "m_npRsndIka9dx-2"
COMPACTED = "m_0D8EzdJXJhk9-2"


def _figure(body: str) -> dict:
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found, "the chart's json_script is missing"
    return json.loads(found.group(1))


def test_thread_page_draws_the_context_fill_chart(viewer_client, sample_home: Path):
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-plotly="fill-figure"' in body
    figure = _figure(body)
    names = [trace["name"] for trace in figure["data"]]
    assert {"stored (Mycel estimate)", "after pruning", "sent to the model"} <= set(names)
    assert "provider input tokens" in names
    assert len(figure["data"][0]["x"]) == 13  # one point per AI message
    # each point knows where its call sits in the timeline, and its call's page (the click target)
    anchor, url, call_url, share = figure["data"][0]["customdata"][0]
    assert anchor.startswith("msg-") and url.endswith(f"#{anchor}")
    assert call_url.endswith("/calls/1/") and share.endswith("%")
    assert "charts.js" in body and "plotly.min.js" in body
    assert "HX-Request" in response["Vary"]


def test_compacted_thread_chart_marks_compaction_and_the_trigger(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{COMPACTED}/").content.decode()
    figure = _figure(body)
    stars = next(t for t in figure["data"] if t["name"] == "compacted (summary stored)")
    # Mycel's 7 summary rows were written at calls whose inputs held 11, 13, …, 23 messages.
    assert [c[0] for c in stars["customdata"]] == [f"msg-{n}" for n in range(11, 24, 2)]
    limit = 5500
    assert _lines(figure) == [int(limit * 0.7), limit]
    # every call from the first compaction on compacted again: Mycel main's re-compaction
    assert [s for s in figure["layout"]["shapes"] if s["name"] == "recompaction"]
    assert "It re-compacted at every call from call 6 to 12." in body


def _lines(figure: dict) -> list[int]:
    """The trigger and limit lines' heights."""
    return [s["y0"] for s in figure["layout"]["shapes"] if s["name"] in ("trigger", "limit")]


def _protect_only_the_last_step(home: Path) -> None:
    write_config_in_force(home / "runtime.json", json.dumps({"memory": {"pruning": {"protect_recent": 1}}}))


def test_tool_results_carry_badges_with_the_rule_responsible(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    assert "soft-trimmed 6,431 → 3,019 chars" in body
    assert "soft_trim_chars=3000: 6431 &gt; 3000" in body
    # Mycel's default protect_recent=3 keeps the 12,731-char result whole: it belongs to the third
    # tool-calling AI step from the end.
    assert "protected by AI step #3 from the end" in body
    assert "(would be cleared)" in body
    assert "badge unchanged" in body


def test_the_users_runtime_config_decides_the_badges(viewer_client, sample_home: Path):
    _protect_only_the_last_step(sample_home)
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    assert "hard-cleared (was 12,731 chars)" in body
    assert "hard_clear_threshold=10000: 12731 &gt; 10000" in body


def test_spilled_result_links_to_the_spill_file(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    link = f"/threads/{TOOL_HEAVY}/spill/toolu_i2HMWbiZ2p2J7AfAvuVmbjGJ/"
    assert link in body
    spill = viewer_client.get(link)
    assert spill.status_code == 200
    spill_file = sample_home / "workspaces/morel-lab/.leon/tool-results/toolu_i2HMWbiZ2p2J7AfAvuVmbjGJ.txt"
    body = spill.content.decode()
    # 59,668 bytes, as the formatting layer writes them (decimal units), the exact count on hover
    assert (
        f'<code>{spill_file}</code> (<span title="59,668 bytes">59.7 KB</span>); the checkpoint keeps only a preview.'
        in body
    )
    assert spill_file.read_text().splitlines()[-1] in body  # the whole file, not the preview


def test_long_results_are_collapsed_with_the_full_text_at_hand(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    assert '<details class="long">' in body
    assert "show all 12,731 characters" in body


def test_sent_view_is_an_htmx_partial_with_the_pruned_text(viewer_client, sample_home: Path):
    _protect_only_the_last_step(sample_home)
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/?view=sent", **HTMX)
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="timeline"')
    assert "<html" not in body
    assert "[Tool output cleared — 12731 chars]" in body
    assert "[...trimmed...]" in body
    assert "HX-Request" in response["Vary"]


def test_stored_view_keeps_the_original_text(viewer_client, sample_home: Path):
    _protect_only_the_last_step(sample_home)
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?view=stored", **HTMX).content.decode()
    assert "[Tool output cleared — 12731" not in body
    assert "hard-cleared (was 12,731 chars)" in body


def test_history_restore_of_a_timeline_url_gets_the_full_page(viewer_client, sample_home: Path):
    response = viewer_client.get(
        f"/threads/{TOOL_HEAVY}/?view=sent", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in response.content.decode()


def test_summary_card_sits_at_the_compaction_boundary(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{COMPACTED}/").content.decode()
    assert "Conversation summary" in body
    assert "compact_up_to_index 16" in body
    assert "6 earlier summaries (inactive)" in body
    assert "compact_up_to_index 16 · at 21 messages · 2026-11-30 10:12:27 · split turn" in body
    card = body.index('id="summary"')
    assert body.index('id="msg-15"') < card < body.index('id="msg-16"')
    assert "badge summarised" in body


def test_sent_view_of_a_compacted_thread_starts_with_the_summary(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{COMPACTED}/?view=sent", **HTMX).content.decode()
    assert 'id="msg-3"' not in body  # folded into the summary
    assert body.index('id="summary"') < body.index('id="msg-16"')


def test_checkpoint_rail_marks_the_active_checkpoint(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{COMPACTED}/").content.decode()
    assert body.count('class="badge ok">active<') == 1
    assert len(re.findall(rf'href="/threads/{COMPACTED}/checkpoints/[^/]+/"', body)) == 37


def test_panels_are_loaded_lazily(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    for name in ("sandbox", "queue", "file-operations", "run-events", "integrity"):
        assert f'hx-get="/threads/{TOOL_HEAVY}/panels/{name}/" hx-trigger="load"' in body
        assert f'<a href="/threads/{TOOL_HEAVY}/panels/{name}/">' in body


def test_unknown_thread_is_a_404_page(viewer_client, sample_home: Path):
    response = viewer_client.get("/threads/no-such-thread/")
    assert response.status_code == 404
    assert "no-such-thread" in response.content.decode()


def test_full_message_text_is_one_click_away(viewer_client, sample_home: Path):
    _protect_only_the_last_step(sample_home)
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    index = re.search(r'id="msg-(\d+)"[^>]*>(?:(?!</li>).)*hard-cleared', body, re.S).group(1)
    stored = viewer_client.get(f"/threads/{TOOL_HEAVY}/messages/{index}/").content.decode()
    assert "12,731 characters" in stored
    sent = viewer_client.get(f"/threads/{TOOL_HEAVY}/messages/{index}/?view=sent", **HTMX).content.decode()
    assert "[Tool output cleared — 12731 chars]" in sent
    assert "<html" not in sent
    assert viewer_client.get(f"/threads/{TOOL_HEAVY}/messages/9999/").status_code == 404


def test_bad_timeline_parameters_are_reported(viewer_client, sample_home: Path):
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/?view=bogus&page=abc")
    assert response.status_code == 200
    body = response.content.decode()
    assert (
        "Ignored view &#x27;bogus&#x27;: Select a valid choice. bogus is not one of the available choices."
        in body
    )
    assert "Ignored page &#x27;abc&#x27;: Enter a whole number." in body


def test_context_limit_override_moves_the_lines(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?limit=10000").content.decode()
    assert _lines(_figure(body)) == [7000, 10000]


def test_a_2000_message_timeline_renders_one_page_at_a_time():
    from memory_core.memory_settings import MemorySettings
    from memory_core.messages import Message, MessageType, ToolCall
    from memory_core.pruning import prune_decisions
    from mycel_dashboard.screens.thread_detail.presenter import PAGE_SIZE, View, build_timeline

    messages = []
    for turn in range(500):
        messages += [
            Message(type=MessageType.HUMAN, content=f"turn {turn}"),
            Message(type=MessageType.AI, tool_calls=(ToolCall(id=f"c{turn}", name="Bash"),)),
            Message(type=MessageType.TOOL, content="x" * 5000, tool_call_id=f"c{turn}"),
            Message(type=MessageType.AI, content="done"),
        ]
    pruning = prune_decisions(messages, settings=MemorySettings())
    timeline = build_timeline(messages, pruning=pruning, card=None, view=View.SENT, page=4, spill_url=str)
    assert timeline.pages == 2000 // PAGE_SIZE
    assert len(timeline.entries) == PAGE_SIZE
    assert timeline.entries[0].index == 3 * PAGE_SIZE
    assert any(b.kind == "soft_trimmed" for e in timeline.entries for b in e.badges)


def test_checkpoint_rail_draws_a_fork_as_its_own_lane():
    from memory_core.records import CheckpointRow
    from mycel_dashboard.screens.thread_detail.presenter import checkpoint_rail

    def row(cid: str, parent: str | None) -> CheckpointRow:
        return CheckpointRow(cid, parent, 0, "loop", None, None, None, {}, 1, 1)

    rows = [row("1", None), row("2", "1"), row("3", "2"), row("4", "1"), row("5", "4")]
    rail = {item.checkpoint.checkpoint_id: item for item in checkpoint_rail(rows, "5")}
    assert rail["5"].active and rail["5"].lane == 0 and rail["1"].fork_point == 2
    assert rail["3"].lane == rail["2"].lane == 1 and not rail["2"].on_active_line
    assert rail["2"].branch_start


def test_every_page_of_the_demo_home_renders(viewer_client, tmp_path: Path, monkeypatch):
    from memory_core.demo import write_demo_home
    from tests.support.mycel_env import point_env_at

    home = tmp_path / "demo"
    write_demo_home(home, seed=7)
    point_env_at(monkeypatch, home)
    listing = viewer_client.get("/threads/").content.decode()
    thread_ids = re.findall(r'<a class="mono" href="/threads/([^/]+)/">', listing)
    assert len(thread_ids) >= 6
    forks = 0
    for thread_id in thread_ids:
        for url in (f"/threads/{thread_id}/", f"/threads/{thread_id}/?view=sent"):
            response = viewer_client.get(url)
            assert response.status_code == 200, url
            assert 'class="problem"' not in response.content.decode(), url
        body = viewer_client.get(f"/threads/{thread_id}/").content.decode()
        forks += body.count(">fork ×")
        for checkpoint in re.findall(rf"/threads/{re.escape(thread_id)}/checkpoints/([^/]+)/", body)[:4]:
            assert viewer_client.get(f"/threads/{thread_id}/checkpoints/{checkpoint}/").status_code == 200
    assert forks >= 1  # the demo's forked thread shows its branch point on the rail


def test_unreadable_newest_checkpoint_is_reported_and_the_page_still_works(viewer_client, sample_home: Path):
    import sqlite3

    with sqlite3.connect(sample_home / "leon.db") as db:
        (head,) = db.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
            (TOOL_HEAVY,),
        ).fetchone()
        db.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (b"\xc1\xff\x00garbage", head)
        )
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/")
    body = response.content.decode()
    assert response.status_code == 200
    assert 'class="problem"' in body
    assert f"/threads/{TOOL_HEAVY}/checkpoints/{head}/" in body  # the rail still lists it
    checkpoint = viewer_client.get(f"/threads/{TOOL_HEAVY}/checkpoints/{head}/")
    assert checkpoint.status_code == 200
    assert "could not be decoded" in checkpoint.content.decode()


def test_stores_mycel_has_not_created_are_said_quietly(viewer_client, tmp_path: Path, monkeypatch) -> None:
    from django.urls import reverse

    from tests.support.mycel_env import point_env_at
    from tests.support.odd_ids import ODD_IDS, write_odd_home

    home = write_odd_home(
        tmp_path / "home"
    )  # leon.db only: no summary.db, queue.db, sandbox.db, threads table
    point_env_at(monkeypatch, home)
    body = viewer_client.get(reverse("thread", args=[ODD_IDS["slash"]])).content.decode()
    assert 'class="problem"' not in body
    quiet = re.search(r'<p class="muted small" id="absent-stores">(.*?)</p>', body, re.S)
    assert quiet is not None
    for said in ("leon.db has no threads table", "summary.db does not exist", "queue.db does not exist"):
        assert quiet.group(1).count(said) == 1


def test_a_missing_leon_db_is_still_an_alert(viewer_client, tmp_path: Path, monkeypatch) -> None:
    from django.urls import reverse

    from tests.support.mycel_env import point_env_at

    point_env_at(monkeypatch, tmp_path)  # nothing there at all
    body = viewer_client.get(reverse("thread", args=["t-1"])).content.decode()
    assert re.search(r'<p class="problem" role="alert">main: leon.db does not exist', body)


def test_a_head_without_model_calls_says_so_instead_of_an_empty_chart(viewer_client, tmp_path, monkeypatch):
    from langchain_core.messages import HumanMessage

    from tests.dashboard.planting import plant_thread
    from tests.support.mycel_env import point_env_at

    plant_thread(tmp_path / "leon.db", "lone-question", [HumanMessage("is anyone there?", id="h1")])
    point_env_at(monkeypatch, tmp_path)
    body = viewer_client.get("/threads/lone-question/").content.decode()
    assert 'id="fill-figure"' not in body
    assert "No chart: no model call yet: the active checkpoint holds no AI message." in body

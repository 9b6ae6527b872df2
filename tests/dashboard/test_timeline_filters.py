"""The Thread timeline stays readable when long: filters (what memory changed, errors, one tool) and folded
runs of messages memory left alone."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, ToolCall
from memory_core.pruning import prune_decisions
from mycel_dashboard.screens.thread_detail.presenter import (
    COLLAPSE_RUN,
    PAGE_SIZE,
    SummaryCard,
    TimelineEntry,
    TimelineFilter,
    View,
    build_timeline,
    summary_card,
)
from tests.dashboard.planting import plant_thread
from tests.support.mycel_env import point_env_at, write_config_in_force

HTMX = {"HTTP_HX_REQUEST": "true"}
TOOL_HEAVY = "m_npRsndIka9dx-2"  # 31 messages, 13 tool results
COMPACTED = "m_0D8EzdJXJhk9-2"  # 24 messages, active summary with compact_up_to_index 16
PROVIDER_ERROR = "m_npRsndIka9dx-3"  # its last run ended with "Error code: 500" before the model answered


def _items(body: str) -> list[str]:
    """Each message <li> of the timeline, as markup (nested folded runs included)."""
    return re.findall(r'<li class="msg [^"]*" id="msg-\d+".*?</header>', body, re.S)


def _indices(body: str) -> list[int]:
    return [int(i) for i in re.findall(r'<li class="msg [^"]*" id="msg-(\d+)"', body)]


def _count(body: str) -> str:
    found = re.search(r'id="timeline-matches"><strong>([^<]*)</strong>', body)
    assert found, "the filtered timeline does not say how many messages match"
    return found.group(1)


def _protect_only_the_last_step(home: Path) -> None:
    write_config_in_force(home / "runtime.json", json.dumps({"memory": {"pruning": {"protect_recent": 1}}}))


# -- filters over the sample home Mycel wrote ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("show", "badges"),
    [
        ("changed", {"soft_trimmed", "hard_cleared", "summarised"}),
        ("trimmed", {"soft_trimmed"}),
        ("cleared", {"hard_cleared"}),
    ],
)
def test_memory_filters_keep_exactly_the_messages_with_that_badge(
    viewer_client, sample_home: Path, show: str, badges: set[str]
):
    _protect_only_the_last_step(sample_home)  # one soft-trimmed and one hard-cleared result
    whole = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    expected = [
        int(re.search(r'id="msg-(\d+)"', item).group(1))
        for item in _items(whole)
        if set(re.findall(r'class="badge (\w+)"', item)) & badges
    ]
    assert expected  # the thread has such results: the filter has something to find
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?show={show}").content.decode()
    assert _indices(body) == expected
    assert _count(body) == f"{len(expected)} of 31 messages"
    assert 'class="unchanged-run"' not in body  # a filtered list is never folded


def test_summarised_filter_follows_the_compaction_boundary(viewer_client, sample_home: Path):
    stored = viewer_client.get(f"/threads/{COMPACTED}/?show=summarised").content.decode()
    assert _indices(stored) == list(range(16))  # compact_up_to_index 16: messages 0–15
    assert _count(stored) == "16 of 24 messages"
    # The model never saw them, so the sent view has nothing to show, and says where to look.
    sent = viewer_client.get(f"/threads/{COMPACTED}/?view=sent&show=summarised").content.decode()
    assert _indices(sent) == []
    assert _count(sent) == "0 of 8 messages"
    assert "No message sent to the model matches summarised." in sent
    assert "see the stored view" in sent


def test_errors_filter_finds_the_provider_error_that_ended_the_run(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{PROVIDER_ERROR}/?show=errors").content.decode()
    assert _indices(body) == [8]  # the owner's last message: the model call after it failed
    assert _count(body) == "1 of 9 messages"
    assert "The run stopped after this message with an error (run events)" in body
    assert "Error code: 500 - {&#x27;type&#x27;: &#x27;error&#x27;" in body


def test_a_filter_matching_nothing_says_so(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?show=errors").content.decode()
    assert _indices(body) == []
    assert _count(body) == "0 of 31 messages"
    assert '<li class="muted" id="timeline-empty">No message as stored matches errors.</li>' in body


def test_tool_filter_keeps_that_tools_results_and_the_calls_to_it(viewer_client, sample_home: Path):
    whole = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    for name in ("Bash", "Write", "Edit", "Read", "Grep"):  # the select offers every tool of the thread
        assert f'<option value="{name}">{name}</option>' in whole
    results = [i for i in _items(whole) if "Tool result · <code>Bash</code>" in i]
    calls = re.findall(r'id="msg-(\d+)"(?:(?!<li class="msg).)*?calls <code>Bash</code>', whole, re.S)
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?tool=Bash").content.decode()
    kept = _items(body)
    assert len(kept) == len(results) + len(set(calls)) == 12
    for item in kept:
        assert "Tool result · <code>Bash</code>" in item or item.startswith('<li class="msg ai"')
    assert _count(body) == "12 of 31 messages"
    assert "· tool Bash</span>" in body
    assert '<option value="Bash" selected>Bash</option>' in body


def test_filters_combine_with_each_other_and_the_sent_view(viewer_client, sample_home: Path):
    _protect_only_the_last_step(sample_home)
    body = viewer_client.get(
        f"/threads/{TOOL_HEAVY}/?view=sent&show=cleared&tool=Bash", **HTMX
    ).content.decode()
    assert body.lstrip().startswith('<section id="timeline"')  # the htmx part alone
    (item,) = _items(body)
    assert "Tool result · <code>Bash</code>" in item and "hard-cleared" in item
    assert "[Tool output cleared — 12731 chars]" in body  # the sent text
    assert _count(body) == "1 of 31 messages"
    # The Stored/Sent switch keeps the filter, and drops the page.
    assert 'href="/threads/m_npRsndIka9dx-2/?view=stored&amp;show=cleared&amp;tool=Bash"' in body


def test_invalid_filter_values_are_ignored_with_a_note(viewer_client, sample_home: Path):
    response = viewer_client.get(f"/threads/{TOOL_HEAVY}/?show=bogus&tool=" + "x" * 201)
    assert response.status_code == 200
    body = response.content.decode()
    assert "Ignored filter &#x27;bogus&#x27;: Select a valid choice." in body
    assert "Ignored tool &#x27;xxxx" in body and "at most 200 characters" in body
    assert len(_indices(body)) == 31  # the whole timeline, unfiltered
    assert 'id="timeline-matches"' not in body


def test_a_tool_this_thread_never_ran_matches_nothing_and_is_named(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/?tool=chat_send").content.decode()
    assert _indices(body) == []
    assert "No tool named &#x27;chat_send&#x27; ran in this thread." in body
    assert '<option value="chat_send" selected>chat_send (not in this thread)</option>' in body


# -- errors Mycel stores in the history itself ---------------------------------------------------------------


def test_errors_filter_finds_failed_tools_and_error_texts(viewer_client, tmp_path: Path, monkeypatch):
    def call(call_id: str, name: str) -> AIMessage:
        return AIMessage("", tool_calls=[{"id": call_id, "name": name, "args": {}}], id=f"ai-{call_id}")

    plant_thread(
        tmp_path / "leon.db",
        "errors-1",
        [
            HumanMessage("run the checks", id="h1"),
            call("c1", "Bash"),
            ToolMessage("exit 1: no such file", tool_call_id="c1", name="Bash", status="error", id="t1"),
            call("c2", "Read"),
            # Mycel's own synthetic result after a restart (_repair_incomplete_tool_calls)
            ToolMessage(
                "Error: task was interrupted (server restart or timeout). Results unavailable.",
                tool_call_id="c2",
                id="t2",
            ),
            call("c3", "Bash"),
            ToolMessage("12/12 pods ready, error rate 0.0%", tool_call_id="c3", name="Bash", id="t3"),
            AIMessage("Done: one check failed.", id="ai-end"),
        ],
    )
    point_env_at(monkeypatch, tmp_path)
    body = viewer_client.get("/threads/errors-1/?show=errors").content.decode()
    assert _indices(body) == [2, 4]  # an error status, a text that starts like one; not "error rate"
    assert _count(body) == "2 of 8 messages"
    assert "status error" in body and 'title="its text starts like an error">error</span>' in body
    both = viewer_client.get("/threads/errors-1/?show=errors&tool=Bash").content.decode()
    assert _indices(both) == [2]


# -- paging over the filtered list ---------------------------------------------------------------------------


def _tool_steps(turns: int, *, output: str = "ok") -> list[Message]:
    messages: list[Message] = []
    for turn in range(turns):
        messages += [
            Message(type=MessageType.HUMAN, content=f"turn {turn}"),
            Message(type=MessageType.AI, tool_calls=(ToolCall(id=f"c{turn}", name="Bash"),)),
            Message(type=MessageType.TOOL, content=output, tool_call_id=f"c{turn}", name="Bash"),
            Message(type=MessageType.AI, content="done"),
        ]
    return messages


def test_filtered_pages_count_matches_not_stored_positions():
    messages = _tool_steps(500)  # 2,000 messages, 500 Bash calls and 500 results
    pruning = prune_decisions(messages, settings=MemorySettings())
    timeline = build_timeline(
        messages,
        pruning=pruning,
        card=None,
        view=View.STORED,
        page=2,
        spill_url=str,
        filters=TimelineFilter(tool="Bash"),
    )
    assert (timeline.matched, timeline.considered, timeline.pages) == (1000, 2000, 1000 // PAGE_SIZE)
    assert len(timeline.entries) == PAGE_SIZE
    # The 201st match is the 101st turn's call (stored index 4 * 100 + 1).
    assert timeline.entries[0].index == 401
    assert timeline.range_label == "Matches 201–400 of 1,000"
    assert all(not e.collapse_opens for e in timeline.entries)


def test_pager_links_keep_the_filter(viewer_client, tmp_path: Path, monkeypatch):
    messages = []
    for turn in range(150):  # 600 messages, 300 of them Bash calls or results
        messages += [
            HumanMessage(f"turn {turn}", id=f"h{turn}"),
            AIMessage("", tool_calls=[{"id": f"c{turn}", "name": "Bash", "args": {}}], id=f"a{turn}"),
            ToolMessage("ok", tool_call_id=f"c{turn}", name="Bash", id=f"t{turn}"),
            AIMessage("done", id=f"d{turn}"),
        ]
    plant_thread(tmp_path / "leon.db", "long-1", messages)
    point_env_at(monkeypatch, tmp_path)
    first = viewer_client.get("/threads/long-1/?tool=Bash").content.decode()
    assert "Matches 1–200 of 300 · page 1 of 2" in first
    assert 'href="/threads/long-1/?tool=Bash&amp;page=2"' in first
    second = viewer_client.get("/threads/long-1/?tool=Bash&page=2").content.decode()
    assert "Matches 201–300 of 300 · page 2 of 2" in second
    assert len(_indices(second)) == 100
    assert _count(second) == "300 of 600 messages"


# -- folded runs of unchanged messages -----------------------------------------------------------------------

LONG = "x" * 5000  # over soft_trim_chars (3,000), under hard_clear_threshold (10,000): soft-trimmed


def _thread(pattern: str) -> list[Message]:
    """A human message, then one tool-calling step per letter ("u" a short result, "L" a long one, "E" a
    failed tool), then the model's answer."""
    messages = [Message(type=MessageType.HUMAN, content="go")]
    for n, step in enumerate(pattern):
        output = LONG if step == "L" else "ok"
        messages += [
            Message(type=MessageType.AI, tool_calls=(ToolCall(id=f"c{n}", name="Bash"),)),
            Message(
                type=MessageType.TOOL,
                content=output,
                tool_call_id=f"c{n}",
                name="Bash",
                status="error" if step == "E" else "success",
            ),
        ]
    return [*messages, Message(type=MessageType.AI, content="done")]


def _timeline(messages: list[Message], card: SummaryCard | None = None, view: View = View.STORED):
    pruning = prune_decisions(messages, settings=MemorySettings(protect_recent=1))
    return build_timeline(messages, pruning=pruning, card=card, view=view, page=None, spill_url=str)


def _folded(entries: tuple[TimelineEntry, ...]) -> list[int | None]:
    hidden, inside = [], False
    for entry in entries:
        inside = inside or entry.collapse_opens > 0
        if inside:
            hidden.append(entry.index)
        inside = inside and not entry.collapse_closes
    return hidden


def test_long_runs_of_unchanged_messages_fold_to_their_first_and_last():
    # 0 human · 1–6 three short steps · 7 AI, 8 trimmed · 9–13 (five) · 14 trimmed · 15–21 (seven)
    timeline = _timeline(_thread("uuuLuuLuuu"))
    badges = {e.index: {b.kind.value for b in e.badges} for e in timeline.entries}
    assert "soft_trimmed" in badges[8] and "soft_trimmed" in badges[14]
    assert _folded(timeline.entries) == [1, 2, 3, 4, 5, 6, 16, 17, 18, 19, 20]
    opened = {e.index: e.collapse_opens for e in timeline.entries if e.collapse_opens}
    assert opened == {1: 6, 16: 5}
    assert COLLAPSE_RUN == 6  # the five messages 9–13 are one short of a run: they stay open


def test_an_error_and_the_summary_card_break_a_run():
    failed = _timeline(_thread("uuuuEuuuu"))  # the failed result (index 10) splits 0–9 and 11–19
    assert 10 not in _folded(failed.entries)
    assert _folded(failed.entries) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15, 16, 17, 18]

    from memory_core.records import SummaryRow

    messages = _thread("u" * 12)  # 26 messages; summarised up to 8, so 8–25 are an unchanged run
    row = SummaryRow(
        summary_id="s1",
        thread_id="t",
        summary_text="earlier work",
        compact_up_to_index=8,
        compacted_at=20,
        is_split_turn=False,
        split_turn_prefix=None,
        is_active=True,
        created_at=None,
        store="summary",
    )
    card = summary_card([row], len(messages))
    sent = _timeline(messages, card=card, view=View.SENT)
    assert sent.entries[0].kind == "summary" and sent.entries[0].collapse_opens == 0
    assert _folded(sent.entries) == list(range(9, 25))
    stored = _timeline(messages, card=card)
    assert all(i is not None and i >= 9 for i in _folded(stored.entries))  # summarised ones stay open


def test_folded_messages_keep_their_anchors_in_the_page(viewer_client, sample_home: Path):
    body = viewer_client.get(f"/threads/{TOOL_HEAVY}/").content.decode()
    runs = re.findall(
        r'<details class="unchanged-run"><summary>… (\d+) unchanged messages …</summary>(.*?)</ol></details></li>',
        body,
        re.S,
    )
    assert runs, "the tool-heavy thread has long runs of unchanged messages"
    for count, inside in runs:
        assert len(_indices(inside)) == int(count)
    # Every message is still in the page under its own id, folded or not: #msg-N links keep working.
    assert sorted(_indices(body)) == list(range(31))
    assert "timeline.js" in body  # opens the folded run a link points into

"""The dashboard's screens on Mycel dev threads (the dev sample, written by dev's own code, on a real
server): dev's notices shown as notices, lineage from checkpoint order, and no page that fails."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from memory_core.messages import message_from_dict
from memory_core.notices import OUTPUT_LIMIT_TEXT
from mycel_dashboard.screens.thread_detail.presenter import View, build_timeline

COMPACTING = "m_rE2uGx6NbP9w-1"  # 3 compact notices in its head
BREAKER = "m_sK5yDq1FvT7a-2"  # the summarizer failed 3 times: one compact_breaker notice, breaker open
TRUTH_DIR = Path(__file__).parents[1] / "data" / "mycel-pg-dev"
TRUTH = json.loads((TRUTH_DIR / "truth.json").read_text())


def _truth(thread_id: str) -> dict:
    return next(t for t in TRUTH["threads"] if t["thread_id"] == thread_id)


def _compaction_attempts(thread_id: str) -> list[int]:
    """The model calls (1-based) before which Mycel dev called its summarizer, from driver_log.json."""
    log = json.loads((TRUTH_DIR / "driver_log.json").read_text())["model_calls"]
    steps, attempts = 0, []
    for entry in (e for e in log if e["thread"] == thread_id):
        if entry["kind"] == "step":
            steps += 1
        else:
            attempts.append(steps + 1)
    return attempts


def _head_indexes(thread_id: str, key: str, value: str) -> list[int]:
    """Where the head's messages (as LangGraph's own reader saw them) have `key` == `value`."""
    return [i for i, m in enumerate(_truth(thread_id)["head_messages"]) if m.get(key) == value]


@pytest.fixture
def dev_client(client, db, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_dev_sample: str):
    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH"):
        monkeypatch.delenv(name, raising=False)
    # Dev wrote the sample's summaries to its SQLite fallback at LEON_DB_PATH (no Supabase): a copy.
    shutil.copy(TRUTH_DIR / "leon.db", tmp_path / "leon.db")
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    return client


def _notice_indexes(body: str, kind: str) -> list[int]:
    return [int(i) for i in re.findall(rf'class="msg human notice-msg notice-{kind}" id="msg-(\d+)"', body)]


def test_compact_notices_are_shown_as_system_notices_sent_as_user_turns(dev_client) -> None:
    body = dev_client.get(f"/threads/{COMPACTING}/").content.decode()
    expected = _head_indexes(COMPACTING, "notification_type", "compact")
    assert len(expected) == 3
    assert _notice_indexes(body, "compact") == expected
    assert body.count("System notice <span") == 3
    assert "compaction notice" in body
    assert "the model gets it as one at every later call, and it counts in the estimate" in body
    # The owner's own messages stay the owner's.
    for index in _head_indexes(COMPACTING, "source", "owner"):
        assert f'class="msg human" id="msg-{index}"' in body


def test_breaker_notice_is_shown_as_a_notice(dev_client) -> None:
    body = dev_client.get(f"/threads/{BREAKER}/").content.decode()
    expected = _head_indexes(BREAKER, "notification_type", "compact_breaker")
    assert len(expected) == 1
    assert _notice_indexes(body, "compact_breaker") == expected
    assert _notice_indexes(body, "compact") == []
    assert "compaction breaker notice" in body


def test_message_page_of_a_notice_says_what_it_is(dev_client) -> None:
    (index,) = _head_indexes(BREAKER, "notification_type", "compact_breaker")
    page = dev_client.get(f"/threads/{BREAKER}/messages/{index}/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'id="message-notice"' in body
    assert "Automatic compaction disabled for this thread" in body
    owner = dev_client.get(f"/threads/{BREAKER}/messages/0/").content.decode()
    assert 'id="message-notice"' not in owner


def test_a_recovery_summary_at_the_head_is_named_not_taken_for_a_system_prompt(db) -> None:
    # The sample has no prompt-too-long recovery; this history is shaped as dev saves one (§2.5):
    # [SystemMessage("[Conversation Summary]\n…")] + the messages it kept, as LangChain dumps them.
    history = [
        SystemMessage(content="[Conversation Summary]\n1. Primary Request: read the notes."),
        HumanMessage(content="and now the second file"),
        AIMessage(content="Done."),
        HumanMessage(content=OUTPUT_LIMIT_TEXT),
    ]
    messages = [message_from_dict(m.model_dump()) for m in history]
    timeline = build_timeline(messages, pruning=None, card=None, view=View.STORED, page=None, spill_url=str)
    html = render_to_string("thread.html#timeline", {"thread_id": "m_recovered-1", "timeline": timeline})
    assert 'class="msg system notice-msg notice-recovery_summary" id="msg-0"' in html
    assert "summary written by prompt-too-long recovery" in html
    assert "the older history survives only in earlier checkpoints" in html
    assert "not Mycel&#x27;s system prompt" in html
    assert 'class="msg human notice-msg notice-output_limit" id="msg-3"' in html
    assert 'class="msg human" id="msg-1"' in html


LINEAGE = "Mycel dev stores no parent ids: lineage here comes from checkpoint order."


def test_the_rail_of_a_dev_thread_is_one_line_in_checkpoint_order(dev_client) -> None:
    body = dev_client.get(f"/threads/{BREAKER}/").content.decode()
    assert 'id="lineage-note"' in body
    assert LINEAGE in body
    rail = body[body.index('<ol class="rail">') : body.index("</ol>", body.index('<ol class="rail">'))]
    # Parents from order: every checkpoint is on the active line, none a branch or a fork of its own.
    assert rail.count("<li ") == _truth(BREAKER)["checkpoint_count"]
    assert "off-line" not in rail
    assert "branch" not in rail
    assert "fork" not in rail


def test_every_checkpoint_page_of_a_dev_thread_links_the_one_before_and_diffs_against_it(dev_client) -> None:
    ids = [c["checkpoint_id"] for c in _truth(BREAKER)["checkpoints"]]
    assert ids == sorted(ids)
    for position, checkpoint_id in enumerate(ids):
        page = dev_client.get(f"/threads/{BREAKER}/checkpoints/{checkpoint_id}/")
        assert page.status_code == 200, checkpoint_id
        body = page.content.decode()
        assert LINEAGE in body
        if position == 0:
            assert "none (first)" in body
            continue
        before = ids[position - 1]
        assert f'href="/threads/{BREAKER}/checkpoints/{before}/"' in body
        # The diff is against the checkpoint before it, which holds fewer or as many messages.
        assert f'Against the checkpoint before it <span class="mono">{before}</span>' in body
        assert " removed, " in body


def test_a_main_thread_keeps_its_parents_and_says_nothing_of_order(client, db, sample_home: Path) -> None:
    client.force_login(User.objects.create_user("viewer", password="viewer-pass-123"))
    listed = client.get("/threads/").content.decode()
    thread_id = re.search(r'href="/threads/([^/"]+)/"', listed).group(1)
    body = client.get(f"/threads/{thread_id}/").content.decode()
    assert 'id="lineage-note"' not in body


def _records(body: str) -> list[dict[str, str]]:
    """The panel's rows, each as {column: value} (the panel shows wide tables one record at a time)."""
    return [
        dict(re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', block, re.S))
        for block in re.findall(r'<table class="grid compact record">(.*?)</table>', body, re.S)
    ]


@pytest.fixture
def demo_client(dev_client, pg_dev_demo, monkeypatch: pytest.MonkeyPatch):
    url, written = pg_dev_demo
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    return dev_client, {w.thread_id: w for w in written}


def test_run_events_and_file_operations_are_joined_to_checkpoints_by_time(demo_client) -> None:
    client, written = demo_client
    thread = next(w for w in written.values() if w.file_operation_ids)
    for panel in ("run-events", "file-operations"):
        body = client.get(f"/threads/{thread.thread_id}/panels/{panel}/").content.decode()
        assert "Joined by time" in body
        rows = _records(body)
        assert rows, panel
        for row in rows:
            assert row["checkpoint (joined by time)"] == thread.run_end_checkpoint[row["run_id"]], row


def test_a_recovered_dev_head_shows_its_summary_as_recovery_on_the_page(demo_client) -> None:
    client, written = demo_client
    thread = next(w for w in written.values() if w.head_first_type == "system")
    body = client.get(f"/threads/{thread.thread_id}/").content.decode()
    assert 'class="msg system notice-msg notice-recovery_summary" id="msg-0"' in body
    assert "the older history survives only in earlier checkpoints" in body


def test_the_breaker_card_and_list_flag_are_on_the_open_breaker_thread_only(dev_client) -> None:
    listed = dev_client.get("/threads/").content.decode()
    flagged = re.findall(r'href="/threads/([^/"]+)/"(?:(?!</tr>).)*badge flag-breaker_open', listed, re.S)
    assert set(flagged) == {BREAKER}
    for thread in TRUTH["threads"]:
        body = dev_client.get(f"/threads/{thread['thread_id']}/").content.decode()
        assert ('id="breaker-card"' in body) is (thread["thread_id"] == BREAKER), thread["thread_id"]
    body = dev_client.get(f"/threads/{BREAKER}/").content.decode()
    card = body[body.index('id="breaker-card"') : body.index('id="context-chart"')]
    assert "Automatic compaction is off for this thread" in card
    assert "after 3 failed automatic compactions in a row" in card
    (notice,) = _head_indexes(BREAKER, "notification_type", "compact_breaker")
    assert f'href="#msg-{notice}"' in card
    # The scripted model's record: a summarizer call before a step is that call's compaction attempt.
    attempts = _compaction_attempts(BREAKER)
    assert len(attempts) == 3
    assert (
        f'Opened at <a href="/threads/{BREAKER}/calls/{attempts[-1]}/">model call {attempts[-1]}</a>' in card
    )
    failed = ", ".join(f'<a href="/threads/{BREAKER}/calls/{n}/">{n}</a>' for n in attempts)
    assert f"the failed attempts at calls {failed}" in card
    assert "prompt-too-long recovery closes it" in card
    assert "clear the thread or start a new one" in card


def _figure(body: str) -> dict:
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found, "no chart"
    return json.loads(found.group(1))


def test_the_chart_of_a_dev_thread_names_dev_rules_and_compacts_once_per_crossing(dev_client) -> None:
    body = dev_client.get(f"/threads/{COMPACTING}/").content.decode()
    caption = body[body.index('id="chart-caption"') : body.index("</p>", body.index('id="chart-caption"'))]
    assert "Mycel dev&#x27;s rules: trigger on the summarized view (dev layout)." in caption
    assert "re-compacted at every call" not in caption
    figure = _figure(body)
    assert not [s for s in figure["layout"].get("shapes", []) if s.get("name") == "recompaction"]
    # One compaction per summary row Mycel dev wrote (3 rows, 3 compact notices): no repeated compaction.
    assert "Mycel compacted at 3 of them" in caption
    main_like = dev_client.get(f"/threads/{BREAKER}/").content.decode()
    assert "Mycel compacted at 0 of them" in main_like


def test_every_call_page_of_the_dev_sample_renders_and_names_the_rules(dev_client) -> None:
    log = json.loads((TRUTH_DIR / "driver_log.json").read_text())["model_calls"]
    for thread in TRUTH["threads"]:
        thread_id = thread["thread_id"]
        steps = sum(1 for e in log if e["thread"] == thread_id and e["kind"] == "step")
        for number in range(1, steps + 1):
            page = dev_client.get(f"/threads/{thread_id}/calls/{number}/")
            assert page.status_code == 200, (thread_id, number)
            body = page.content.decode()
            assert "Mycel dev&#x27;s rules: trigger on the summarized view" in body
            assert 'id="dev-trigger-view"' in body
        assert dev_client.get(f"/threads/{thread_id}/calls/{steps + 1}/").status_code == 404


def _whatif_compactions(body: str) -> list[int]:
    found = re.search(r'<script id="whatif-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found, "no what-if chart"
    figure = json.loads(found.group(1))
    stars = [t for t in figure["data"] if t.get("name") == "proposed: compaction ran"]
    return stars[0]["x"] if stars else []


def test_the_whatif_on_a_dev_thread_names_dev_rules_and_moves_with_trigger_tokens(dev_client) -> None:
    # The sample ran under a 6,000-token window (leon:tiny) that today's config does not know: propose it.
    base = f"/config/?thread={COMPACTING}&runtime.context_limit=6000"
    page = dev_client.get(base)
    assert page.status_code == 200
    body = page.content.decode()
    assert "Mycel dev&#x27;s rules: trigger on the summarized view (dev layout)." in body
    assert 'id="whatif-trigger-tokens"' in body
    low = _whatif_compactions(dev_client.get(f"{base}&trigger_tokens=1500").content.decode())
    high = _whatif_compactions(dev_client.get(f"{base}&trigger_tokens=3500").content.decode())
    assert low and high
    assert len(low) > len(high)  # a lower trigger compacts more often, never later
    assert low[0] <= high[0]
    # Overridden to main's rules: named so, and main ignores dev's trigger_tokens (no slider).
    as_main = dev_client.get(f"{base}&rules=main&trigger_tokens=1500").content.decode()
    assert "Mycel main&#x27;s rules: trigger on the pruned history (chosen here)." in as_main
    assert 'id="whatif-trigger-tokens"' not in as_main
    bad = dev_client.get(f"{base}&trigger_tokens=0").content.decode()
    assert "Ignored trigger_tokens &#x27;0&#x27;" in bad


def test_the_dry_run_of_a_dev_thread_is_dev_s_decision_and_can_be_overridden(dev_client) -> None:
    base = f"/threads/{BREAKER}/dry-run/"
    plain = dev_client.get(base)
    assert plain.status_code == 200
    assert "Mycel dev&#x27;s rules: trigger on the summarized view (dev layout)." in plain.content.decode()
    # At the window it ran under the thread is over dev's trigger, but its breaker is open: no attempt.
    body = dev_client.get(f"{base}?context_limit=6000").content.decode()
    decision = body[body.index('id="dev-decision"') :]
    assert "no: the breaker is open (3 failures)" in decision
    # The compacting thread (breaker closed) would attempt at the same window.
    other = dev_client.get(f"/threads/{COMPACTING}/dry-run/?context_limit=6000&trigger_tokens=1500")
    assert other.status_code == 200
    assert "trigger_tokens, proposed" in other.content.decode()
    assert "&gt; 1,500" in other.content.decode()
    as_main = dev_client.get(f"{base}?context_limit=6000&rules=main").content.decode()
    assert "Mycel main&#x27;s rules: trigger on the pruned history (chosen here)." in as_main
    assert 'id="dev-decision"' not in as_main


def test_the_whatif_says_where_the_record_s_breaker_opened(dev_client) -> None:
    body = dev_client.get(f"/config/?thread={BREAKER}&runtime.context_limit=6000").content.decode()
    attempts = _compaction_attempts(BREAKER)
    assert f"the compaction breaker opened at model call {attempts[-1]}" in body
    other = dev_client.get(f"/config/?thread={COMPACTING}&runtime.context_limit=6000").content.decode()
    assert 'id="whatif-breaker"' not in other


def test_the_what_if_compares_the_record_s_limit_with_the_proposal(dev_client) -> None:
    # The record (its summary rows) says the thread ran in a 6,000-token window, whatever today's config
    # says: proposing 6,000 changes neither the limit nor the trigger the what-if shows.
    body = dev_client.get(f"/config/?thread={COMPACTING}&runtime.context_limit=6000").content.decode()
    limit = re.search(r'<div id="whatif-limit"><dt>Context limit</dt><dd>(.*?)</dd>', body).group(1)
    trigger = re.search(r'<div id="whatif-trigger"><dt>Compaction trigger</dt><dd>(.*?)</dd>', body).group(1)
    assert limit == "6,000"
    assert trigger == "4,200"
    # Today's config (1,000,000) as the proposal is said as the change it is.
    body = dev_client.get(f"/config/?thread={COMPACTING}&memory.pruning.protect_recent=4").content.decode()
    limit = re.search(r'<div id="whatif-limit"><dt>Context limit</dt><dd>(.*?)</dd>', body).group(1)
    assert limit == "6,000 → <strong>1,000,000</strong>"

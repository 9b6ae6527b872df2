"""The demo home: written by LangGraph's real saver, with every feature the dashboard must show."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core.compaction import plan_compaction
from memory_core.demo import (
    FAKE_API_KEY,
    DemoManifest,
    DemoThread,
    ThreadScript,
    build_thread,
    qa,
    write_demo_home,
)
from memory_core.demo.graph import SYSTEM_PROMPT_TOKENS
from memory_core.demo.memory import fake_summary
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, message_from_dict, messages_from_dicts
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruneAction, prune_decisions
from memory_core.tokens import estimate_tokens


def _plain(code: int, data: bytes) -> Any:
    payload = ormsgpack.unpackb(data, ext_hook=_plain, option=ormsgpack.OPT_NON_STR_KEYS)
    if code == 5 and isinstance(payload, list) and len(payload) >= 3:
        return {"__class__": payload[1], **payload[2]}
    return {"__ext__": code, "payload": payload}


def _decode(blob: bytes) -> Any:
    return ormsgpack.unpackb(blob, ext_hook=_plain, option=ormsgpack.OPT_NON_STR_KEYS)


def _rows(db: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def _head_messages(home: Path, thread_id: str) -> list[dict[str, Any]]:
    ((blob,),) = _rows(
        home / "leon.db",
        "SELECT checkpoint FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
        thread_id,
    )
    return list(_decode(blob)["channel_values"]["messages"])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoManifest:
    return write_demo_home(tmp_path_factory.mktemp("demo") / "home", seed=7)


def test_demo_home_opens_with_langgraphs_own_saver(demo: DemoManifest) -> None:
    lab = demo.thread("lab")
    conn = sqlite3.connect(demo.folder / "leon.db", check_same_thread=False)
    try:
        saved = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": lab.thread_id}})
    finally:
        conn.close()
    assert saved is not None
    messages = saved.checkpoint["channel_values"]["messages"]
    assert len(messages) == lab.message_count == 35
    assert messages[0].type == "human"
    assert messages[0].content.startswith("Set up a weather-readings lab")
    assert messages[-1].type == "ai"
    assert saved.metadata["source"] == "loop"


def test_every_thread_row_and_member_is_written(demo: DemoManifest) -> None:
    threads = _rows(
        demo.folder / "leon.db", "SELECT id, member_id, is_main, branch_index FROM threads ORDER BY id"
    )
    assert {row[0] for row in threads} == {t.thread_id for t in demo.threads if not t.standalone}
    assert [t.thread_id for t in demo.threads if t.standalone] == ["interactive-chat"]
    assert all(row[0].startswith(row[1] + "-") for row in threads)
    assert sum(row[2] for row in threads) == 2  # one main thread per agent
    members = _rows(demo.folder / "leon.db", "SELECT id, type, owner_user_id FROM members")
    assert sorted(m[1] for m in members) == ["human", "mycel_agent", "mycel_agent"]
    idle = demo.thread("idle")
    assert not idle.has_checkpoints
    assert _rows(
        demo.folder / "leon.db", "SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", idle.thread_id
    ) == [(0,)]


def test_fork_is_an_update_checkpoint_on_an_earlier_checkpoint_and_becomes_the_head(
    demo: DemoManifest,
) -> None:
    chat = demo.thread("chat")
    rows = _rows(
        demo.folder / "leon.db",
        "SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints WHERE thread_id = ?",
        chat.thread_id,
    )
    parents = {cid: parent for cid, parent, _ in rows}
    meta = {cid: json.loads(m) for cid, _, m in rows}
    assert parents[chat.fork_checkpoint_id] == chat.fork_parent_checkpoint_id
    assert meta[chat.fork_checkpoint_id]["source"] == "update"
    children_of_target = [cid for cid, parent in parents.items() if parent == chat.fork_parent_checkpoint_id]
    assert len(children_of_target) == 2  # the original continuation and the fork
    head = max(parents)
    ancestry = []
    while head is not None:
        ancestry.append(head)
        head = parents[head]
    assert chat.fork_checkpoint_id in ancestry
    abandoned = [cid for cid in parents if cid not in ancestry]
    assert abandoned, "the original branch stays in the file"
    head_texts = [m["content"] for m in _head_messages(demo.folder, chat.thread_id) if m["type"] == "human"]
    assert head_texts[-1].startswith("Actually, prefer names after rivers")


def test_spilled_output_is_a_file_and_its_tool_message_keeps_only_a_preview(demo: DemoManifest) -> None:
    (spill,) = demo.thread("lab").spill_files
    assert spill.parent == demo.folder / "workspaces" / "morel-lab" / ".leon" / "tool-results"
    assert len(spill.read_bytes()) > 50_000
    (message,) = [
        m
        for m in _head_messages(demo.folder, demo.thread("lab").thread_id)
        if m.get("tool_call_id") == spill.stem
    ]
    assert message["content"].startswith(
        f"Output too large ({len(spill.read_bytes())} bytes). Full output saved to: {spill}"
    )
    assert message["name"] is None
    assert len(message["content"]) < 3000


def test_fake_api_key_and_model_config_are_in_raw_checkpoint_metadata(demo: DemoManifest) -> None:
    metadata = [
        json.loads(m)
        for (m,) in _rows(
            demo.folder / "leon.db",
            "SELECT metadata FROM checkpoints WHERE thread_id IN (SELECT id FROM threads)",  # web threads
        )
    ]
    web_runs = [m for m in metadata if "run_id" in m]
    assert len(web_runs) == len(metadata)
    assert {m["api_key"] for m in web_runs} == {FAKE_API_KEY}
    assert {"model", "model_provider", "run_id", "source", "step", "parents"} <= set(web_runs[0])
    steer_meta = [m for m in web_runs if m.get("base_url") == "https://api.openai.com/v1"]
    assert steer_meta and all(m["model"] == "gpt-4o-2024-08-06" for m in steer_meta)


def test_parallel_tool_calls_are_parallel_tasks_in_writes(demo: DemoManifest) -> None:
    lab = demo.thread("lab")
    messages = _head_messages(demo.folder, lab.thread_id)
    widest = max(len(m.get("tool_calls") or []) for m in messages)
    assert widest == 3
    tasks_per_checkpoint = _rows(
        demo.folder / "leon.db",
        "SELECT checkpoint_id, COUNT(DISTINCT task_id) FROM writes WHERE thread_id = ? AND channel = 'messages'"
        " GROUP BY checkpoint_id ORDER BY 2 DESC LIMIT 1",
        lab.thread_id,
    )
    assert tasks_per_checkpoint[0][1] == 3


def test_tool_outputs_fall_below_between_and_above_the_pruning_thresholds(demo: DemoManifest) -> None:
    sizes = [
        len(m["content"])
        for m in _head_messages(demo.folder, demo.thread("lab").thread_id)
        if m["type"] == "tool" and isinstance(m["content"], str)
    ]
    assert any(size <= 3000 for size in sizes)
    assert any(3000 < size <= 10_000 for size in sizes)
    assert any(size > 10_000 for size in sizes)


def test_both_provider_shapes_and_usage_metadata(demo: DemoManifest) -> None:
    anthropic = [m for m in _head_messages(demo.folder, demo.thread("lab").thread_id) if m["type"] == "ai"]
    openai = [m for m in _head_messages(demo.folder, demo.thread("steer").thread_id) if m["type"] == "ai"]
    assert all(isinstance(m["content"], list) and m["id"].startswith("msg_") for m in anthropic)
    assert all(isinstance(m["content"], str) and m["id"].startswith("chatcmpl-") for m in openai)
    for message in anthropic + openai:
        usage = message["usage_metadata"]
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]


def test_human_messages_carry_mycel_metadata(demo: DemoManifest) -> None:
    humans = [m for m in _head_messages(demo.folder, demo.thread("steer").thread_id) if m["type"] == "human"]
    assert [h["metadata"]["source"] for h in humans] == ["owner", "owner", "system"]
    assert [h["metadata"].get("is_steer") for h in humans] == [None, True, False]
    chat_humans = _rows(
        demo.folder / "leon.db",
        "SELECT checkpoint FROM checkpoints WHERE thread_id = ?",
        demo.thread("chat").thread_id,
    )
    sources = {
        m["metadata"]["source"]
        for (blob,) in chat_humans
        for m in _decode(blob)["channel_values"].get("messages", [])
        if m["type"] == "human"
    }
    assert sources == {"owner", "external"}


def test_compacted_thread_has_consistent_summaries(demo: DemoManifest) -> None:
    thread = demo.thread("compaction")
    rows = _rows(
        demo.folder / "summary.db",
        "SELECT summary_id, compact_up_to_index, compacted_at, is_split_turn, split_turn_prefix, is_active, created_at"
        " FROM summaries WHERE thread_id = ? ORDER BY created_at",
        thread.thread_id,
    )
    assert len(rows) == thread.summaries >= 3
    assert [r[5] for r in rows].count(1) == 1 and rows[-1][5] == 1
    assert any(r[3] == 1 and r[4] for r in rows) and any(r[3] == 0 and r[4] is None for r in rows)
    assert all(r[0].startswith(thread.thread_id + "_") for r in rows)
    head = _head_messages(demo.folder, thread.thread_id)
    counts = {
        len(_decode(blob)["channel_values"].get("messages", []))
        for (blob,) in _rows(
            demo.folder / "leon.db",
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ?",
            thread.thread_id,
        )
    }
    for _, up_to, at, split, _, _, _ in rows:
        assert 2 <= up_to < at <= len(head)
        assert at in counts  # compacted_at is the message count at a model call
        if not split:
            assert head[up_to]["type"] == "human"
    assert [r[2] for r in rows] == sorted(r[2] for r in rows)


def test_side_stores_hold_operations_events_queue_and_sandbox(demo: DemoManifest) -> None:
    lab = demo.thread("lab")
    ops = _rows(
        demo.folder / "file_ops.db", "SELECT thread_id, checkpoint_id, operation_type FROM file_operations"
    )
    assert {(t, kind) for t, _, kind in ops} >= {(lab.thread_id, "write"), (lab.thread_id, "edit")}
    run_ids = {t.thread_id: t.run_ids for t in demo.threads}
    assert all(run_id in run_ids[thread_id] for thread_id, run_id, _ in ops)
    events = _rows(demo.folder / "events.db", "SELECT thread_id, run_id, event_type FROM run_events")
    assert {e[1] for e in events if e[0] == lab.thread_id} == {lab.run_ids[-1]}  # only the latest run is kept
    assert "error" in {e[2] for e in events if e[0] == demo.thread("glossary").thread_id}
    queue = _rows(demo.folder / "queue.db", "SELECT thread_id, content, source FROM message_queue")
    assert {q[0] for q in queue} == set(demo.queued_thread_ids) >= {demo.thread("steer").thread_id}
    sandbox = demo.folder / "sandbox.db"
    web_threads = [t for t in demo.threads if not t.standalone]
    assert _rows(sandbox, "SELECT COUNT(*) FROM sandbox_leases") == [(len(web_threads),)]
    terminals = _rows(sandbox, "SELECT thread_id FROM abstract_terminals")
    assert sorted(t for (t,) in terminals) == sorted(t.thread_id for t in web_threads)
    sessions = _rows(sandbox, "SELECT thread_id FROM chat_sessions WHERE status = 'active'")
    assert lab.thread_id in {s[0] for s in sessions}
    for table in ("lease_events", "sandbox_volumes", "lease_resource_snapshots", "sandbox_instances"):
        assert _rows(sandbox, f"SELECT COUNT(*) FROM {table}")[0][0] > 0  # noqa: S608


def test_config_files_use_the_nested_form_and_a_small_virtual_model(demo: DemoManifest) -> None:
    runtime = json.loads((demo.folder / "runtime.json").read_text())
    assert "runtime" in runtime and "context_limit" not in runtime
    models = json.loads((demo.folder / "models.json").read_text())
    assert models["mapping"]["leon:snug"]["context_limit"] == 5500


def _snapshot(home: Path) -> dict[str, Any]:
    """Every row of every store, decoded, with the folder path masked."""
    dump: dict[str, Any] = {}
    for db in sorted(home.glob("*.db")):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        tables = [
            t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        ]
        for table in tables:
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()  # noqa: S608
            dump[f"{db.name}:{table}"] = [
                [
                    _decode(v) if table in {"checkpoints", "writes"} and isinstance(v, bytes) and v else v
                    for v in row
                ]
                for row in sorted(rows, key=repr)
            ]
        conn.close()
    return json.loads(json.dumps(dump, default=repr).replace(str(home), "<HOME>"))


def test_same_seed_gives_identical_contents(tmp_path: Path) -> None:
    # Every built-in scenario (the default): the evidence threads' memory facts must repeat too.
    first = write_demo_home(tmp_path / "a", seed=11)
    second = write_demo_home(tmp_path / "b", seed=11)
    assert _snapshot(first.folder) == _snapshot(second.folder)
    assert [t.thread_id for t in first.threads] == [t.thread_id for t in second.threads]
    assert first.threads == tuple(
        replace(t, spill_files=tuple(first.folder / p.relative_to(second.folder) for p in t.spill_files))
        for t in second.threads
    )
    first = write_demo_home(tmp_path / "a3", seed=11, threads=3)
    other = write_demo_home(tmp_path / "c", seed=12, threads=3)
    assert [t.thread_id for t in other.threads] != [t.thread_id for t in first.threads]


def test_refuses_to_overwrite_an_existing_home_unless_asked(tmp_path: Path) -> None:
    write_demo_home(tmp_path, seed=3, threads=1)
    with pytest.raises(FileExistsError):
        write_demo_home(tmp_path, seed=3, threads=1)
    again = write_demo_home(tmp_path, seed=3, threads=2, overwrite=True)
    assert len(_rows(tmp_path / "leon.db", "SELECT id FROM threads")) == len(again.threads)


def test_long_turns_add_a_long_thread(tmp_path: Path) -> None:
    manifest = write_demo_home(tmp_path, seed=5, threads=1, long_turns=6)
    assert manifest.thread("long").message_count == 24


def test_build_thread_writes_a_custom_script_and_subagent_metadata_has_no_key(tmp_path: Path) -> None:
    script = ThreadScript(
        "openai", "gpt-4o-mini", "openai", (qa("ping?", "pong"), qa("again?", "pong")), web_run=False
    )
    built = build_thread(tmp_path / "leon.db", "subagent-1a2b3c4d", script, seed=1)
    assert built.head_message_count == 4
    metadata = [json.loads(m) for (m,) in _rows(tmp_path / "leon.db", "SELECT metadata FROM checkpoints")]
    assert metadata and all("api_key" not in m and "run_id" not in m for m in metadata)
    assert _rows(tmp_path / "leon.db", "SELECT COUNT(*) FROM writes")[0][0] > 0


def test_demo_summaries_and_input_tokens_agree_with_the_engine(demo: DemoManifest) -> None:
    """Every model call compacts exactly where plan_compaction says, and is billed for what model_view sends."""
    thread = demo.thread("compaction")
    models = json.loads((demo.folder / "models.json").read_text())
    settings = MemorySettings(context_limit=models["mapping"][thread.threads_model]["context_limit"])
    stored = messages_from_dicts(_head_messages(demo.folder, thread.thread_id))
    rows = _rows(
        demo.folder / "summary.db",
        "SELECT summary_text, compact_up_to_index, compacted_at, is_split_turn, split_turn_prefix"
        " FROM summaries WHERE thread_id = ? ORDER BY created_at",
        thread.thread_id,
    )
    # No steering in this thread: the AI message at index i answered a call whose input was stored[:i].
    calls = [i for i, m in enumerate(stored) if m.type is MessageType.AI]
    plans = {i: plan_compaction(stored[:i], settings=settings) for i in calls}
    expected = [
        (plans[i].compact_up_to_index, i, int(plans[i].split_turn)) for i in calls if plans[i].would_compact
    ]
    assert len(expected) >= 3
    assert [(up_to, at, split) for _, up_to, at, split, _ in rows] == expected
    assert all(bool(prefix) == bool(split) for _, _, _, split, prefix in rows)

    texts = iter(text for text, *_ in rows)
    active: ActiveSummary | None = None
    for i in calls:
        up_to = plans[i].compact_up_to_index
        if plans[i].would_compact and up_to is not None:
            active = ActiveSummary(summary_text=next(texts), compact_up_to_index=up_to)
        sent = model_view(stored[:i], settings=settings, summary=active)
        assert sent.summary_applied is (active is not None)
        billed = SYSTEM_PROMPT_TOKENS + sum(len(m.text) for m in sent.messages) // 4
        assert stored[i].input_tokens == billed, f"model call producing message {i}"


def test_lab_thread_shows_every_pruning_outcome_under_mycels_defaults(tmp_path: Path) -> None:
    manifest = write_demo_home(tmp_path / "home", seed=7)
    lab = manifest.thread("lab")
    conn = sqlite3.connect(tmp_path / "home" / "leon.db")
    try:
        saved = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": lab.thread_id}})
    finally:
        conn.close()
    assert saved is not None
    messages = [message_from_dict(m.model_dump()) for m in saved.checkpoint["channel_values"]["messages"]]
    result = prune_decisions(messages, settings=MemorySettings())
    for action in (PruneAction.SOFT_TRIMMED, PruneAction.HARD_CLEARED):
        assert result.count(action) >= 1, action


# ---------------------------------------------------------------- issue 11's evidence threads

EVIDENCE_KEYS = ("compaction", "standalone", "model_switch", "unsaved_summary", "large_window")


def _summary_rows(demo: DemoManifest, thread: DemoThread) -> list[tuple[Any, ...]]:
    db = "leon.db" if thread.standalone else "summary.db"
    return _rows(
        demo.folder / db,
        "SELECT summary_text, compact_up_to_index, compacted_at, is_split_turn, split_turn_prefix"
        " FROM summaries WHERE thread_id = ? ORDER BY created_at",
        thread.thread_id,
    )


def _settings_at(thread: DemoThread, call: int) -> MemorySettings:
    return [s.settings for s in thread.settings_segments if s.first_call <= call][-1]


def _calls(demo: DemoManifest, thread: DemoThread) -> tuple[tuple[Message, ...], list[int]]:
    """The head history and, per model call, the index of the AI message it produced (no steering here)."""
    stored = messages_from_dicts(_head_messages(demo.folder, thread.thread_id))
    return stored, [i for i, m in enumerate(stored) if m.type is MessageType.AI]


def _billed(
    stored: Sequence[Message], i: int, settings: MemorySettings, summary: ActiveSummary | None
) -> int:
    sent = model_view(stored[:i], settings=settings, summary=summary)
    return SYSTEM_PROMPT_TOKENS + sum(len(m.text) for m in sent.messages) // 4


def test_default_home_has_every_built_in_scenario_and_the_standalone_thread_id(demo: DemoManifest) -> None:
    keys = [t.key for t in demo.threads]
    assert keys[:6] == ["lab", "compaction", "chat", "steer", "glossary", "qa"]
    assert set(EVIDENCE_KEYS) <= set(keys) and not [k for k in keys if k.startswith("extra-")]
    assert demo.thread("standalone").thread_id == "interactive-chat"


@pytest.mark.parametrize("key", EVIDENCE_KEYS)
def test_evidence_threads_compact_and_are_billed_as_mycels_arithmetic_says(
    demo: DemoManifest, key: str
) -> None:
    """Under the settings the manifest says were in force, the engine compacts exactly at the recorded
    calls, every stored row is one of them, and each call was billed for what Mycel would have sent."""
    thread = demo.thread(key)
    stored, calls = _calls(demo, thread)
    assert len(calls) == thread.model_calls and thread.settings_segments[0].first_call == 1
    plans = [plan_compaction(stored[:i], settings=_settings_at(thread, n)) for n, i in enumerate(calls, 1)]
    assert tuple(i for i, p in zip(calls, plans, strict=True) if p.would_compact) == thread.compacted_at
    assert set(thread.summaries_not_stored) <= set(thread.compacted_at)
    rows = _summary_rows(demo, thread)
    assert len(rows) == thread.summaries
    assert [(up_to, at, split) for _, up_to, at, split, _ in rows] == [
        (p.compact_up_to_index, i, int(p.split_turn))
        for i, p in zip(calls, plans, strict=True)
        if p.would_compact and i not in thread.summaries_not_stored
    ]
    texts = iter(rows)
    active: ActiveSummary | None = None
    for n, (i, plan) in enumerate(zip(calls, plans, strict=True), 1):
        if plan.would_compact and plan.compact_up_to_index is not None:
            text, prefix = fake_summary(plan)
            if i not in thread.summaries_not_stored:
                row_text, *_, row_prefix = next(texts)
                assert (row_text, row_prefix) == (text, prefix)
            active = ActiveSummary(summary_text=text, compact_up_to_index=plan.compact_up_to_index)
        assert stored[i].input_tokens == _billed(stored, i, _settings_at(thread, n), active), f"call {n}"


def test_standalone_thread_lives_only_in_leon_db_and_needed_a_small_window(demo: DemoManifest) -> None:
    thread = demo.thread("standalone")
    assert thread.standalone and thread.member_id is None and thread.threads_model is None
    main = demo.folder / "leon.db"
    assert _rows(main, "SELECT COUNT(*) FROM threads WHERE id = ?", thread.thread_id) == [(0,)]
    metadata = [
        json.loads(m)
        for (m,) in _rows(main, "SELECT metadata FROM checkpoints WHERE thread_id = ?", thread.thread_id)
    ]
    assert metadata and not [m for m in metadata if {"api_key", "model", "run_id"} & set(m)]
    humans = [m for m in _head_messages(demo.folder, thread.thread_id) if m["type"] == "human"]
    assert humans and not [m for m in humans if m.get("metadata")]  # typed in a TUI, not routed by the web
    assert _rows(
        demo.folder / "summary.db", "SELECT COUNT(*) FROM summaries WHERE thread_id = ?", thread.thread_id
    ) == [(0,)]
    assert len(_summary_rows(demo, thread)) == thread.summaries >= 5
    ops = _rows(
        main,
        "SELECT checkpoint_id, operation_type FROM file_operations WHERE thread_id = ?",
        thread.thread_id,
    )
    assert {kind for _, kind in ops} == {"write", "edit"}
    assert all(
        run_id in thread.run_ids and re.fullmatch(r"interactive-chat-[0-9a-f]{8}", run_id)
        for run_id, _ in ops
    )
    assert _rows(
        demo.folder / "events.db", "SELECT COUNT(*) FROM run_events WHERE thread_id = ?", thread.thread_id
    ) == [(0,)]
    (segment,) = thread.settings_segments
    assert segment.settings.context_limit == 6000
    # What the dashboard must assume (leon:large) could not have compacted this history even once.
    stored, calls = _calls(demo, thread)
    assumed = MemorySettings(context_limit=1_000_000)
    assert not any(plan_compaction(stored[:i], settings=assumed).would_compact for i in calls)


def test_model_switch_raises_the_trigger_but_keeps_keep_recent_lowered(demo: DemoManifest) -> None:
    thread = demo.thread("model_switch")
    before, after = thread.settings_segments
    assert (before.settings.context_limit, before.settings.effective_keep_recent_tokens) == (5500, 2200)
    assert (after.settings.context_limit, after.settings.effective_keep_recent_tokens) == (9000, 2200)
    assert (before.model, after.model) == ("claude-sonnet-4-5-20250929", "claude-haiku-4-5-20250929")
    assert thread.threads_model == "leon:small"
    stored, calls = _calls(demo, thread)
    switch_at = calls[after.first_call - 1]
    assert [at for at in thread.compacted_at if at < switch_at] and [
        at for at in thread.compacted_at if at > switch_at
    ]
    # The first call after the switch stays under the new trigger though it is over the old one.
    first = plan_compaction(stored[:switch_at], settings=after.settings)
    assert not first.would_compact and first.estimated_tokens > before.settings.trigger_tokens
    # Had the bigger window restored keep_recent (3,600), the later compactions would cut elsewhere.
    restored = MemorySettings(context_limit=9000)
    later = [i for i in thread.compacted_at if i > switch_at]
    assert any(
        plan_compaction(stored[:i], settings=restored).compact_up_to_index
        != plan_compaction(stored[:i], settings=after.settings).compact_up_to_index
        for i in later
    )
    # Checkpoint metadata names the model each run used: the switch shows there, nowhere else.
    models = [
        json.loads(m)["model"]
        for (m,) in _rows(
            demo.folder / "leon.db",
            "SELECT metadata FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
            thread.thread_id,
        )
    ]
    switched = models.index(after.model)
    assert set(models[:switched]) == {before.model} and set(models[switched:]) == {after.model}


def test_unsaved_summary_is_missing_from_the_rows_and_its_cache_serves_the_next_calls(
    demo: DemoManifest,
) -> None:
    thread = demo.thread("unsaved_summary")
    (missing,) = thread.summaries_not_stored
    assert thread.compacted_at[0] < missing < thread.compacted_at[-1]
    rows = _summary_rows(demo, thread)
    assert missing not in {at for _, _, at, _, _ in rows}
    assert len(rows) == len(thread.compacted_at) - 1
    stored, calls = _calls(demo, thread)
    (segment,) = thread.settings_segments
    settings = segment.settings
    plan = plan_compaction(stored[:missing], settings=settings)
    text, _ = fake_summary(plan)
    assert plan.compact_up_to_index is not None
    cached = ActiveSummary(summary_text=text, compact_up_to_index=plan.compact_up_to_index)
    last_row = [r for r in rows if r[2] < missing][-1]
    stale = ActiveSummary(summary_text=last_row[0], compact_up_to_index=last_row[1])
    assert stale.compact_up_to_index != cached.compact_up_to_index
    following = [i for i in calls if missing < i < next(at for at in thread.compacted_at if at > missing)]
    assert following, "calls between the unsaved compaction and the next one reuse its summary"
    for i in following:
        assert stored[i].input_tokens == _billed(stored, i, settings, cached)
        assert stored[i].input_tokens != _billed(stored, i, settings, stale)


def test_a_split_turn_is_stored_with_its_prefix(demo: DemoManifest) -> None:
    for key in ("compaction", "standalone"):
        rows = _summary_rows(demo, demo.thread(key))
        assert any(split == 1 and prefix for _, _, _, split, prefix in rows), key
        assert all(bool(split) == bool(prefix) for _, _, _, split, prefix in rows), key


def test_large_window_thread_has_real_volume_and_prunes_but_never_compacts(demo: DemoManifest) -> None:
    thread = demo.thread("large_window")
    (segment,) = thread.settings_segments
    assert thread.threads_model == "leon:large" and segment.settings.context_limit == 1_000_000
    stored, calls = _calls(demo, thread)
    assert len(calls) >= 10 and thread.compacted_at == () and thread.summaries == 0
    assert 15_000 <= estimate_tokens(stored) <= 30_000
    outputs = [len(m.text) for m in stored if m.type is MessageType.TOOL]
    assert sum(3000 < n <= 10_000 for n in outputs) >= 2 and sum(n > 10_000 for n in outputs) >= 2
    last = plan_compaction(stored[: calls[-1]], settings=segment.settings)
    for action in (PruneAction.SOFT_TRIMMED, PruneAction.HARD_CLEARED):
        assert last.pruning.count(action) >= 1, action
    assert last.estimated_tokens < 0.03 * segment.settings.context_limit

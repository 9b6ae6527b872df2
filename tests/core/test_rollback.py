"""Rollback and undo against data Mycel itself wrote (the sample home, real AsyncSqliteSaver rows)."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core.messages import Message, MessageType, ToolCall
from memory_core.records import CheckpointRow, RunEvent, SummaryRow
from memory_core.rollback import (
    RollbackRefused,
    head_fingerprint,
    overtaken_rollback,
    plan_rollback,
    running_status,
)
from memory_core.stores.write.rollback_writer import apply_checkpoint_copy

THREAD = "m_npRsndIka9dx-2"
COMPACTED_THREAD = "m_0D8EzdJXJhk9-2"


def _rows(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as conn:
        return {
            row[0]: hashlib.sha256(repr(row).encode()).hexdigest()
            for row in conn.execute(
                "SELECT checkpoint_id, thread_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints"
            )
        }


def _ids(db: Path, thread_id: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
                (thread_id,),
            )
        ]


def _fingerprint(db: Path, thread_id: str) -> str:
    ids = _ids(db, thread_id)
    return head_fingerprint(thread_id=thread_id, head_checkpoint_id=ids[-1], checkpoint_count=len(ids))


def _langgraph_messages(db: Path, thread_id: str, checkpoint_id: str | None = None) -> list[tuple[str, str]]:
    configurable = {"thread_id": thread_id, **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.is_setup = True  # never let the saver alter Mycel's schema
        found = saver.get_tuple({"configurable": configurable})
    assert found is not None
    return [(type(m).__name__, str(m.content)) for m in found.checkpoint["channel_values"]["messages"]]


def test_rollback_makes_the_target_state_active_and_keeps_every_row(sample_home: Path):
    db = sample_home / "leon.db"
    ids = _ids(db, THREAD)
    target, old_head = ids[10], ids[-1]
    before_rows = _rows(db)
    expected = _langgraph_messages(db, THREAD, target)
    head_messages = _langgraph_messages(db, THREAD)
    assert expected != head_messages

    applied = apply_checkpoint_copy(
        main_db=db,
        summary_db=None,
        thread_id=THREAD,
        target_checkpoint_id=target,
        expected_fingerprint=_fingerprint(db, THREAD),
        actor="alice",
    )

    assert applied.previous_head_checkpoint_id == old_head
    assert _ids(db, THREAD)[-1] == applied.new_head_checkpoint_id
    assert _langgraph_messages(db, THREAD) == expected
    after_rows = _rows(db)
    assert len(after_rows) == len(before_rows) + 1
    assert all(after_rows[key] == value for key, value in before_rows.items())
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.is_setup = True
        head = saver.get_tuple({"configurable": {"thread_id": THREAD}})
    assert head is not None and head.parent_config is not None
    assert head.parent_config["configurable"]["checkpoint_id"] == target
    assert head.metadata["source"] == "update"
    assert head.metadata["mycel_dashboard"]["actor"] == "alice"
    assert head.metadata["mycel_dashboard"]["previous_head"] == old_head


def test_undo_rolls_forward_to_the_previous_head(sample_home: Path):
    db = sample_home / "leon.db"
    ids = _ids(db, THREAD)
    original = _langgraph_messages(db, THREAD)
    applied = apply_checkpoint_copy(
        main_db=db,
        summary_db=None,
        thread_id=THREAD,
        target_checkpoint_id=ids[5],
        expected_fingerprint=_fingerprint(db, THREAD),
        actor="alice",
    )
    undone = apply_checkpoint_copy(
        main_db=db,
        summary_db=None,
        thread_id=THREAD,
        target_checkpoint_id=applied.previous_head_checkpoint_id,
        expected_fingerprint=_fingerprint(db, THREAD),
        actor="alice",
        action="undo",
    )
    assert _langgraph_messages(db, THREAD) == original
    assert len(_ids(db, THREAD)) == len(ids) + 2
    assert undone.previous_head_checkpoint_id == applied.new_head_checkpoint_id


def test_a_stale_preview_is_refused_and_nothing_is_written(sample_home: Path):
    db = sample_home / "leon.db"
    ids = _ids(db, THREAD)
    stale = head_fingerprint(thread_id=THREAD, head_checkpoint_id=ids[-2], checkpoint_count=len(ids) - 1)
    before = _rows(db)
    with pytest.raises(RollbackRefused, match="changed since the preview"):
        apply_checkpoint_copy(
            main_db=db,
            summary_db=None,
            thread_id=THREAD,
            target_checkpoint_id=ids[3],
            expected_fingerprint=stale,
            actor="alice",
        )
    assert _rows(db) == before


def test_a_locked_database_is_refused_clearly(sample_home: Path, monkeypatch: pytest.MonkeyPatch):
    import memory_core.stores.write.rollback_writer as writer

    monkeypatch.setattr(writer, "_BUSY_TIMEOUT_S", 0.2)
    db = sample_home / "leon.db"
    ids = _ids(db, THREAD)
    fingerprint = _fingerprint(db, THREAD)
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(RollbackRefused, match="locked"):
            apply_checkpoint_copy(
                main_db=db,
                summary_db=None,
                thread_id=THREAD,
                target_checkpoint_id=ids[3],
                expected_fingerprint=fingerprint,
                actor="alice",
            )
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert len(_ids(db, THREAD)) == len(ids)


def test_rollback_never_touches_the_schema_or_journal_mode(sample_home: Path):
    db = sample_home / "leon.db"
    with sqlite3.connect(db) as conn:
        schema = conn.execute("SELECT group_concat(sql, ';') FROM sqlite_master").fetchone()[0]
    ids = _ids(db, THREAD)
    apply_checkpoint_copy(
        main_db=db,
        summary_db=None,
        thread_id=THREAD,
        target_checkpoint_id=ids[2],
        expected_fingerprint=_fingerprint(db, THREAD),
        actor="alice",
    )
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT group_concat(sql, ';') FROM sqlite_master").fetchone()[0] == schema
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_stale_summaries_are_deactivated_and_undo_restores_them(sample_home: Path):
    db, summary_db = sample_home / "leon.db", sample_home / "summary.db"
    with sqlite3.connect(summary_db) as conn:
        active = conn.execute(
            "SELECT summary_id FROM summaries WHERE thread_id = ? AND is_active = 1", (COMPACTED_THREAD,)
        ).fetchone()[0]
    ids = _ids(db, COMPACTED_THREAD)
    applied = apply_checkpoint_copy(
        main_db=db,
        summary_db=summary_db,
        thread_id=COMPACTED_THREAD,
        target_checkpoint_id=ids[4],
        expected_fingerprint=_fingerprint(db, COMPACTED_THREAD),
        actor="alice",
        deactivate_summary_ids=[active],
    )
    assert applied.deactivated_summary_ids == (active,)
    with sqlite3.connect(summary_db) as conn:
        assert (
            conn.execute("SELECT is_active FROM summaries WHERE summary_id = ?", (active,)).fetchone()[0] == 0
        )
    apply_checkpoint_copy(
        main_db=db,
        summary_db=summary_db,
        thread_id=COMPACTED_THREAD,
        target_checkpoint_id=applied.previous_head_checkpoint_id,
        expected_fingerprint=_fingerprint(db, COMPACTED_THREAD),
        actor="alice",
        action="undo",
        reactivate_summary_ids=applied.deactivated_summary_ids,
    )
    with sqlite3.connect(summary_db) as conn:
        assert (
            conn.execute("SELECT is_active FROM summaries WHERE summary_id = ?", (active,)).fetchone()[0] == 1
        )


def test_a_writer_appending_between_preview_and_apply_makes_the_preview_stale(sample_home: Path):
    db = sample_home / "leon.db"
    ids = _ids(db, THREAD)
    fingerprint = _fingerprint(db, THREAD)

    def append_like_mycel() -> None:
        # A second rollback from another process stands in for Mycel's next checkpoint.
        apply_checkpoint_copy(
            main_db=db,
            summary_db=None,
            thread_id=THREAD,
            target_checkpoint_id=ids[-1],
            expected_fingerprint=fingerprint,
            actor="mycel",
        )

    writer = threading.Thread(target=append_like_mycel)
    writer.start()
    writer.join()
    with pytest.raises(RollbackRefused):
        apply_checkpoint_copy(
            main_db=db,
            summary_db=None,
            thread_id=THREAD,
            target_checkpoint_id=ids[3],
            expected_fingerprint=fingerprint,
            actor="alice",
        )
    assert len(_ids(db, THREAD)) == len(ids) + 1


# --- the pure impact report ---------------------------------------------------------------------------

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _row(checkpoint_id: str, parent: str | None, *, minutes_ago: int = 60) -> CheckpointRow:
    return CheckpointRow(
        checkpoint_id=checkpoint_id,
        parent_checkpoint_id=parent,
        step=None,
        source="loop",
        created_at=NOW - timedelta(minutes=minutes_ago),
        run_id=None,
        model=None,
        metadata={},
        messages=None,
        estimated_tokens=None,
    )


def _summary(index: int, *, active: bool) -> SummaryRow:
    return SummaryRow(
        summary_id=f"s{index}",
        thread_id="t",
        summary_text="…",
        compact_up_to_index=index,
        compacted_at=index + 3,
        is_split_turn=False,
        split_turn_prefix=None,
        is_active=active,
        created_at=None,
        store="summary",
    )


HUMAN = Message(MessageType.HUMAN, "hello", id="h1")
AI_CALL = Message(MessageType.AI, "", id="a1", tool_calls=(ToolCall("c1", "Bash"),))
TOOL = Message(MessageType.TOOL, "ok", id="t1", tool_call_id="c1")
AI_DONE = Message(MessageType.AI, "done", id="a2")


def test_impact_lists_leaving_messages_later_checkpoints_and_stale_summaries():
    rows = [_row("1", None), _row("2", "1"), _row("3", "2")]
    impact = plan_rollback(
        thread_id="t",
        checkpoints=rows,
        target_checkpoint_id="1",
        target_messages=[HUMAN],
        head_messages=[HUMAN, AI_CALL, TOOL, AI_DONE],
        summaries=[_summary(3, active=True), _summary(1, active=False)],
        now=NOW,
    )
    assert [m.id for m in impact.messages_leaving] == ["a1", "t1", "a2"]
    assert impact.later_checkpoints == ("2", "3")
    assert [s.summary_id for s in impact.summaries_to_deactivate] == ["s3"]
    assert impact.can_apply
    assert impact.fingerprint == head_fingerprint(thread_id="t", head_checkpoint_id="3", checkpoint_count=3)


def test_rolling_back_to_the_head_is_refused_as_a_noop():
    rows = [_row("1", None), _row("2", "1")]
    impact = plan_rollback(
        thread_id="t",
        checkpoints=rows,
        target_checkpoint_id="2",
        target_messages=[],
        head_messages=[],
        now=NOW,
    )
    assert not impact.can_apply_with(force=True)
    assert impact.refusals[0].startswith("noop")


def test_a_fresh_checkpoint_means_running_and_force_overrides_it():
    rows = [_row("1", None), _row("2", "1", minutes_ago=0)]
    impact = plan_rollback(
        thread_id="t",
        checkpoints=rows,
        target_checkpoint_id="1",
        target_messages=[HUMAN],
        head_messages=[HUMAN, AI_DONE],
        now=NOW,
    )
    assert impact.running.is_running
    assert not impact.can_apply
    assert impact.can_apply_with(force=True)


def test_an_unfinished_run_counts_as_running():
    events = [
        RunEvent(1, "t", "run-1", "run_start", {}, None, None),
        RunEvent(2, "t", "run-1", "text", {}, None, None),
    ]
    assert running_status(now=NOW, newest_checkpoint_at=None, run_events=events).is_running
    finished = [*events, RunEvent(3, "t", "run-1", "run_done", {}, None, None)]
    assert not running_status(now=NOW, newest_checkpoint_at=None, run_events=finished).is_running


def test_a_target_with_unanswered_tool_calls_is_warned_about():
    rows = [_row("1", None), _row("2", "1")]
    impact = plan_rollback(
        thread_id="t",
        checkpoints=rows,
        target_checkpoint_id="1",
        target_messages=[HUMAN, AI_CALL],
        head_messages=[HUMAN, AI_CALL, TOOL],
        now=NOW,
    )
    assert any("Bash" in warning for warning in impact.warnings)


# --- a rollback overtaken by a run that loaded the old head -------------------------------------------


def _ours(checkpoint_id: str, parent: str, action: str, target: str = "2") -> CheckpointRow:
    note = {
        "action": action,
        "target": target,
        "at": "2026-11-30T12:00:00",
        "actor": "alice",
        "previous_head": "3",
    }
    return replace(_row(checkpoint_id, parent), metadata={"mycel_dashboard": note})


def test_a_run_that_went_on_from_the_replaced_head_overtakes_the_rollback():
    rows = [_row("1", None), _row("2", "1"), _row("3", "2"), _ours("4", "2", "rollback"), _row("5", "3")]
    found = overtaken_rollback(rows)
    assert found is not None
    assert (found.rollback_checkpoint_id, found.target, found.continued_from, found.actor) == (
        "4",
        "2",
        "3",
        "alice",
    )


def test_a_run_that_went_on_from_the_rollback_keeps_it_active():
    rows = [_row("1", None), _row("2", "1"), _row("3", "2"), _ours("4", "2", "rollback"), _row("5", "4")]
    assert overtaken_rollback(rows) is None
    assert overtaken_rollback(rows[:4]) is None, "the rollback is the head itself"


def test_an_undo_after_the_rollback_is_not_flagged():
    rows = [
        _row("1", None),
        _row("2", "1"),
        _row("3", "2"),
        _ours("4", "2", "rollback"),
        _ours("5", "3", "undo"),
    ]
    assert overtaken_rollback(rows) is None
    assert overtaken_rollback([*rows, _row("6", "5")]) is None


def test_a_lineage_that_leaves_what_was_read_is_not_guessed_and_a_foreign_target_is_not_linked():
    cut = [_ours("4", "2", "rollback"), _row("5", "3"), _row("3", "2")]  # "2" was not read (row cap)
    assert overtaken_rollback(cut) is None
    forged = [
        _row("1", None),
        _row("2", "1"),
        _row("3", "2"),
        _ours("4", "2", "rollback", target="../x"),
        _row("5", "3"),
    ]
    found = overtaken_rollback(forged)
    assert found is not None and found.target == ""
    assert overtaken_rollback([_row("1", None), _row("2", "1")]) is None

"""`mycel-memory rollback`, `undo` and `dry-run` over a copy of the real sample home."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from tests.support.cli import run_cli

COMPACTED = "m_0D8EzdJXJhk9-2"


def _checkpoint_ids(home: Path, thread_id: str) -> list[str]:
    with sqlite3.connect(home / "leon.db") as conn:
        return [
            r[0]
            for r in conn.execute(
                "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
                (thread_id,),
            )
        ]


def _head_message_count(home: Path, thread_id: str) -> int:
    with SqliteSaver.from_conn_string(str(home / "leon.db")) as saver:
        saver.is_setup = True
        found = saver.get_tuple({"configurable": {"thread_id": thread_id}})
    assert found is not None
    return len(found.checkpoint["channel_values"]["messages"])


def test_rollback_dry_run_prints_the_impact_and_writes_nothing(sample_home: Path, capsys):
    ids = _checkpoint_ids(sample_home, COMPACTED)
    code, out, _ = run_cli(capsys, "rollback", COMPACTED, "--to", ids[20], "--dry-run", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["target_checkpoint_id"] == ids[20]
    assert report["head_checkpoint_id"] == ids[-1]
    assert report["messages_leaving"] and report["later_checkpoints"]
    assert [s["compact_up_to_index"] for s in report["summaries_to_deactivate"]] == [16]
    assert _checkpoint_ids(sample_home, COMPACTED) == ids


def test_rollback_then_undo_through_the_cli(sample_home: Path, capsys):
    ids = _checkpoint_ids(sample_home, COMPACTED)
    before = _head_message_count(sample_home, COMPACTED)
    code, out, _ = run_cli(capsys, "rollback", COMPACTED, "--to", ids[20], "--json")
    assert code == 0
    applied = json.loads(out)
    assert applied["previous_head_checkpoint_id"] == ids[-1]
    assert _checkpoint_ids(sample_home, COMPACTED)[-1] == applied["new_head_checkpoint_id"]
    assert _head_message_count(sample_home, COMPACTED) == applied["target_messages"] < before

    code, out, _ = run_cli(capsys, "undo", COMPACTED, "--json")
    assert code == 0
    undone = json.loads(out)
    assert undone["previous_head_checkpoint_id"] == applied["new_head_checkpoint_id"]
    assert undone["reactivated_summaries"] == applied["deactivated_summaries"]
    assert _head_message_count(sample_home, COMPACTED) == before

    code, _, err = run_cli(capsys, "undo", COMPACTED)
    assert code == 2
    assert err.count("\n") == 1 and "nothing to undo" in err


def test_unknown_thread_and_checkpoint_are_one_line_errors(sample_home: Path, capsys):
    code, _, err = run_cli(capsys, "rollback", "no-such-thread", "--to", "x")
    assert code == 2 and "no checkpoints" in err and "Traceback" not in err
    code, _, err = run_cli(capsys, "rollback", COMPACTED, "--to", "not-a-checkpoint")
    assert code == 2 and "not-a-checkpoint" in err
    code, _, err = run_cli(capsys, "dry-run", "no-such-thread")
    assert code == 2 and "unknown thread" in err


def test_rolling_back_to_the_head_is_refused(sample_home: Path, capsys):
    ids = _checkpoint_ids(sample_home, COMPACTED)
    code, _, err = run_cli(capsys, "rollback", COMPACTED, "--to", ids[-1])
    assert code == 2 and "already the active one" in err
    assert _checkpoint_ids(sample_home, COMPACTED) == ids


def test_dry_run_reproduces_the_summary_mycel_wrote_last(sample_home: Path, capsys):
    code, out, _ = run_cli(capsys, "dry-run", COMPACTED, "--json")
    assert code == 0
    report = json.loads(out)
    # Mycel's newest active summary row for this thread: compact_up_to_index 16 (sample README).
    assert report["context_limit"] == 5500
    assert report["would_compact_next_call"] is True
    assert report["compact_up_to_index"] == 16
    assert report["tokens_after"] < report["tokens_before"]
    assert "conversation_text" not in report


def test_dry_run_flags_propose_other_values(sample_home: Path, capsys):
    code, out, _ = run_cli(capsys, "dry-run", COMPACTED, "--json", "--context-limit", "1000000")
    assert code == 0
    assert json.loads(out)["would_compact_next_call"] is False
    code, out, _ = run_cli(
        capsys, "dry-run", COMPACTED, "--json", "--keep-recent-tokens", "100", "--show-text"
    )
    report = json.loads(out)
    assert code == 0
    assert report["summarize_count"] > 16
    assert report["conversation_text"].startswith("[Human]: ")
    assert len(report["conversation_text"]) == report["conversation_text_chars"]
    code, _, err = run_cli(capsys, "dry-run", COMPACTED, "--soft-trim-chars", "-5")
    assert code == 2 and "--soft-trim-chars" in err


def test_thread_says_when_a_rollback_was_overtaken_by_the_agent(sample_home: Path, capsys):
    from langgraph.checkpoint.base.id import uuid6

    ids = _checkpoint_ids(sample_home, COMPACTED)
    assert run_cli(capsys, "rollback", COMPACTED, "--to", ids[20], "--json")[0] == 0
    code, out, _ = run_cli(capsys, "thread", COMPACTED, "--json")
    assert code == 0 and json.loads(out)["rollback_overtaken"] is None
    # A run that had loaded the replaced head writes its next checkpoint under it.
    with SqliteSaver.from_conn_string(str(sample_home / "leon.db")) as saver:
        saver.is_setup = True
        config = {"configurable": {"thread_id": COMPACTED, "checkpoint_ns": "", "checkpoint_id": ids[-1]}}
        loaded = saver.get_tuple(config)
        assert loaded is not None
        saver.put(
            config, {**loaded.checkpoint, "id": str(uuid6(clock_seq=99))}, {"source": "loop", "step": 99}, {}
        )
    code, out, _ = run_cli(capsys, "thread", COMPACTED, "--json")
    overtaken = json.loads(out)["rollback_overtaken"]
    assert (overtaken["target"], overtaken["continued_from"]) == (ids[20], ids[-1])
    code, _, err = run_cli(capsys, "thread", COMPACTED)
    assert code == 0 and "no longer active" in err and ids[-1] in err

"""The retention planner on hand-built byte facts: what each policy keeps, why, and what it frees."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from memory_core.footprint.facts import CheckpointBytes, ThreadBytes, blob_key
from memory_core.footprint.retention import (
    RetentionPolicy,
    RetentionPolicyError,
    plan_as_dict,
    plan_retention,
    rollback_targets,
    unreachable_after,
)
from memory_core.footprint.script import ScriptError, ScriptTarget, literal, retention_script
from memory_core.records import CheckpointRow, FileOperation, RunEvent, SummaryRow

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _cp(
    n: int, parent: int | None, *, size: int = 100, refs: frozenset[str] = frozenset()
) -> CheckpointBytes:
    return CheckpointBytes(
        checkpoint_id=f"c{n:02d}",
        parent_id=None if parent is None else f"c{parent:02d}",
        checkpoint=size,
        metadata=10,
        writes=5,
        blob_refs=refs,
    )


def _chain(n: int, thread: str = "t1") -> ThreadBytes:
    """c01 <- c02 <- ... <- cN, each 115 bytes."""
    return ThreadBytes(
        thread, "leon.db", "main", tuple(_cp(i, i - 1 if i > 1 else None) for i in range(1, n + 1))
    )


def _plan(threads, policy, *, protected=None, activity=None):
    return plan_retention(threads, policy, protected=protected or {}, last_activity=activity or {}, now=NOW)


def test_keep_last_keeps_the_newest_k_and_frees_the_rest_exactly() -> None:
    plan = _plan([_chain(6)], RetentionPolicy(keep_last=2))
    (t,) = plan.threads
    assert dict(t.keeps) == {"c06": "head", "c05": "last 2"}
    assert t.drops == ("c01", "c02", "c03", "c04")
    assert t.frees_bytes == 4 * 115
    assert plan.frees_bytes == 460


def test_on_devs_layout_fork_points_are_inferred_from_order_and_message_counts() -> None:
    # Mycel dev names no parents; its step is the message count. c04 holds fewer messages than c03: the
    # conversation was cut back to c02's 4 messages and grew again, so c02 is where the old branch hangs.
    steps = {1: 2, 2: 4, 3: 6, 4: 4, 5: 6, 6: 8}
    cps = [replace(_cp(n, None), step=step) for n, step in steps.items()]
    thread = ThreadBytes("t1", "postgresql agent", "dev", tuple(cps))
    (t,) = _plan([thread], RetentionPolicy(heads_only=True)).threads
    assert dict(t.keeps) == {"c06": "head", "c02": "fork point (inferred from checkpoint order)"}
    assert t.drops == ("c01", "c03", "c04", "c05")
    assert t.protected == dict(t.keeps)
    # A thread that only grew has none; neither has one with parents (main's layout says them).
    linear = ThreadBytes(
        "t2", "postgresql agent", "dev", tuple(replace(_cp(n, None), step=2 * n) for n in range(1, 5))
    )
    (t,) = _plan([linear], RetentionPolicy(heads_only=True)).threads
    assert dict(t.keeps) == {"c04": "head"}


def test_heads_only_keeps_fork_points_and_rollback_targets_and_says_why() -> None:
    cps = [_cp(1, None), _cp(2, 1), _cp(3, 2), _cp(4, 2), _cp(5, 4), _cp(6, 5), _cp(7, 6)]
    thread = ThreadBytes("t1", "leon.db", "main", tuple(cps))
    protected = {"t1": {"c05": "dashboard rollback target", "c07": "undo target"}}
    (t,) = _plan([thread], RetentionPolicy(heads_only=True), protected=protected).threads
    assert dict(t.keeps) == {
        "c07": "head, undo target",
        "c05": "dashboard rollback target",
        "c02": "fork point",
    }
    assert t.drops == ("c01", "c03", "c04", "c06")
    assert set(t.protected) == {"c07", "c05", "c02"}


def test_idle_rule_spares_active_threads_and_strips_idle_ones_to_their_head() -> None:
    idle, active, unknown = _chain(4, "idle"), _chain(4, "active"), _chain(4, "unknown")
    activity = {"idle": NOW - timedelta(days=30), "active": NOW - timedelta(days=1), "unknown": None}
    plan = _plan([idle, active, unknown], RetentionPolicy(idle_days=7), activity=activity)
    by_id = {t.thread_id: t for t in plan.threads}
    assert dict(by_id["idle"].keeps) == {"c04": "head"}
    assert by_id["idle"].idle is True
    assert by_id["active"].drops == ()
    assert by_id["active"].keeps["c01"] == "thread active within 7 days"
    assert by_id["unknown"].drops == ()
    assert plan.threads[0].thread_id == "idle"  # largest saving first


def test_rules_combine_a_checkpoint_goes_when_any_rule_drops_it() -> None:
    activity = {"a": NOW - timedelta(days=1), "b": NOW - timedelta(days=10)}
    plan = _plan(
        [_chain(5, "a"), _chain(5, "b")], RetentionPolicy(keep_last=3, idle_days=7), activity=activity
    )
    by_id = {t.thread_id: t for t in plan.threads}
    assert list(by_id["a"].keeps) == ["c05", "c04", "c03"]
    assert list(by_id["b"].keeps) == ["c05"]


def test_idle_for_exactly_d_days_counts_as_idle() -> None:
    plan = _plan([_chain(3)], RetentionPolicy(idle_days=7), activity={"t1": NOW - timedelta(days=7)})
    assert plan.threads[0].drops == ("c01", "c02")


def test_postgres_blobs_are_freed_only_when_no_kept_checkpoint_names_them() -> None:
    shared, old, new = blob_key("messages", "1"), blob_key("messages", "0"), blob_key("messages", "2")
    cps = (
        _cp(1, None, refs=frozenset({old, shared})),
        _cp(2, 1, refs=frozenset({shared})),
        _cp(3, 2, refs=frozenset({shared, new})),
    )
    thread = ThreadBytes(
        "t1", "postgresql public", "main", cps, blob_sizes={old: 1000, shared: 2000, new: 3000}
    )
    (t,) = _plan([thread], RetentionPolicy(heads_only=True)).threads
    assert t.frees_blobs == (old,)
    assert t.frees_bytes == 2 * 115 + 1000


@pytest.mark.parametrize(
    ("keep_last", "idle_days", "message"),
    [
        ("0", None, "keep-last must be 1 or more"),
        ("-3", None, "keep-last must be 1 or more"),
        ("x", None, "keep-last must be a whole number"),
        ("1e3", None, "keep-last must be a whole number"),
        (None, "-1", "idle-days must be 0 or more"),
        (None, "<b>", "idle-days must be a whole number"),
        (None, None, "name a policy"),
    ],
)
def test_bad_policies_are_refused_with_one_clear_line(keep_last, idle_days, message) -> None:
    with pytest.raises(RetentionPolicyError, match=message) as caught:
        RetentionPolicy.parse(keep_last=keep_last, heads_only=False, idle_days=idle_days)
    assert "\n" not in str(caught.value)


def test_rollback_targets_come_from_the_dashboards_note() -> None:
    def row(cid: str, metadata: dict) -> CheckpointRow:
        return CheckpointRow(cid, None, 1, "update", None, None, None, metadata, 1, 1)

    note = {"mycel_dashboard": {"action": "rollback", "target": "c02", "previous_head": "c04"}}
    rows = [row("c05", note), row("c04", {}), row("c02", {}), row("c01", {"mycel_dashboard": "junk"})]
    assert rollback_targets(rows) == {"c02": "dashboard rollback target", "c04": "undo target"}


def test_unreachable_by_run_id_and_summaries_by_message_count() -> None:
    at = NOW - timedelta(days=3)

    def row(cid: str, run: str, messages: int) -> CheckpointRow:
        return CheckpointRow(cid, None, 1, "loop", at, run, None, {"run_id": run}, messages, 1)

    rows = [row("c01", "r1", 2), row("c02", "r1", 4), row("c03", "r2", 6), row("c04", "r3", 8)]
    (t,) = _plan([_chain(4)], RetentionPolicy(keep_last=2)).threads
    op = FileOperation("op1", "t1", "r1", at, "write", "/a.txt", None, "x", None, "applied", "file_ops")
    kept_op = FileOperation("op2", "t1", "r2", at, "write", "/b.txt", None, "x", None, "applied", "file_ops")
    events = [
        RunEvent(1, "t1", "r1", "run_start", {}, None, at),
        RunEvent(2, "t1", "r1", "run_done", {}, None, at),
    ]
    summary = SummaryRow("s1", "t1", "text", 2, 3, False, None, True, at, "summary")
    lost = unreachable_after(t, rows, file_operations=[op, kept_op], run_events=events, summaries=[summary])
    assert lost.file_operations == ("op1 /a.txt",)
    assert lost.run_events == ("r1 (2 events)",)
    assert len(lost.summaries) == 1 and "c02" in lost.summaries[0] and "still applies" in lost.summaries[0]
    assert lost.joined_by == "run id"


def test_json_names_keeps_with_reason_and_frees_bytes() -> None:
    data = plan_as_dict(_plan([_chain(3)], RetentionPolicy(keep_last=1)))
    (t,) = data["threads"]
    assert t["frees_bytes"] == 230
    assert t["keeps"] == [{"checkpoint_id": "c03", "reason": "head"}]
    assert data["totals"]["frees_bytes"] == 230


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_literals_escape_quotes_and_spell_control_characters(engine: str) -> None:
    assert literal("it's", engine=engine) == "'it''s'"
    fn = "char" if engine == "sqlite" else "chr"
    assert literal("a\nb", engine=engine) == f"('a' || {fn}(10) || 'b')"
    assert literal("", engine=engine) == "''"
    assert literal("ü—漢", engine=engine) == "'ü—漢'"
    with pytest.raises(ScriptError, match="NUL"):
        literal("a\x00b", engine=engine)


def test_the_script_header_names_policy_totals_and_backup() -> None:
    plan = _plan([_chain(3, "t'1\n.shell rm -rf /")], RetentionPolicy(keep_last=1))
    text = retention_script(plan, ScriptTarget("sqlite", "/home/me/.leon/leon.db"))
    assert "run with mycel stopped, and back up first" in text.lower()
    assert 'sqlite3 /home/me/.leon/leon.db ".backup' in text
    assert "Frees 230 bytes" in text
    assert "keep the last 1 checkpoints" in text
    # No line of the script starts a sqlite3 dot-command, whatever the id holds.
    assert not any(line.startswith(".") for line in text.splitlines())
    assert text.rstrip().endswith("PRAGMA wal_checkpoint(TRUNCATE);")

"""Rollback and undo on a real PostgreSQL server, for both layouts: Mycel dev's own database (schema `agent`)
and main's layout written by LangGraph's AsyncPostgresSaver through the demo graph. Every new head is read
back by our reader and by LangGraph's own `aget_tuple` (allowed here, never in product code)."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from memory_core.app.rollback import (
    DEV_RESTART_NOTE,
    apply_rollback,
    preview_rollback,
    preview_undo,
)
from memory_core.rollback import ROLLBACK_METADATA_KEY, RollbackApplied, RollbackRefused
from memory_core.stores.reader import MycelReader
from tests.postgres.test_pg_reader import DATA, TRUTH, reader_for
from tests.support.postgres import write_counts

SUMMARIES_THREAD = "m_rE2uGx6NbP9w-1"  # 9 checkpoints, summaries up to 4, 8 and 12 in leon.db
BREAKER_THREAD = "m_sK5yDq1FvT7a-2"  # the head's breaker is open (3 failures)
DEV_CHANNELS = {
    "messages",
    "tool_permission_context",
    "pending_permission_requests",
    "resolved_permission_requests",
    "memory_compaction_state",
    "integration_instruction_state",
}


def _truth(thread_id: str) -> dict[str, Any]:
    return next(t for t in TRUTH["threads"] if t["thread_id"] == thread_id)


def _dev_reader(url: str, tmp_path: Path) -> MycelReader:
    # Dev without Supabase keeps summaries in SQLite at LEON_DB_PATH: the sample's leon.db (a copy).
    leon = tmp_path / "leon.db"
    if not leon.exists():
        shutil.copy(DATA / "leon.db", leon)
    return reader_for(url, tmp_path, LEON_DB_PATH=str(leon))


def _ids(url: str, schema: str, thread_id: str) -> list[str]:
    query = sql.SQL(
        "SELECT checkpoint_id FROM {}.checkpoints WHERE thread_id = %s ORDER BY checkpoint_id"
    ).format(sql.Identifier(schema))
    with psycopg.connect(url) as conn:
        rows = conn.execute(query, (thread_id,)).fetchall()
    return [str(r[0]) for r in rows]


async def _saver_tuple(url: str, schema: str, thread_id: str, checkpoint_id: str | None = None) -> Any:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f"SET search_path TO {schema}")
        config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        if checkpoint_id:
            config["configurable"]["checkpoint_id"] = checkpoint_id
        return await AsyncPostgresSaver(conn=conn).aget_tuple(config)  # type: ignore[arg-type]


def saver_tuple(url: str, schema: str, thread_id: str, checkpoint_id: str | None = None) -> Any:
    """LangGraph's own reading of a checkpoint (the head without an id), as Mycel loads it."""
    return asyncio.run(_saver_tuple(url, schema, thread_id, checkpoint_id))


async def _mycel_like_save(url: str, thread_id: str) -> str:
    """Append one checkpoint as Mycel dev's LangGraphCheckpointStore.save does (six new versions, no parent)."""
    from langgraph.checkpoint.base.id import uuid6
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=0) as conn:
        await conn.execute("SET search_path TO agent")
        saver = AsyncPostgresSaver(conn=conn)
        latest = await saver.aget_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        assert latest is not None
        values = dict(latest.checkpoint["channel_values"])
        step = len(values["messages"])
        new_versions = {
            ch: saver.get_next_version(str(v), None)
            for ch, v in latest.checkpoint["channel_versions"].items()
        }
        checkpoint = {
            **latest.checkpoint,
            "id": str(uuid6(clock_seq=step)),
            "ts": datetime.now(UTC).isoformat(),
            "channel_values": values,
            "channel_versions": new_versions,
            "updated_channels": list(new_versions),
        }
        await saver.aput(
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}},
            checkpoint,  # type: ignore[arg-type]
            {"source": "loop", "step": step},
            new_versions,
        )
        return str(checkpoint["id"])


def _counts_change(url: str, before: list[tuple[Any, ...]]) -> bool:
    # The server's table statistics reach other sessions within a second or so.
    for _ in range(40):
        if write_counts(url) != before:
            return True
        time.sleep(0.1)
    return False


def _active_summaries(leon: Path) -> set[str]:
    with sqlite3.connect(leon) as conn:
        return {str(r[0]) for r in conn.execute("SELECT summary_id FROM summaries WHERE is_active = 1")}


def test_dev_rollback_then_undo_round_trips(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = _dev_reader(pg_dev_sample, tmp_path)
    truth = _truth(SUMMARIES_THREAD)
    ids = _ids(pg_dev_sample, "agent", SUMMARIES_THREAD)
    target_id = ids[3]
    target_state = reader.get_state(SUMMARIES_THREAD, target_id).value
    head_state = reader.get_state(SUMMARIES_THREAD).value
    assert target_state is not None and head_state is not None
    active_before = _active_summaries(tmp_path / "leon.db")

    before = write_counts(pg_dev_sample)
    impact = preview_rollback(reader, SUMMARIES_THREAD, target_id)
    undo_nothing = pytest.raises(RollbackRefused, match="nothing to undo")
    with undo_nothing:
        preview_undo(reader, SUMMARIES_THREAD)
    assert write_counts(pg_dev_sample) == before  # a preview writes nothing
    assert impact.refusals == ()
    assert DEV_RESTART_NOTE in impact.warnings
    assert any("keeps the current compaction breaker (closed" in w for w in impact.warnings)
    stale = {s.summary_id for s in impact.summaries_to_deactivate}
    assert stale and stale <= active_before

    applied = apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    assert _counts_change(pg_dev_sample, before)  # the measure above does see writes
    after = _ids(pg_dev_sample, "agent", SUMMARIES_THREAD)
    assert after == [*ids, applied.new_head_checkpoint_id]  # one more, every old one kept
    assert applied.previous_head_checkpoint_id == truth["newest_checkpoint_id"]
    assert set(applied.deactivated_summary_ids) == stale
    assert _active_summaries(tmp_path / "leon.db") == active_before - stale

    # Our reader and LangGraph's saver both see the target's messages at the new head.
    fresh = _dev_reader(pg_dev_sample, tmp_path)
    new_head = fresh.get_state(SUMMARIES_THREAD).value
    assert new_head is not None
    assert new_head.checkpoint.checkpoint_id == applied.new_head_checkpoint_id
    assert new_head.messages == target_state.messages
    theirs = saver_tuple(pg_dev_sample, "agent", SUMMARIES_THREAD)
    their_target = saver_tuple(pg_dev_sample, "agent", SUMMARIES_THREAD, target_id)
    assert theirs.config["configurable"]["checkpoint_id"] == applied.new_head_checkpoint_id
    assert (
        theirs.checkpoint["channel_values"]["messages"]
        == their_target.checkpoint["channel_values"]["messages"]
    )
    # Dev's recipe: all six channels at new versions, the head as parent, {source, step, audit}.
    assert set(theirs.checkpoint["channel_versions"]) == DEV_CHANNELS
    assert set(theirs.checkpoint["updated_channels"]) == DEV_CHANNELS
    assert theirs.parent_config["configurable"]["checkpoint_id"] == truth["newest_checkpoint_id"]
    assert theirs.metadata["source"] == "update"
    assert theirs.metadata["step"] == len(target_state.messages)
    note = theirs.metadata[ROLLBACK_METADATA_KEY]
    assert (note["action"], note["actor"], note["target"]) == ("rollback", "tester", target_id)
    with psycopg.connect(pg_dev_sample) as conn:
        blobs = conn.execute(
            "SELECT count(*) FROM agent.checkpoint_blobs WHERE thread_id = %s", (SUMMARIES_THREAD,)
        ).fetchone()
    assert blobs == (6 * len(after),)

    undo = preview_undo(fresh, SUMMARIES_THREAD)
    assert undo.target_checkpoint_id == truth["newest_checkpoint_id"]
    undone = apply_rollback(fresh.locations, undo, actor="tester", reader=fresh)
    assert set(undone.reactivated_summary_ids) == stale
    assert _active_summaries(tmp_path / "leon.db") == active_before
    final = _dev_reader(pg_dev_sample, tmp_path).get_state(SUMMARIES_THREAD).value
    assert final is not None and final.messages == head_state.messages
    assert _ids(pg_dev_sample, "agent", SUMMARIES_THREAD) == [*after, undone.new_head_checkpoint_id]


def test_dev_rollback_keeps_the_heads_breaker(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = _dev_reader(pg_dev_sample, tmp_path)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)
    target = saver_tuple(pg_dev_sample, "agent", BREAKER_THREAD, ids[0])
    assert target.checkpoint["channel_values"]["memory_compaction_state"]["breaker_open"] is False
    impact = preview_rollback(reader, BREAKER_THREAD, ids[0])
    assert any("keeps the current compaction breaker (open, 3 failure(s))" in w for w in impact.warnings)
    apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    head = saver_tuple(pg_dev_sample, "agent", BREAKER_THREAD)
    assert head.checkpoint["channel_values"]["memory_compaction_state"] == _truth(BREAKER_THREAD)["breaker"]
    assert head.checkpoint["channel_values"]["messages"] == target.checkpoint["channel_values"]["messages"]


def test_main_layout_rollback_then_undo_round_trips(
    pg_main_db: tuple[str, list[Any]], tmp_path: Path
) -> None:
    url, built = pg_main_db
    thread_id = built[1].thread_id
    reader = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase")
    ids = _ids(url, "public", thread_id)
    target_id = ids[len(ids) // 2]
    target_state = reader.get_state(thread_id, target_id).value
    head_state = reader.get_state(thread_id).value
    assert target_state is not None and head_state is not None
    assert len(target_state.messages) < len(head_state.messages)
    # The demo graph has just written: look from a minute later, as an operator would.
    later = datetime.now(UTC) + timedelta(minutes=1)
    before = write_counts(url)
    impact = preview_rollback(reader, thread_id, target_id, now=later)
    assert write_counts(url) == before
    assert impact.refusals == ()
    assert DEV_RESTART_NOTE not in impact.warnings

    applied = apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    assert _ids(url, "public", thread_id) == [*ids, applied.new_head_checkpoint_id]
    fresh = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase")
    new_head = fresh.get_state(thread_id).value
    assert new_head is not None and new_head.checkpoint.checkpoint_id == applied.new_head_checkpoint_id
    assert new_head.messages == target_state.messages
    theirs = saver_tuple(url, "public", thread_id)
    their_target = saver_tuple(url, "public", thread_id, target_id)
    assert (
        theirs.checkpoint["channel_values"]["messages"]
        == their_target.checkpoint["channel_values"]["messages"]
    )
    assert theirs.parent_config["configurable"]["checkpoint_id"] == ids[-1]
    assert theirs.metadata[ROLLBACK_METADATA_KEY]["previous_head"] == ids[-1]
    assert "api_key" not in theirs.metadata
    # The series (rebuilt from checkpoint_writes where it can) still equals decoding every checkpoint:
    # our checkpoint has no writes of its own.
    from memory_core.stores.series import build_series
    from memory_core.tokens import default_counter

    with fresh.backend.checkpoints(thread_id, []) as snapshot:
        assert snapshot is not None
        decoded = build_series(snapshot.skeleton(), None, snapshot.payload, count=default_counter().count)
    series = fresh.checkpoint_series(thread_id)
    assert series is not None and dict(series.points) == dict(decoded.points)
    head_versions = saver_tuple(url, "public", thread_id, ids[-1]).checkpoint["channel_versions"]
    assert theirs.checkpoint["channel_versions"]["messages"] > head_versions["messages"]

    undo = preview_undo(fresh, thread_id, now=later)
    undone = apply_rollback(fresh.locations, undo, actor="tester", reader=fresh)
    final = reader_for(url, tmp_path, LEON_STORAGE_STRATEGY="supabase").get_state(thread_id).value
    assert final is not None and final.checkpoint.checkpoint_id == undone.new_head_checkpoint_id
    assert final.messages == head_state.messages
    assert (
        saver_tuple(url, "public", thread_id).checkpoint["channel_values"]["messages"]
        == (saver_tuple(url, "public", thread_id, ids[-1]).checkpoint["channel_values"]["messages"])
    )


def test_a_checkpoint_written_between_preview_and_apply_refuses(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = _dev_reader(pg_dev_sample, tmp_path)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)
    impact = preview_rollback(reader, BREAKER_THREAD, ids[2])
    mycel_id = asyncio.run(_mycel_like_save(pg_dev_sample, BREAKER_THREAD))
    with pytest.raises(RollbackRefused, match="changed since the preview"):
        apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD) == [*ids, mycel_id]


def _run_events(url: str, *rows: tuple[str, str]) -> None:
    """Mycel dev's agent.run_events (a web deployment has it; the sample was written without the web app)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS agent.run_events (seq bigserial PRIMARY KEY, thread_id text, run_id text,"
            " event_type text, data text, message_id text, created_at timestamptz DEFAULT now())"
        )
        for run_id, event_type in rows:
            conn.execute(
                "INSERT INTO agent.run_events (thread_id, run_id, event_type, data) VALUES (%s, %s, %s, '{}')",
                (BREAKER_THREAD, run_id, event_type),
            )


def test_a_running_thread_is_refused(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = _dev_reader(pg_dev_sample, tmp_path)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)
    _run_events(pg_dev_sample, ("run-1", "run_start"), ("run-1", "run_done"))
    impact = preview_rollback(reader, BREAKER_THREAD, ids[2])
    assert impact.refusals == ()  # a finished run is not busy
    # A run starts after the preview and before its first checkpoint: the lock-time check sees it.
    _run_events(pg_dev_sample, ("run-2", "run_start"))
    with pytest.raises(RollbackRefused, match="running: .*run-2 started"):
        apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD) == ids
    busy = preview_rollback(reader, BREAKER_THREAD, ids[2])
    assert busy.running.is_running
    assert any("run-2" in r for r in busy.refusals)
    with pytest.raises(RollbackRefused, match="running"):
        apply_rollback(reader.locations, busy, actor="tester", reader=reader)
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD) == ids


def test_two_appliers_racing_on_one_preview_write_exactly_once(pg_dev_sample: str, tmp_path: Path) -> None:
    reader = _dev_reader(pg_dev_sample, tmp_path)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)
    impact = preview_rollback(reader, BREAKER_THREAD, ids[1])
    start = threading.Barrier(2)
    outcomes: list[RollbackApplied | Exception] = []

    def apply() -> None:
        start.wait()
        try:
            outcomes.append(apply_rollback(reader.locations, impact, actor="racer", reader=reader))
        except RollbackRefused as exc:
            outcomes.append(exc)

    racers = [threading.Thread(target=apply) for _ in range(2)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(timeout=30)
    applied = [o for o in outcomes if isinstance(o, RollbackApplied)]
    refused = [o for o in outcomes if isinstance(o, RollbackRefused)]
    assert (len(applied), len(refused)) == (1, 1), outcomes
    assert "changed since the preview" in str(refused[0])
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD) == [*ids, applied[0].new_head_checkpoint_id]


def test_cli_rollback_and_undo_over_postgres(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from tests.support.audit import KeptAuditLog
    from tests.support.cli import kept_main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)

    assert kept_main(["rollback", BREAKER_THREAD, "--to", ids[1], "--dry-run"]) == 0
    text = capsys.readouterr().out
    assert "restart Mycel's backend" in text and "dry run: nothing written" in text
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD) == ids

    audit = KeptAuditLog()
    assert kept_main(["rollback", BREAKER_THREAD, "--to", ids[1], "--json"], audit) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["applied"] is True and DEV_RESTART_NOTE in report["warnings"]
    assert _ids(pg_dev_sample, "agent", BREAKER_THREAD)[-1] == report["new_head_checkpoint_id"]
    assert kept_main(["undo", BREAKER_THREAD], audit) == 0
    # Each write's intent was recorded before it, and its outcome after.
    assert [(intent.action, intent.thread_id, result) for intent, result in audit.entries] == [
        ("rollback", BREAKER_THREAD, "applied"),
        ("undo", BREAKER_THREAD, "applied"),
    ]
    assert f"(was {report['new_head_checkpoint_id']})" in capsys.readouterr().out
    head = saver_tuple(pg_dev_sample, "agent", BREAKER_THREAD)
    before = saver_tuple(pg_dev_sample, "agent", BREAKER_THREAD, ids[-1])
    assert head.checkpoint["channel_values"]["messages"] == before.checkpoint["channel_values"]["messages"]
    assert len(_ids(pg_dev_sample, "agent", BREAKER_THREAD)) == len(ids) + 2


@pytest.fixture
def operator_client(client, db, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from django.contrib.auth.models import Group, User

    settings.DASHBOARD_DEMO_HOME = tmp_path / "demo-home"
    settings.DASHBOARD_FACTS_DIR = tmp_path / "facts-cache"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    user = User.objects.create_user("operator", password="operator-pass-123")
    user.groups.add(Group.objects.get_or_create(name=settings.DASHBOARD_OPERATOR_GROUP)[0])
    client.force_login(user)
    return client


def test_the_page_applies_audits_and_says_mycel_must_restart(
    operator_client, pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    from mycel_dashboard.models import AuditEntry

    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    ids = _ids(pg_dev_sample, "agent", BREAKER_THREAD)
    preview = operator_client.get(f"/threads/{BREAKER_THREAD}/checkpoints/{ids[1]}/rollback/")
    body = preview.content.decode()
    assert preview.status_code == 200
    assert "restart Mycel&#x27;s backend" in body or "restart Mycel's backend" in body
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', body)
    assert fingerprint
    response = operator_client.post(
        f"/threads/{BREAKER_THREAD}/checkpoints/{ids[1]}/rollback/apply/",
        {"fingerprint": fingerprint.group(1)},
    )
    assert response.status_code == 302
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.thread_id) == ("rollback", "applied", BREAKER_THREAD)
    assert entry.after["previous_head_checkpoint_id"] == ids[-1]
    assert entry.after["new_head_checkpoint_id"] == _ids(pg_dev_sample, "agent", BREAKER_THREAD)[-1]
    # The same preview again is stale now: refused, audited, nothing written.
    stale = operator_client.post(
        f"/threads/{BREAKER_THREAD}/checkpoints/{ids[1]}/rollback/apply/",
        {"fingerprint": fingerprint.group(1)},
    )
    assert stale.status_code == 409
    assert AuditEntry.objects.filter(result="refused").count() == 1
    assert len(_ids(pg_dev_sample, "agent", BREAKER_THREAD)) == len(ids) + 1


def test_dev_summaries_in_postgres_change_in_the_same_transaction(
    pg_dev_demo: tuple[str, list[Any]], tmp_path: Path
) -> None:
    url, written = pg_dev_demo
    thread = next(w for w in written if w.summary_ids)
    reader = reader_for(url, tmp_path)

    def active() -> set[str]:
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT summary_id FROM agent.summaries WHERE thread_id = %s AND is_active",
                (thread.thread_id,),
            ).fetchall()
        return {str(r[0]) for r in rows}

    active_before = active()
    later = datetime.now(UTC) + timedelta(minutes=1)  # the demo has just written
    impact = preview_rollback(reader, thread.thread_id, thread.checkpoint_ids[0], now=later)
    assert impact.refusals == ()
    stale = {s.summary_id for s in impact.summaries_to_deactivate}
    assert stale and stale <= active_before
    applied = apply_rollback(reader.locations, impact, actor="tester", reader=reader)
    assert set(applied.deactivated_summary_ids) == stale
    assert active() == active_before - stale
    assert not reader.locations.summary.exists()  # never a SQLite file made up beside a Postgres home
    undo = preview_undo(reader_for(url, tmp_path), thread.thread_id, now=later)
    undone = apply_rollback(reader.locations, undo, actor="tester")
    assert set(undone.reactivated_summary_ids) == stale
    assert active() == active_before


def test_run_events_the_role_may_not_read_refuse_the_preview(pg_dev_demo: Any, tmp_path: Path) -> None:
    # Whether dev's agent is running is in agent.run_events: a preview that cannot read them would be
    # guessing, so it refuses rather than call the thread idle.
    url, written = pg_dev_demo
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS mycel_rollback_blind")
        conn.execute("CREATE ROLE mycel_rollback_blind LOGIN")
        conn.execute("GRANT USAGE ON SCHEMA agent, identity TO mycel_rollback_blind")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA agent, identity TO mycel_rollback_blind")
        conn.execute("REVOKE SELECT ON agent.run_events FROM mycel_rollback_blind")
    blind = reader_for(url.replace("postgresql://mycel@", "postgresql://mycel_rollback_blind@", 1), tmp_path)
    thread = next(t for t in written if len(t.checkpoint_ids) > 1)
    later = datetime.now(UTC) + timedelta(hours=1)  # no "fresh checkpoint" refusal in the way
    impact = preview_rollback(blind, thread.thread_id, thread.checkpoint_ids[0], now=later)
    assert any("cannot check the events store" in r and "run_events" in r for r in impact.refusals), (
        impact.refusals
    )

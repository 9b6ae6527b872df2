"""The exported retention script, run for real with psql on PostgreSQL, for main's layout and dev's.

What the plan frees is what the script frees (independent pg_column_size sums over the three tables before
and after, blobs included), every kept head opens through LangGraph's own AsyncPostgresSaver with the same
messages, and the SQL's own guards spare a fork point, a rollback target and a head that the plan did not
know about.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import psycopg
import pytest
from psycopg import sql

from memory_core.app.retention import retention_dry_run
from memory_core.footprint.retention import RetentionPolicy
from memory_core.footprint.script import retention_script
from memory_core.rollback import ROLLBACK_METADATA_KEY
from memory_core.stores.postgres.connect import close_pools
from tests.postgres.test_pg_reader import reader_for
from tests.postgres.test_pg_rollback import _dev_reader, _mycel_like_save, saver_tuple


def _psql(server: Any, url: str, script: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.sql"
    plan.write_text(script, encoding="utf-8")
    done = subprocess.run(
        [str(server.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", str(plan)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _row_bytes(url: str, schema: str) -> int:
    """The three tables' stored bytes, measured independently of the product's queries."""
    s = sql.Identifier(schema)
    query = sql.SQL(
        "SELECT (SELECT coalesce(sum(pg_column_size(checkpoint) + pg_column_size(metadata)), 0) FROM {}.checkpoints)"
        " + (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM {}.checkpoint_writes)"
        " + (SELECT coalesce(sum(pg_column_size(blob)), 0) FROM {}.checkpoint_blobs)"
    ).format(s, s, s)
    with psycopg.connect(url) as conn:
        return int(conn.execute(query).fetchone()[0])


def _ids(url: str, schema: str, thread_id: str) -> set[str]:
    query = sql.SQL(
        "SELECT checkpoint_id FROM {}.checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
    ).format(sql.Identifier(schema))
    with psycopg.connect(url) as conn:
        return {str(r[0]) for r in conn.execute(query, (thread_id,))}


def _threads(url: str, schema: str) -> list[str]:
    query = sql.SQL("SELECT DISTINCT thread_id FROM {}.checkpoints").format(sql.Identifier(schema))
    with psycopg.connect(url) as conn:
        return [str(r[0]) for r in conn.execute(query)]


def _head(url: str, schema: str, thread_id: str) -> tuple[str, list[tuple[str, Any]]]:
    found = saver_tuple(url, schema, thread_id)
    assert found is not None, f"{thread_id} no longer opens"
    messages = found.checkpoint["channel_values"].get("messages", [])
    return found.config["configurable"]["checkpoint_id"], [(m.type, m.content) for m in messages]


def _check(server: Any, url: str, schema: str, reader: Any, policy: RetentionPolicy, tmp_path: Path) -> None:
    run = retention_dry_run(reader, policy)
    plan = run.plan
    assert run.target.engine == "postgresql" and "***" not in url
    assert set(run.target.schemas.values()) >= {schema}  # type: ignore[union-attr]
    assert plan.frees_bytes > 0
    heads = {t: _head(url, schema, t) for t in _threads(url, schema)}
    before = _row_bytes(url, schema)
    close_pools()
    _psql(server, url, retention_script(plan, run.target), tmp_path)
    assert before - _row_bytes(url, schema) == plan.frees_bytes  # to the byte, blobs included
    for t in plan.threads:
        assert _ids(url, schema, t.thread_id) == set(t.keeps), t.thread_id
    for thread_id, head in heads.items():
        assert _head(url, schema, thread_id) == head


@pytest.mark.parametrize("policy", [RetentionPolicy(heads_only=True), RetentionPolicy(keep_last=2)], ids=str)
def test_main_layout_frees_exactly_the_planned_bytes(pg_server, pg_main_db, tmp_path: Path, policy) -> None:
    url, _ = pg_main_db
    _check(pg_server, url, "public", reader_for(url, tmp_path), policy, tmp_path)


@pytest.mark.parametrize("policy", [RetentionPolicy(heads_only=True), RetentionPolicy(keep_last=3)], ids=str)
def test_dev_sample_frees_exactly_the_planned_bytes(
    pg_server, pg_dev_sample: str, tmp_path: Path, policy
) -> None:
    _check(pg_server, pg_dev_sample, "agent", _dev_reader(pg_dev_sample, tmp_path), policy, tmp_path)


def test_dev_demo_frees_exactly_the_planned_bytes(pg_server, pg_dev_demo, tmp_path: Path) -> None:
    url, _ = pg_dev_demo
    _check(pg_server, url, "agent", reader_for(url, tmp_path), RetentionPolicy(heads_only=True), tmp_path)


async def _put_after_export(url: str, thread_id: str, parent_id: str, rollback_target: str) -> None:
    """A fork from `parent_id` and a dashboard rollback note naming `rollback_target`, by the real saver."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    async with await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=0) as conn:
        saver = AsyncPostgresSaver(conn=conn)
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": parent_id}}
        parent = await saver.aget_tuple(config)  # type: ignore[arg-type]
        assert parent is not None
        fork = {**parent.checkpoint, "id": "0-fork-after-export"}
        await saver.aput(parent.config, fork, {"source": "fork", "step": 99}, {})  # type: ignore[arg-type]
        note = {**parent.checkpoint, "id": "0-rollback-after-export"}
        metadata = {
            "source": "update",
            "step": 100,
            ROLLBACK_METADATA_KEY: {"action": "rollback", "target": rollback_target},
        }
        await saver.aput(  # type: ignore[arg-type]
            {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}, note, metadata, {}
        )


def test_a_stale_script_spares_a_fork_point_and_a_rollback_target_on_main(
    pg_server, pg_main_db, tmp_path: Path
) -> None:
    url, _ = pg_main_db
    run = retention_dry_run(reader_for(url, tmp_path), RetentionPolicy(heads_only=True))
    script = retention_script(run.plan, run.target)
    thread = max(run.plan.touched, key=lambda t: len(t.drops))
    forked_from, target = thread.drops[1], thread.drops[3]
    asyncio.run(_put_after_export(url, thread.thread_id, forked_from, target))
    close_pools()
    _psql(pg_server, url, script, tmp_path)
    left = _ids(url, "public", thread.thread_id)
    assert {forked_from, target} <= left
    assert set(thread.drops) - left == set(thread.drops) - {forked_from, target}
    # Blobs a spared checkpoint names stay: it still opens through the saver.
    spared = saver_tuple(url, "public", thread.thread_id, forked_from)
    assert spared is not None and spared.checkpoint["channel_values"].get("messages")


def test_a_script_run_on_an_older_copy_spares_that_copys_head_on_dev(
    pg_server, pg_dev_demo, tmp_path: Path
) -> None:
    url, _ = pg_dev_demo
    close_pools()
    older = pg_server.create_database("dev_demo_older", template=unquote(urlparse(url).path.lstrip("/")))
    reader = reader_for(url, tmp_path)
    thread_id = max(
        retention_dry_run(reader, RetentionPolicy(heads_only=True)).plan.touched, key=lambda t: len(t.drops)
    ).thread_id
    old_head = _head(older, "agent", thread_id)
    asyncio.run(_mycel_like_save(url, thread_id))  # Mycel went on after the backup was taken
    run = retention_dry_run(reader_for(url, tmp_path / "again"), RetentionPolicy(heads_only=True))
    plan = next(t for t in run.plan.threads if t.thread_id == thread_id)
    assert old_head[0] in plan.drops
    close_pools()
    _psql(pg_server, older, retention_script(run.plan, run.target), tmp_path)
    assert old_head[0] in _ids(older, "agent", thread_id)
    assert _head(older, "agent", thread_id) == old_head


@pytest.fixture
def pg_client(client, db, settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
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


def test_the_page_and_export_over_postgres(pg_client, pg_dev_demo, capsys, monkeypatch) -> None:
    import json
    import re

    from memory_core.cli import main

    url, _ = pg_dev_demo
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    assert main(["retention", "--heads-only", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    page = pg_client.get("/storage/retention/", {"heads_only": "on"})
    assert page.status_code == 200
    total = re.search(r'id="retention-frees" data-bytes="(\d+)"', page.content.decode())
    assert total and int(total.group(1)) == data["totals"]["frees_bytes"] > 0
    script = pg_client.post("/storage/retention/export/", {"heads_only": "on"})
    assert script.status_code == 200
    text = script.content.decode()
    assert 'DELETE FROM "agent".checkpoint_blobs' in text and 'VACUUM FULL "agent".checkpoints;' in text
    assert "psql " in text and "pg_dump " in text


def test_an_unreachable_server_is_a_message_on_the_page(pg_client, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("LEON_POSTGRES_URL", f"postgresql://reader:pw-hidden@/mycel?host={tmp_path / 'none'}")
    page = pg_client.get("/storage/retention/", {"keep_last": "2"})
    assert page.status_code == 200
    body = page.content.decode()
    assert "cannot reach the server" in body and "pw-hidden" not in body

"""The Postgres test fixtures themselves: a real server, the dev sample loaded, main's layout written by
LangGraph's own AsyncPostgresSaver."""

from __future__ import annotations

import json

import psycopg

from tests.support.sample_data import PG_DEV_SAMPLE


def test_the_dev_sample_is_mycel_devs_database(pg_dev_sample: str) -> None:
    truth = json.loads((PG_DEV_SAMPLE / "truth.json").read_text())
    with psycopg.connect(pg_dev_sample) as conn:
        counts = dict(conn.execute("SELECT thread_id, count(*) FROM agent.checkpoints GROUP BY 1").fetchall())
        blobs = conn.execute("SELECT count(*) FROM agent.checkpoint_blobs").fetchone()
    assert sum(counts.values()) == 65 and blobs == (390,)
    assert counts == {t["thread_id"]: t["checkpoint_count"] for t in truth["threads"]}


def test_main_layout_is_written_by_langgraphs_own_saver(pg_main_db) -> None:
    url, built = pg_main_db
    with psycopg.connect(url) as conn:
        rows = dict(conn.execute("SELECT thread_id, count(*) FROM checkpoints GROUP BY 1").fetchall())
        keys = conn.execute("SELECT count(*) FROM checkpoints WHERE metadata ? 'api_key'").fetchone()
    assert set(rows) == {b.thread_id for b in built} and all(n > 3 for n in rows.values())
    # As in Mycel main, the model config (api_key included) rides into every checkpoint's metadata.
    assert keys == (sum(rows.values()),)


def test_the_dashboards_own_database_runs_on_postgres(pg_server, tmp_path) -> None:
    """DATABASE_URL on the same server: migrations, an account, and an audited row land in Postgres."""
    import os
    import subprocess
    import sys

    from tests.support.server import ROOT

    url = pg_server.create_database("dashboard_own")
    env = {**os.environ, "DATABASE_URL": url.replace("postgresql://", "postgres://", 1), "SECRET_KEY": "test"}

    def manage(*argv: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *argv],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    manage("migrate", "--noinput")
    manage("dashboard_user", "ops", "--role", "operator", "--password", "s3cret-pass-word")
    with psycopg.connect(url) as conn:
        users = conn.execute("SELECT username FROM auth_user").fetchall()
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
    assert users == [("ops",)]
    assert "mycel_dashboard_auditentry" in tables

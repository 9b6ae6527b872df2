"""The Threads list's search (part of an id or name) on a PostgreSQL dashboard database reads trigram
indexes (migration 0014), not every indexed thread: the very SQL Django writes for the search, planned by
the server over 20,000 threads as wide as real ones, reads both indexes; and a search finds what it should."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import psycopg

from tests.support.server import ROOT

# What Django writes for web/fleet_index.py's `thread_id__icontains | name_key__contains` on PostgreSQL.
SEARCH = (
    "SELECT thread_id FROM mycel_dashboard_fleetthread WHERE store = %s AND "
    "(UPPER(mycel_dashboard_fleetthread.thread_id::text) LIKE UPPER(%s) "
    "OR mycel_dashboard_fleetthread.name_key::text LIKE %s)"
)


def test_the_search_reads_trigram_indexes(pg_server, tmp_path: Path) -> None:
    from tests.support.postgres import database_name

    url = pg_server.create_database(database_name("fleet_search"))
    env = {**os.environ, "DATABASE_URL": url, "DASHBOARD_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(
            "INSERT INTO mycel_dashboard_fleetthread (store, thread_id, checkpoints, version, name_key, "
            "messages, bytes_on_disk, context_limit, pruned, flags, flag_count, row, record_usage_calls, "
            "record_tokens, record_cost_order) "
            "SELECT 's', 'm_' || md5(n::text) || '-' || n, 1, 'v', 'agent ' || n, 1, 1, 1, false, '', 0, "
            "jsonb_build_object('pad', repeat('x', 1500)), 0, 0, 0 FROM generate_series(1, 20000) AS n"
        )  # each row as wide as a real one (the list's row as the reader derived it: ~1.5 KB)
        db.execute("VACUUM ANALYZE mycel_dashboard_fleetthread")
        wanted = db.execute(
            "SELECT thread_id FROM mycel_dashboard_fleetthread WHERE name_key = 'agent 777'"
        ).fetchone()
        assert wanted is not None
        needle = wanted[0][2:14].lower()
        plan = "\n".join(
            row[0] for row in db.execute("EXPLAIN " + SEARCH, ("s", f"%{needle}%", f"%{needle}%"))
        )
        assert "fleet_thread_id_trgm" in plan and "fleet_thread_name_trgm" in plan, plan
        assert "Seq Scan" not in plan, plan
        found = [row[0] for row in db.execute(SEARCH, ("s", f"%{needle}%", f"%{needle}%"))]
        assert found == [wanted[0]]

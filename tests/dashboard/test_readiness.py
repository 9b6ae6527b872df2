"""/healthz and /readyz (issue 29) against real stores: a checkpoint file missing, a SQLite file locked by
another connection, and a private PostgreSQL server stopped mid-run. /readyz answers 503 at once, names
the store and the kind of failure, and never a path, host or password; /healthz answers regardless."""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

import pytest

from memory_core.stores.postgres.connect import close_pools
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at_postgres
from tests.support.postgres import PASSWORD, PASSWORD_USER, running_postgres, server_binaries
from tests.support.sample_data import PG_DEV_SAMPLE


def ready(client) -> tuple[int, dict[str, object]]:
    response = client.get("/readyz")
    assert response["Content-Type"] == "application/json"
    return response.status_code, json.loads(response.content)


def check(body: dict[str, object], name: str) -> dict[str, object]:
    found = [c for c in body["checks"] if c["name"] == name]  # type: ignore[attr-defined]
    assert len(found) == 1, body
    return found[0]  # type: ignore[no-any-return]


@pytest.mark.django_db(transaction=True)
def test_ready_on_the_sample_home_and_healthz_needs_nothing(client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    code, body = ready(client)
    assert code == 200 and body["status"] == "ready", body
    assert check(body, "main")["ok"] and check(body, "dashboard database")["ok"]
    assert str(sample_home) not in json.dumps(body)  # no path to an anonymous caller
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.django_db(transaction=True)
def test_a_missing_checkpoint_file_is_not_ready(client, tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "nowhere" / "leon.db"))
    code, body = ready(client)
    assert code == 503 and body["status"] == "not ready"
    assert check(body, "main") == {"name": "main", "ok": False, "kind": "missing_file"}
    assert client.get("/healthz").status_code == 200
    # The command line says the same, and exits 1: the store-down alert fires.
    code, out, _ = run_cli(capsys, "health", "--json")
    printed = json.loads(out)
    assert code == 1
    assert "MycelMemoryStoreDown" in printed["firing"] and not printed["ready"]


@pytest.mark.django_db(transaction=True)
def test_a_locked_sqlite_file_is_not_ready(client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    settings.DASHBOARD_PROBE_TIMEOUT_S = 0.5
    leon = sample_home / "leon.db"
    with closing(sqlite3.connect(leon, isolation_level=None)) as holder:
        # Rollback-journal mode: an exclusive lock keeps every reader out (in WAL mode readers go on, and
        # the store is then rightly ready).
        holder.execute("PRAGMA journal_mode=DELETE")
        holder.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        code, body = ready(client)
        took = time.monotonic() - started
        holder.execute("ROLLBACK")
    assert code == 503, body
    assert check(body, "main") == {"name": "main", "ok": False, "kind": "locked"}
    assert took < 5, f"/readyz waited {took:.1f} s on a locked file"
    code, body = ready(client)
    assert code == 200, body  # the lock released: ready again


@pytest.mark.django_db(transaction=True)
def test_a_postgres_server_stopped_mid_run(client, tmp_path: Path, monkeypatch, settings) -> None:
    if server_binaries() is None:
        pytest.fail("PostgreSQL's server binaries are missing (make postgres)", pytrace=False)
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    # A private server: stopping it leaves the session's shared one alone.
    with running_postgres() as server:
        server.create_database("dev")
        server.load_sql(server.url("dev"), PG_DEV_SAMPLE / "dump.sql")
        url = server.url("dev", user=PASSWORD_USER, password=PASSWORD)
        point_env_at_postgres(monkeypatch, tmp_path, url)
        try:
            code, body = ready(client)
            assert code == 200, body
            assert client.get("/metrics").status_code == 200  # a scrape reads through the pool too
            server.stop()
            started = time.monotonic()
            code, body = ready(client)
            took = time.monotonic() - started
            text = json.dumps(body)
            assert code == 503, body
            assert check(body, "checkpoints (postgresql)") == {
                "name": "checkpoints (postgresql)",
                "ok": False,
                "kind": "unreachable",
            }
            assert PASSWORD not in text and str(server.socket_dir) not in text
            assert took < 5, f"/readyz took {took:.1f} s with the server stopped"
            scraped = client.get("/metrics").content.decode()
            assert 'mycel_memory_store_up{store="checkpoints (postgresql)"} 0.0' in scraped
            assert "mycel_memory_ready 0.0" in scraped and PASSWORD not in scraped
            assert client.get("/healthz").status_code == 200
        finally:
            close_pools()

"""The dashboard served on its own PostgreSQL database (`DATABASE_URL` on the test server) over a Mycel
home: migrations land there, a user logs in and searches, the search index is that database's
`mycel_search_*` tables (no SQLite index file anywhere), the API equals the CLI's `--json`, and the CLI, a
second process, finds what the server indexed without indexing anything again."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import psycopg

from tests.integration.live_server import Session
from tests.support.server import ROOT, running_server

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "mycel-home"
QUERY = "file"


def _index_rows(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as db:
        row = db.execute("SELECT count(*), coalesce(max(id), 0) FROM mycel_search_docs").fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def _api(base: str, path: str, token: str) -> Any:
    # http://127.0.0.1 only
    request = urllib.request.Request(f"{base}{path}", headers={"Authorization": f"Bearer {token}"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
        return json.loads(answer.read())


def test_the_dashboard_on_its_own_postgres_database_shares_one_search_index(
    pg_server, tmp_path: Path
) -> None:
    from tests.support.postgres import database_name

    home = tmp_path / "mycel"
    shutil.copytree(SAMPLE, home)
    url = pg_server.create_database(database_name("dashboard_served"))
    cli_cache = tmp_path / "cli-cache"
    env = {"DATABASE_URL": url, "MYCEL_MEMORY_CACHE_DIR": str(cli_cache)}
    with running_server(tmp_path / "server", home, extra_env=env, workers=1, threads=2) as server:
        with psycopg.connect(url) as db:  # `migrate` (run by running_server) wrote here
            assert db.execute("SELECT to_regclass('auth_user')").fetchone() == ("auth_user",)

        page = Session(server.url, "viewer").get("/search/", {"q": QUERY})
        assert page.status == 200, page.body[:300]
        assert "<mark>" in page.body and 'id="search-none"' not in page.body
        tables = "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'mycel_search_%'"
        with psycopg.connect(url) as db:
            assert {row[0] for row in db.execute(tables)} == {
                "mycel_search_docs",
                "mycel_search_threads",
                "mycel_search_meta",
            }
        indexed = _index_rows(url)
        assert indexed[0] > 0

        token = server.manage("api_token", "create", "viewer").strip().splitlines()[-1]
        api = _api(server.url, f"/api/search/?q={QUERY}&limit=500", token)
        cli = subprocess.run(
            [
                str(Path(sys.executable).with_name("mycel-memory")),
                "search",
                QUERY,
                "--limit",
                "500",
                "--json",
            ],
            cwd=ROOT,
            env=server.env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert api["results"] == json.loads(cli.stdout) != []
        # The CLI is a second process on the same index: it found the server's rows and added none.
        assert _index_rows(url) == indexed
        folders = [tmp_path / "server", cli_cache]
        assert [p for folder in folders for p in folder.rglob("search-index-*.sqlite3")] == []
        assert "Traceback" not in server.log_text()

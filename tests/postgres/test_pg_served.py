"""`make run` over Mycel on PostgreSQL: the real server process (gunicorn, `make serve`'s command) configured
as Mycel dev is — LEON_POSTGRES_URL, and LEON_DB_PATH for the summaries dev keeps in SQLite — serves every
screen of every sample thread; the first-run setup names the database and the layout it found."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.integration.live_server import Session
from tests.support.server import running_server

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "mycel-pg-dev"
THREADS = ("m_rE2uGx6NbP9w-1", "m_rE2uGx6NbP9w-2", "m_sK5yDq1FvT7a-1", "m_sK5yDq1FvT7a-2", "m_sK5yDq1FvT7a-3")


def test_the_served_dashboard_reads_mycel_dev_on_postgres(pg_dev_sample: str, tmp_path: Path) -> None:
    home = tmp_path / "mycel"
    home.mkdir()
    shutil.copy(SAMPLE / "leon.db", home / "leon.db")
    env = {"LEON_POSTGRES_URL": pg_dev_sample, "LEON_DB_PATH": str(home / "leon.db")}
    with running_server(tmp_path / "server", home, extra_env=env) as server:
        said = server.manage("prepare_local")
        assert "Serving Mycel's checkpoints from PostgreSQL" in said
        assert "dev (schema agent)" in said
        assert "demo" not in said.lower()

        viewer = Session(server.url, "viewer")
        home_page = viewer.get("/")
        assert home_page.status == 200
        assert "postgresql" in home_page.body.lower()
        listed = viewer.get("/threads/")
        assert listed.status == 200
        for thread in THREADS:
            assert thread in listed.body
            page = viewer.get(f"/threads/{thread}/")
            assert page.status == 200, (thread, page.body[:300])
            call = viewer.get(f"/threads/{thread}/calls/1/")
            assert call.status == 200, (thread, call.body[:300])
        # Summaries from dev's SQLite fallback reach the compacting thread's page.
        compacting = viewer.get(f"/threads/{THREADS[0]}/")
        assert "Conversation compacted" in compacting.body
        assert "Traceback" not in server.log_text()

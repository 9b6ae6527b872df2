"""Several dashboard instances, one truth: two real servers (gunicorn, two workers each) over one PostgreSQL
dashboard database (DATABASE_URL) and one Mycel database (Mycel dev's sample, schema `agent`), as behind a
load balancer with no sticky sessions.

A login on one is a login on the other (the session lives in the shared database); a rollback applied on one
is what the other shows at its next page; two operators rolling back one thread from both at the same moment
get one applied checkpoint and one refusal with its reason, round after round (the lock is in Mycel's
database, not in a process); and the fleet index both instances ask for is built once.
"""

from __future__ import annotations

import copy
import http.client
import re
import shutil
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import psycopg

from tests.integration.live_server import USERS, Response, Session, field
from tests.support.postgres import PostgresServer, database_name
from tests.support.server import DashboardServer, running_server

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "mycel-pg-dev"
THREAD = "m_sK5yDq1FvT7a-2"  # 5 checkpoints in the sample
ROUNDS = 4  # concurrent rollbacks of THREAD from both instances
BUILT = re.compile(r"fleet index: pass over \S+ done: (\d+) threads, (\d+) computed")
SUMMED = re.compile(r"fleet index: \d+ reports of \S+ summed")


def _checkpoint_ids(mycel_url: str, thread_id: str) -> list[str]:
    with psycopg.connect(mycel_url) as db:
        rows = db.execute(
            "SELECT checkpoint_id FROM agent.checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
            " ORDER BY checkpoint_id",
            (thread_id,),
        ).fetchall()
    return [str(row[0]) for row in rows]


def _thread_count(mycel_url: str) -> int:
    with psycopg.connect(mycel_url) as db:
        row = db.execute("SELECT count(DISTINCT thread_id) FROM agent.checkpoints").fetchone()
    assert row is not None
    return int(row[0])


def _on(session: Session, server: DashboardServer) -> Session:
    """The same browser (cookie jar) sent to another instance, as a load balancer without sticky sessions."""
    moved = copy.copy(session)
    moved.base_url = server.url
    return moved


@contextmanager
def two_instances(
    tmp_path: Path, dashboard_url: str, mycel_url: str
) -> Iterator[tuple[DashboardServer, ...]]:
    home = tmp_path / "mycel"
    home.mkdir()
    shutil.copy(SAMPLE / "leon.db", home / "leon.db")  # dev keeps summaries in SQLite at LEON_DB_PATH
    env = {
        "DATABASE_URL": dashboard_url,
        "LEON_POSTGRES_URL": mycel_url,
        "LEON_DB_PATH": str(home / "leon.db"),
        # The sample's five threads listed from the fleet index, as a 100,000-thread fleet is.
        "DASHBOARD_FLEET_INDEX_FROM": "1",
    }
    with ExitStack() as stack:
        servers = tuple(
            stack.enter_context(running_server(tmp_path / name, home, extra_env=env, roles=USERS))
            for name in ("instance-a", "instance-b")
        )
        yield servers


def _at_once(*calls: tuple[Session, str, dict[str, str]]) -> list[Response]:
    """POST each (session, path, data) from its own thread, released together."""
    start = threading.Barrier(len(calls))
    answers: list[Response | None] = [None] * len(calls)

    def send(i: int, session: Session, path: str, data: dict[str, str]) -> None:
        start.wait()
        answers[i] = session.post(path, data)

    threads = [threading.Thread(target=send, args=(i, *call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)
    assert all(answer is not None for answer in answers), "a POST did not answer"
    return [answer for answer in answers if answer is not None]


def _audit_rows(dashboard_url: str) -> list[tuple[str, str, str]]:
    with psycopg.connect(dashboard_url) as db:
        rows = db.execute(
            "SELECT action, result, thread_id FROM mycel_dashboard_auditentry ORDER BY id"
        ).fetchall()
    return [(str(a), str(r), str(t)) for a, r, t in rows]


def test_two_instances_share_logins_rollbacks_locks_and_the_fleet_index(
    pg_server: PostgresServer, pg_dev_sample: str, tmp_path: Path
) -> None:
    dashboard_url = pg_server.create_database(database_name("two_instances"))
    with two_instances(tmp_path, dashboard_url, pg_dev_sample) as (a, b):
        # -- one login, both instances -------------------------------------------------------------
        viewer = Session(a.url, "viewer")
        assert viewer.get("/threads/").status == 200
        assert _anonymous_status(b, "/threads/") == 302  # without A's cookie, B sends to its login
        listed_on_b = _on(viewer, b).get("/threads/")
        assert listed_on_b.status == 200, listed_on_b.body[:300]
        assert THREAD in listed_on_b.body

        # -- the fleet index: both instances (four workers) asked at once; one builder built it ------
        lists = [_on(viewer, server) for server in (a, b) for _ in range(3)]
        answers: list[int] = []
        go = threading.Barrier(len(lists))

        def load(session: Session) -> None:
            go.wait()
            answers.append(session.get("/threads/").status)

        loaders = [threading.Thread(target=load, args=(s,)) for s in lists]
        for loader in loaders:
            loader.start()
        for loader in loaders:
            loader.join(timeout=60)
        assert answers == [200] * len(lists)
        _wait_for_complete_index(dashboard_url)
        passes = [
            (int(m.group(1)), int(m.group(2))) for server in (a, b) for m in BUILT.finditer(server.log_text())
        ]
        threads = _thread_count(pg_dev_sample)
        computing = [p for p in passes if p[1] > 0]
        assert computing == [(threads, threads)], passes  # one pass computed every thread; any other, none

        # -- the Context tabs: one sum of the kept reports, read by both instances --------------------
        _wait_for_sums(dashboard_url)
        sums = sum(len(SUMMED.findall(server.log_text())) for server in (a, b))
        tabs = [_on(viewer, server).get("/context/tools/") for server in (a, b) for _ in range(2)]
        assert all(tab.status == 200 and 'id="fleet-kept"' in tab.body for tab in tabs)
        assert len({re.search(r"From the fleet index: [^<]*", tab.body).group(0) for tab in tabs}) == 1  # type: ignore[union-attr]
        assert (
            sum(len(SUMMED.findall(server.log_text())) for server in (a, b)) == sums
        )  # nothing summed again

        # -- a rollback on A is what B shows next ----------------------------------------------------
        operator = Session(a.url, "operator")
        ids = _checkpoint_ids(pg_dev_sample, THREAD)
        preview = operator.get(f"/threads/{THREAD}/checkpoints/{ids[1]}/rollback/")
        assert preview.status == 200, preview.body[:300]
        done = operator.post(
            f"/threads/{THREAD}/checkpoints/{ids[1]}/rollback/apply/",
            {"fingerprint": field(preview.body, "fingerprint")},
        )
        assert done.status == 302, done.body[:500]
        new_head = _checkpoint_ids(pg_dev_sample, THREAD)[-1]
        assert new_head not in ids
        seen_on_b = _on(operator, b).get(f"/threads/{THREAD}/")
        assert seen_on_b.status == 200
        assert new_head in seen_on_b.body
        # The applied banner travels with the session too (messages in the shared session).
        assert "Rolled back" in seen_on_b.body
        assert _audit_rows(dashboard_url)[-1] == ("rollback", "applied", THREAD)

        # -- two operators, two instances, one thread, the same moment: one applied, one refused -----
        second = Session(b.url, "operator2")
        for round_no in range(ROUNDS):
            before = _checkpoint_ids(pg_dev_sample, THREAD)
            target = before[round_no % 3]
            path = f"/threads/{THREAD}/checkpoints/{target}/rollback/"
            previews = [operator.get(path), second.get(path)]
            assert [p.status for p in previews] == [200, 200]
            prints = [field(p.body, "fingerprint") for p in previews]
            assert prints[0] == prints[1]  # both previewed the same head
            # The head was just written (the previous round): the preview calls the thread busy; both force.
            form = {"fingerprint": prints[0], "force": "on"}
            answers_now = _at_once((operator, f"{path}apply/", form), (second, f"{path}apply/", form))
            statuses = sorted(r.status for r in answers_now)
            assert statuses == [302, 409], (round_no, [(r.status, r.body[:300]) for r in answers_now])
            refusal = next(r for r in answers_now if r.status == 409)
            assert "changed since" in refusal.body, refusal.body[:2000]
            after = _checkpoint_ids(pg_dev_sample, THREAD)
            assert after[: len(before)] == before and len(after) == len(before) + 1, (round_no, after)
        audit = [row for row in _audit_rows(dashboard_url) if row[0] == "rollback"]
        assert audit.count(("rollback", "applied", THREAD)) == 1 + ROUNDS
        assert audit.count(("rollback", "refused", THREAD)) == ROUNDS

        # B's index-backed list counts the thread's new checkpoints (the look recomputed it once).
        total = len(_checkpoint_ids(pg_dev_sample, THREAD))
        row = _on(viewer, b).get("/threads/", {"q": THREAD})
        assert row.status == 200 and THREAD in row.body
        with psycopg.connect(dashboard_url) as db:
            held = db.execute(
                "SELECT head_checkpoint_id, checkpoints FROM mycel_dashboard_fleetthread WHERE thread_id = %s",
                (THREAD,),
            ).fetchone()
        assert held == (_checkpoint_ids(pg_dev_sample, THREAD)[-1], total)
        for server in (a, b):
            assert "Traceback" not in server.log_text()


def _anonymous_status(server: DashboardServer, path: str) -> int:
    host, port = server.url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("GET", path)
        return connection.getresponse().status
    finally:
        connection.close()


def _wait_for_sums(dashboard_url: str) -> None:
    """Until every record is read and the three Context reports are summed as of the last one."""
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with psycopg.connect(dashboard_url) as db:
            due = db.execute("SELECT count(*) FROM mycel_dashboard_fleetthread WHERE record_due").fetchone()
            summed = db.execute(
                "SELECT count(*) FROM mycel_dashboard_fleetreport WHERE summed_generation = generation"
            ).fetchone()
        if due == (0,) and summed == (3,):
            return
        time.sleep(0.2)
    raise AssertionError("the Context reports were not summed within 2 minutes")


def _wait_for_complete_index(dashboard_url: str) -> None:
    import time

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with psycopg.connect(dashboard_url) as db:
            row = db.execute("SELECT bool_and(complete) FROM mycel_dashboard_fleetindexstate").fetchone()
        if row is not None and row[0]:
            return
        time.sleep(0.2)
    raise AssertionError("the fleet index was not built within 2 minutes")

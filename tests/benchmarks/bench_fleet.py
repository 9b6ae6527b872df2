# ruff: noqa: S608 - every name in these queries is one of this script's constants or a table's own column
"""The fleet index at 10,000 and 100,000 threads (1,000,000 with --million), on Mycel dev's PostgreSQL and
on Mycel main's leon.db, through the Threads page (Django's test client: server time, no network), timed in
the same run as the floor query (the one SQL query listing the newest 50 threads) and the naive way
(LangGraph's own saver: get_tuple() per thread, for 1,000 threads, scaled to the fleet).

The fleets are Mycel's own threads copied with new thread ids and new checkpoint ids (each copy one
minute older than the one before, so the fleet's activity spans weeks, as a real one's does):
- PostgreSQL: the dev sample (tests/data/mycel-pg-dev, schema `agent`), its small threads, by INSERT…SELECT
  on a throwaway server; the dashboard's own database is PostgreSQL too (DATABASE_URL), as several
  instances would share it;
- SQLite: the sample home's leon.db (tests/data/mycel-home), its three small threads (the smallest alone with
  --smallest), with their writes and `threads` rows; the dashboard's database is its SQLite file.

Printed per engine and size: the floor; the first page of a new fleet (no index yet: what SQL alone sorts);
the index build; newest first, by fill, by bytes, page 40 and one id searched, each "first" (a new worker:
every in-process memo emptied, the index in the database kept) and "again" (median of 3); three times, one
thread gets a new checkpoint and the next page (which catches it up) is timed against warm pages just before
it (the median ratio is the figure), for the Threads list and again for Storage; the live poll, the Config page
and the fleet reports (Storage, then Storage in a later worker, Cost, the Context tabs) and a /metrics scrape
first and again; peak RSS; the naive way.
Targets (issue 27): warm <= 300 ms and <= 3x the floor; first page <= 3 s; build <= 10 min; the page after a
new checkpoint <= 2x a warm one.

    .venv/bin/python tests/benchmarks/bench_fleet.py [--sizes 10000,100000] [--million] [--engine pg|sqlite]
        [--pages REGEX] [--profile DIR] [--smallest]

--pages times only the fleet pages whose name matches; --profile writes a cProfile of one more warm load of
each fleet page, and of the first page after a new checkpoint (then not a fair timing), to DIR/<page>.prof.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.sample_data import PG_DEV_SAMPLE, SAMPLE_HOME  # noqa: E402

PG_TEMPLATES = ("m_sK5yDq1FvT7a-1", "m_rE2uGx6NbP9w-2")  # dev's small threads (3 checkpoints each)
SQLITE_TEMPLATES = ("m_0D8EzdJXJhk9-1", "m_0D8EzdJXJhk9-3", "m_npRsndIka9dx-3")  # main's three small ones
# --smallest: a million of the three is ~68 GB of disk, of the smallest alone ~39
if os.environ.get("BENCH_FLEET_SMALLEST"):
    SQLITE_TEMPLATES = SQLITE_TEMPLATES[:1]
MINUTE = 60 * 10_000_000 >> 12  # one minute in the 48 high bits of a uuid6 (100 ns ticks >> 12)
AFTER_CHANGE_SAMPLES = 3  # one new checkpoint is one sample: the median of three is the figure
SAMPLE_NAIVE = 1000


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def shifted_id(checkpoint_id: str | None, copy: int) -> str | None:
    """The id `copy` minutes older: its 48 high time bits lowered, the rest kept (order within a thread
    is kept, and ids stay uuid6)."""
    if checkpoint_id is None:
        return None
    flat = checkpoint_id.replace("-", "")
    high = int(flat[:12], 16) - copy * MINUTE
    text = f"{high:012x}{flat[12:]}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


# -- the fleets ------------------------------------------------------------------------------------------

PG_SHIFT = """
CREATE FUNCTION pg_temp.shifted(id text, copy int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN id IS NULL THEN NULL ELSE (
    WITH h AS (SELECT lpad(to_hex(('x' || lpad(substr(replace(id, '-', ''), 1, 12), 16, '0'))::bit(64)::bigint
               - copy::bigint * %(minute)s), 12, '0') || substr(replace(id, '-', ''), 13) AS x)
    SELECT substr(x, 1, 8) || '-' || substr(x, 9, 4) || '-' || substr(x, 13, 4) || '-' || substr(x, 17, 4)
           || '-' || substr(x, 21) FROM h) END
$$
"""


def grow_postgres(url: str, threads: int) -> None:
    import psycopg

    copies = threads // len(PG_TEMPLATES)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(PG_SHIFT % {"minute": MINUTE})  # type: ignore[arg-type]
        conn.execute("DELETE FROM agent.checkpoints WHERE NOT thread_id = ANY(%s)", (list(PG_TEMPLATES),))
        conn.execute(
            "DELETE FROM agent.checkpoint_blobs WHERE NOT thread_id = ANY(%s)", (list(PG_TEMPLATES),)
        )
        conn.execute(
            "DELETE FROM agent.checkpoint_writes WHERE NOT thread_id = ANY(%s)", (list(PG_TEMPLATES),)
        )
        for step in range(0, copies, 50_000):
            last = min(copies, step + 50_000)
            params = {"first": step + 1, "last": last, "templates": list(PG_TEMPLATES)}
            conn.execute(
                "INSERT INTO agent.checkpoints SELECT thread_id || '-c' || i, checkpoint_ns, "
                "pg_temp.shifted(checkpoint_id, i), pg_temp.shifted(parent_checkpoint_id, i), type, checkpoint, "
                "metadata FROM agent.checkpoints, generate_series(%(first)s::int, %(last)s::int) AS i "
                "WHERE thread_id = ANY(%(templates)s)",
                params,
            )
            conn.execute(
                "INSERT INTO agent.checkpoint_blobs SELECT thread_id || '-c' || i, checkpoint_ns, channel, version, "
                "type, blob FROM agent.checkpoint_blobs, generate_series(%(first)s::int, %(last)s::int) AS i "
                "WHERE thread_id = ANY(%(templates)s)",
                params,
            )
        for table in ("checkpoints", "checkpoint_blobs", "checkpoint_writes"):
            conn.execute(f"DELETE FROM agent.{table} WHERE thread_id = ANY(%s)", (list(PG_TEMPLATES),))
        conn.execute("VACUUM ANALYZE")


def grow_sqlite(db: Path, threads: int) -> None:
    copies = threads // len(SQLITE_TEMPLATES)
    with closing(sqlite3.connect(db)) as conn:
        conn.create_function("shifted", 2, shifted_id, deterministic=True)
        marks = ",".join("?" * len(SQLITE_TEMPLATES))
        thread_columns = [r[1] for r in conn.execute("PRAGMA table_info(threads)")]
        others = ", ".join(c for c in thread_columns if c != "id")
        # (member_id, branch_index) is unique and a member has one main thread: each copy is another branch.
        copied = ", ".join(
            {"branch_index": "branch_index + i * 100", "is_main": "0"}.get(c, c)
            for c in thread_columns
            if c != "id"
        )
        with conn:
            for table in ("checkpoints", "writes"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id NOT IN ({marks})", SQLITE_TEMPLATES)
            conn.execute(f"DELETE FROM threads WHERE id NOT IN ({marks})", SQLITE_TEMPLATES)
        series = "WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
        before, vacuum = db.stat().st_size, True
        for step in range(0, copies, 20_000):
            if step == 20_000:
                vacuum = _room_for(db, (db.stat().st_size - before) / step * copies)
            bounds = (step + 1, min(copies, step + 20_000))
            with conn:
                conn.execute(
                    f"{series} INSERT INTO checkpoints SELECT thread_id || '-c' || i, checkpoint_ns, "
                    "shifted(checkpoint_id, i), shifted(parent_checkpoint_id, i), type, checkpoint, metadata "
                    f"FROM checkpoints, n WHERE thread_id IN ({marks})",
                    (*bounds, *SQLITE_TEMPLATES),
                )
                conn.execute(
                    f"{series} INSERT INTO writes SELECT thread_id || '-c' || i, checkpoint_ns, "
                    "shifted(checkpoint_id, i), task_id, idx, channel, type, value "
                    f"FROM writes, n WHERE thread_id IN ({marks})",
                    (*bounds, *SQLITE_TEMPLATES),
                )
                conn.execute(
                    f"{series} INSERT INTO threads (id, {others}) SELECT id || '-c' || i, {copied} "
                    f"FROM threads, n WHERE id IN ({marks})",
                    (*bounds, *SQLITE_TEMPLATES),
                )
        with conn:
            for table in ("checkpoints", "writes"):
                conn.execute(f"DELETE FROM {table} WHERE thread_id IN ({marks})", SQLITE_TEMPLATES)
            conn.execute(f"DELETE FROM threads WHERE id IN ({marks})", SQLITE_TEMPLATES)
        if vacuum:  # the templates' pages back to the file; without room for the copy they stay free pages
            conn.execute("VACUUM")


def _room_for(db: Path, grown_bytes: float) -> bool:
    """Whether VACUUM's copy of the grown file fits too; stop early, and say why, when the file alone cannot
    (1,000,000 of the sample's threads are ~63 GB; a full disk stopped a run half-way)."""
    free = shutil.disk_usage(db.parent).free
    if free < 1.1 * grown_bytes:
        raise SystemExit(
            f"not enough disk for this fleet: ~{grown_bytes / 1e9:.0f} GB of leon.db, "
            f"{free / 1e9:.0f} GB free in {db.parent}"
        )
    return free > 2.2 * grown_bytes


# -- one engine, one size (in its own process: Django is set up once per database) -----------------------


def _naive(engine: str, where: str, thread_ids: list[str]) -> float:
    """LangGraph's saver, get_tuple() per thread, for `thread_ids`: seconds."""
    if engine == "pg":
        from langgraph.checkpoint.postgres import PostgresSaver

        joiner = "&" if "?" in where else "?"
        with PostgresSaver.from_conn_string(f"{where}{joiner}options=-csearch_path%3Dagent") as saver:
            return timed(lambda: [saver.get_tuple({"configurable": {"thread_id": t}}) for t in thread_ids])[0]
    from langgraph.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(where) as saver:
        return timed(lambda: [saver.get_tuple({"configurable": {"thread_id": t}}) for t in thread_ids])[0]


RECORDS_TIMED = 200  # records the real record pass reads in the run, for its rate


def fill_records(locations: Any, index: Any, engine: str, threads: int) -> dict[str, float]:
    """Every thread's record in the index, as the record pass would leave it. RECORDS_TIMED are read by the
    real pass (its rate is printed); the rest are the tally of their template thread (the copies hold the
    same messages under other ids), with the copy's own id, head and day: a template's calls all fall in its
    one turn, so each copy's calls fall on the day of its head."""
    from dataclasses import replace

    from memory_core.app.cost import pricing_of
    from memory_core.app.fleet_index import BUILD_ROW_CAP, index_rows, store_name
    from memory_core.app.fleet_records import build_records, thread_record_tally
    from memory_core.economics.cost import day_of
    from memory_core.stores.reader import MycelReader
    from mycel_dashboard.web.fleet_index import builder_reader

    store = store_name(MycelReader(locations))
    reader = builder_reader(locations, BUILD_ROW_CAP)
    passed_s, read = timed(lambda: build_records(reader, index, limit=RECORDS_TIMED))
    templates = SQLITE_TEMPLATES if engine == "sqlite" else PG_TEMPLATES
    book = pricing_of(reader).book
    tallies = {
        t: thread_record_tally(reader, index_rows(index, store, [f"{t}-c1"])[0], book) for t in templates
    }
    began = time.perf_counter()
    while due := index.records_due(store, 2000):
        put = []
        for thread in index_rows(index, store, due):
            tally = tallies[thread.thread_id.rsplit("-c", 1)[0]]
            assert tally is not None
            own = {"thread_id": thread.thread_id}
            put.append(
                (
                    thread,
                    replace(
                        tally,
                        head=thread.row.head_checkpoint_id or "",
                        usage=tuple(
                            replace(g, **own, day=day_of(thread.row.updated_at)) for g in tally.usage
                        ),
                        unmetered=tuple(replace(c, **own, at=thread.row.updated_at) for c in tally.unmetered),
                    ),
                )
            )
        index.put_records(store, put)
    return {"rate": (read or 0) / passed_s if passed_s else 0.0, "copied_s": time.perf_counter() - began}


def profiled(name: str, load: Callable[[], Any]) -> Any:
    """`load()` under cProfile, its stats in $BENCH_FLEET_PROFILE/<name>.prof; None (not run) without it."""
    folder = os.environ.get("BENCH_FLEET_PROFILE")
    if not folder:
        return None
    import cProfile

    Path(folder).mkdir(parents=True, exist_ok=True)
    with cProfile.Profile() as profile:
        found = load()
    profile.dump_stats(str(Path(folder) / f"{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}.prof"))
    return found


def run_one(engine: str, threads: int, pg_url: str | None, dash_url: str | None) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"bench-fleet-{engine}-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # a 100,000-thread leon.db is 6.3 GB
    env: dict[str, str] = {
        "HOME": str(work),
        "MYCEL_CONFIG_HOME": str(work / "config"),
        "DJANGO_SETTINGS_MODULE": "mycel_dashboard.settings",
        "DASHBOARD_DATA_DIR": str(work / "dashboard"),
        "ALLOWED_HOSTS": "testserver",
        "DASHBOARD_FLEET_INDEX_BACKGROUND": "0",  # the build is timed here, in the foreground
        "DASHBOARD_FLEET_INDEX_FROM": "0",  # the index whatever the size (a --sizes smoke run is small)
    }
    grown_at = time.perf_counter()
    if engine == "pg":
        assert pg_url is not None and dash_url is not None
        grow_postgres(pg_url, threads)
        shutil.copy(PG_DEV_SAMPLE / "leon.db", work / "leon.db")  # dev's SQLite summaries (/readyz wants it)
        env.update(LEON_POSTGRES_URL=pg_url, LEON_DB_PATH=str(work / "leon.db"), DATABASE_URL=dash_url)
        floor_sql = (
            "SELECT thread_id, max(checkpoint_id) AS head FROM agent.checkpoints WHERE checkpoint_ns = '' "
            "GROUP BY thread_id ORDER BY head DESC LIMIT 50"
        )
    else:
        shutil.copytree(SAMPLE_HOME, work / "home")
        for path in (work / "home").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        db = work / "home" / "leon.db"
        grow_sqlite(db, threads)
        env.update(
            LEON_DB_PATH=str(db),
            LEON_SANDBOX_DB_PATH=str(work / "home" / "sandbox.db"),
            LEON_QUEUE_DB_PATH=str(work / "home" / "queue.db"),
            MYCEL_CONFIG_HOME=str(work / "home"),
        )
        floor_sql = (
            "SELECT thread_id, max(checkpoint_id) AS head FROM checkpoints WHERE checkpoint_ns = '' "
            "GROUP BY thread_id ORDER BY head DESC LIMIT 50"
        )
    grown_s = time.perf_counter() - grown_at
    os.environ.update(env)
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from memory_core import memo
    from memory_core.app.fleet_index import IndexQuery, build, store_name
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader
    from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader

    call_command("migrate", verbosity=0)
    # As a gunicorn worker starts (gunicorn_conf.post_worker_init): every view module loaded, heap settled.
    from django.urls import get_resolver

    from memory_core.stores.gc_setup import settle_heap

    get_resolver().url_patterns  # noqa: B018 - loads every view module
    settle_heap()
    client = Client()
    client.force_login(User.objects.create_user("bench", password="bench-pass-123"))

    def floor() -> float:
        if engine == "pg":
            import psycopg

            with psycopg.connect(pg_url or "") as conn:
                return timed(lambda: conn.execute(floor_sql).fetchall())[0]
        with closing(sqlite3.connect(f"file:{env['LEON_DB_PATH']}?mode=ro", uri=True)) as conn:
            return timed(lambda: conn.execute(floor_sql).fetchall())[0]

    def get(url: str) -> tuple[float, str]:
        seconds, response = timed(lambda: client.get(url, HTTP_HX_REQUEST="true"))
        assert response.status_code == 200, (url, response.status_code)
        return seconds, response.content.decode()

    def first_and_again(url: str) -> tuple[float, float, str]:
        memo.reset()
        first, body = get(url)
        again = median(get(url)[0] for _ in range(3))
        return first, again, body

    floor()  # the server's and the OS's caches warmed once, for the floor as for us
    floor_s = median(floor() for _ in range(5))
    new_fleet_s, body = get("/threads/")
    counted = re.search(r"([\d,]+) of ([\d,]+) thread", body)
    assert "being built" in body, body[:3000]
    locations = resolve_locations()
    index = DashboardFleetIndex()
    build_s, state = timed(lambda: build(lambda cap: builder_reader(locations, cap), index))
    assert state is not None and state.complete
    memo.reset()
    results: dict[str, Any] = {"engine": engine, "threads": threads, "grown_s": grown_s, "floor": floor_s}
    results["first page of a new fleet"] = new_fleet_s
    results["floor count"] = counted.group(2) if counted else "?"
    results["build"] = build_s
    _, everyone, _ = index.page(store_name(MycelReader(locations)), IndexQuery(limit=1))
    one_id = f"{(SQLITE_TEMPLATES if engine == 'sqlite' else PG_TEMPLATES)[0]}-c{threads // 7 or 1}"
    pages = {
        "newest first": "/threads/",
        "by fill": "/threads/?sort=fill",
        "by bytes": "/threads/?sort=bytes",
        "page 40": "/threads/?page=40",
        "one id searched": f"/threads/?q={one_id}",
    }
    for name, url in pages.items():
        first, again, body = first_and_again(url)
        results[name] = (first, again)
        if name == "one id searched":
            assert one_id in body, one_id
        if name == "newest first":
            found = re.search(r"([\d,]+) of ([\d,]+) thread", body)
            results["page count"] = found.group(2) if found else "?"
    results["index count"] = everyone
    results["record pass"] = fill_records(locations, index, engine, threads)
    from mycel_dashboard.web.fleet_index import sum_reports

    # The builder's last step: the Context reports summed from every thread's kept reductions.
    before_sums = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    results["context sums"], summed = timed(lambda: sum_reports(index, store_name(MycelReader(locations))))
    assert summed == 3, summed
    # Peak RSS is a high-water mark: what the sums added to the peak so far (0: they stayed under it).
    results["context sums rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before_sums
    from django.db.models import Max

    from mycel_dashboard.models import FleetUsage

    week = FleetUsage.objects.aggregate(newest=Max("day"))["newest"] - timedelta(days=6)
    # The other pages over the whole fleet: the live poll and Config ask the index or the checkpoints' keys;
    # Cost reads the records' usage in the index, the Context tabs the sums of their reductions kept there;
    # Storage ranks, pages and sums each thread's footprint kept there (only the stores' space is read).
    fleet_pages = {
        "live poll, all moved": f"/threads/live/?since=0&known={threads}",  # the worst case: every thread
        "config": "/config/",
        "storage": "/storage/",
        # A later worker's first page: the stores' tables as the first worker measured them (facts folder).
        "storage, a later worker": "/storage/",
        "cost": "/cost/",
        "cost, page 40 of threads": "/cost/?page=40",
        "cost, its last week": f"/cost/?since={week.isoformat()}",
        "context: calibration": "/context/calibration/",
        "context: tools": "/context/tools/",
        "context: cache": "/context/cache/",
        "/metrics (a scrape)": "/metrics",  # from loopback; the index's tallies, never a fleet walk
    }
    wanted = re.compile(os.environ.get("BENCH_FLEET_PAGES", ""))
    for name, url in fleet_pages.items():
        if not wanted.search(name):
            continue
        first, again, body = first_and_again(url)
        profiled(name, lambda url=url: get(url))
        if url == "/metrics":  # the fleet's figures, not a failed readiness answer (which carries none)
            assert "mycel_memory_threads{" in body and "mycel_memory_ready 1.0" in body, body[-2000:]
        results[f"fleet page: {name}"] = (first, again)
        if url.startswith("/context/"):  # the kept sum, as of every record: not a walk cut short
            assert 'id="fleet-kept"' in body and 'id="fleet-pending"' not in body, url
            assert 'id="fleet-kept-behind"' not in body, url
        if url == "/storage/":  # from the index, caught up: not a walk of the fleet's bytes
            assert 'data-from-index="yes"' in body and 'id="storage-behind"' not in body, body[-2000:]
        if url.startswith("/cost/"):  # from the index, every record read: not a walk cut short, nor empty
            assert 'id="cost-records-pending"' not in body and 'id="fleet-pending"' not in body, url
            assert "No thread has a model call" not in body or "since=" in url, url
    # Three threads, one after another, each get a new checkpoint (its head copied under a new id, as a
    # rollback writes one); each page after one is timed against warm pages just before it. One change is
    # one sample, so three, and the median ratio is the figure.
    from langgraph.checkpoint.base.id import uuid6

    templates = SQLITE_TEMPLATES if engine == "sqlite" else PG_TEMPLATES

    def after_changes(path: str, first: int) -> tuple[list[tuple[float, float]], list[tuple[str, str]]]:
        changes: list[tuple[float, float]] = []
        pages: list[tuple[str, str]] = []  # (the moved thread, the page after it)
        for nth in range(first, first + AFTER_CHANGE_SAMPLES):
            warm = median(get(path)[0] for _ in range(3))  # just before the change: like with like
            moved = f"{templates[nth % len(templates)]}-c{threads // len(templates) // 2 + nth}"  # mid-fleet
            new_id = str(uuid6(clock_seq=-2))
            if engine == "pg":
                import psycopg

                with psycopg.connect(pg_url or "", autocommit=True) as conn:
                    conn.execute(
                        "INSERT INTO agent.checkpoints SELECT thread_id, checkpoint_ns, %s, checkpoint_id, type, "
                        "checkpoint, metadata FROM agent.checkpoints WHERE thread_id = %s "
                        "ORDER BY checkpoint_id DESC LIMIT 1",
                        (new_id, moved),
                    )
            else:
                with closing(sqlite3.connect(env["LEON_DB_PATH"])) as conn, conn:
                    conn.execute(
                        "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, ?, checkpoint_id, type, "
                        "checkpoint, metadata FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
                        (new_id, moved),
                    )
            label = f"after one new checkpoint {path}"
            page = profiled(label, lambda: get(path)) if nth == first else None
            after_s, body = page or get(path)
            changes.append((after_s, warm))
            pages.append((moved, body))
        return changes, pages

    changes, pages = after_changes("/threads/", 0)
    results["after one new checkpoint"] = changes
    results["reflected"] = all("</tr>" in body and moved in body.split("</tr>")[1] for moved, body in pages)
    changes, pages = after_changes("/storage/", AFTER_CHANGE_SAMPLES)
    results["storage after one new checkpoint"] = changes
    # Caught up by the page's own look: nothing left to the builder, the figures from the index.
    results["storage reflected"] = all(
        'data-from-index="yes"' in body and 'id="storage-behind"' not in body for _, body in pages
    )
    results["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sample = [f"{templates[i % len(templates)]}-c{i + 1}" for i in range(SAMPLE_NAIVE)]
    naive_s = _naive(engine, pg_url if engine == "pg" else env["LEON_DB_PATH"], sample)
    results["naive per thread"] = naive_s / SAMPLE_NAIVE
    results["naive fleet"] = naive_s / SAMPLE_NAIVE * threads
    return results


def report(r: dict[str, Any]) -> None:
    floor = r["floor"]
    budget = min(0.3, 3 * floor)
    print(
        f"\n== {r['engine']}: {r['threads']:,} threads (grown in {r['grown_s']:.0f} s) — floor query "
        f"{floor * 1000:.0f} ms; warm target <= {budget * 1000:.0f} ms (300 ms and 3x floor)"
    )
    print(
        f"first page of a new fleet (SQL alone, index not built): {r['first page of a new fleet'] * 1000:.0f} ms "
        f"(target <= 3000 ms), counting {r['floor count']} threads"
    )
    print(f"index build: {r['build']:.1f} s (target <= 600 s)")
    rate = r["record pass"]["rate"]
    print(
        f"record pass: {rate:,.0f} records a second ({RECORDS_TIMED} read, the whole fleet's in "
        f"~{r['threads'] / rate / 60 if rate else 0:.0f} min); the rest filled from their template threads in "
        f"{r['record pass']['copied_s']:.0f} s"
    )
    print(
        f"Context reports summed from every thread's kept reductions (the builder's): {r['context sums']:.1f} s, "
        f"raising peak RSS by {r['context sums rss']:.0f} MB"
    )
    print(f"{'page':<22}{'first':>10}{'again':>10}{'again/floor':>13}  target")
    for name in ("newest first", "by fill", "by bytes", "page 40", "one id searched"):
        first, again = r[name]
        ok = "ok" if again <= budget else "MISSED"
        print(f"{name:<22}{first * 1000:>8.0f}ms{again * 1000:>8.0f}ms{again / floor:>12.1f}x  {ok}")
    for name in [key for key in r if key.startswith("fleet page: ")]:
        first, again = r[name]
        ok = "ok" if again <= budget else "MISSED"
        label = name.removeprefix("fleet page: ")
        print(f"{label:<22}{first * 1000:>8.0f}ms{again * 1000:>8.0f}ms{again / floor:>12.1f}x  {ok}")
    for key, what, reflected in (
        ("after one new checkpoint", "the Threads list", "each moved thread topped the list"),
        ("storage after one new checkpoint", "Storage", "each page from the index, caught up"),
    ):
        changes = r[key]
        ratio = median(after / warm for after, warm in changes)
        each = ", ".join(f"{after * 1000:.0f} ms / {warm * 1000:.0f} ms" for after, warm in changes)
        print(
            f"{what} after one thread got a new checkpoint ({len(changes)} times; next page / warm page: "
            f"{each}): median {ratio:.1f}x a warm one (target <= 2x) {'ok' if ratio <= 2 else 'MISSED'}; "
            f"{reflected}: {r['reflected' if key.startswith('after') else 'storage reflected']}"
        )
    print(
        f"threads on the page: {r['page count']}; in the index: {r['index count']:,}; peak RSS {r['rss_mb']:.0f} MB"
    )
    print(
        f"naive way (LangGraph saver get_tuple() per thread, {SAMPLE_NAIVE:,} threads timed): "
        f"{r['naive per thread'] * 1000:.2f} ms a thread, ~{r['naive fleet']:.0f} s for the fleet; "
        f"ratio to a warm page: {r['naive fleet'] / r['newest first'][1]:,.0f}x"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated fleet sizes")
    parser.add_argument("--million", action="store_true", help="1,000,000 threads too")
    parser.add_argument("--engine", choices=("pg", "sqlite", "both"), default="both")
    parser.add_argument("--pages", default="", help="time only the fleet pages whose name matches")
    parser.add_argument(
        "--smallest",
        action="store_true",
        help="grow leon.db from the sample's smallest thread alone (1,000,000 of its three need ~68 GB of disk)",
    )
    parser.add_argument(
        "--profile", default="", help="write cProfile stats of the fleet pages to this folder"
    )
    parser.add_argument(
        "--one", nargs=4, metavar=("ENGINE", "N", "PG_URL", "DASH_URL"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        engine, n, pg_url, dash_url = args.one
        found = run_one(engine, int(n), pg_url or None, dash_url or None)
        print("RESULT " + json.dumps(found))
        return 0
    os.environ.update(BENCH_FLEET_PAGES=args.pages, BENCH_FLEET_PROFILE=args.profile)  # for the --one runs
    if args.smallest:
        os.environ["BENCH_FLEET_SMALLEST"] = "1"
    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000] if args.million else [])
    engines = ["pg", "sqlite"] if args.engine == "both" else [args.engine]
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    failed = 0
    for engine in engines:
        for n in sizes:
            pg_url = dash_url = ""
            server_cm = None
            if engine == "pg":
                from tests.support.postgres import running_postgres

                server_cm = running_postgres()
                server = server_cm.__enter__()
                server.create_database("mycel")
                pg_url = server.url("mycel")
                server.load_sql(pg_url, PG_DEV_SAMPLE / "dump.sql")
                dash_url = server.create_database("dashboard")
            try:
                done = subprocess.run(
                    [sys.executable, __file__, "--one", engine, str(n), pg_url, dash_url],
                    capture_output=True,
                    text=True,
                    check=False,
                )
            finally:
                if server_cm is not None:
                    server_cm.__exit__(None, None, None)
            line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
            if done.returncode != 0 or line is None:
                failed += 1
                print(
                    f"\n== {engine}: {n:,} threads FAILED\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}",
                    flush=True,
                )
                continue
            report(json.loads(line[len("RESULT ") :]))
            sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

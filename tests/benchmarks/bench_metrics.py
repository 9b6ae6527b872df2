"""A /metrics scrape over a big fleet (issue 29): Mycel main's leon.db grown to N threads (100,000 by
default; bench_fleet.py's copies of the sample home's small threads), the fleet index built, then /metrics
through Django's test client (server time, no network) from loopback:
- the record pass on the newest --records threads (its rate, and the whole fleet's time at that rate);
- the first scrape after the build, and warm scrapes (median of 10);
- the process's RSS before and after 200 more scrapes (the server's memory must not grow);
- the naive way: the same figures computed from a fleet walk (every thread's head read, decoded and
  estimated, as `mycel-memory health` does with no index), timed on 1,000 threads and scaled to the fleet.
Target: a warm scrape within 300 ms at 100,000 threads, and no RSS growth over the scrapes.

    .venv/bin/python tests/benchmarks/bench_metrics.py [--threads 100000] [--scrapes 200] [--records 2000]
        [--engine sqlite|pg]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_fleet import PG_DEV_SAMPLE, grow_postgres, grow_sqlite  # noqa: E402
from tests.support.sample_data import SAMPLE_HOME  # noqa: E402

SAMPLE_NAIVE = 1000


def rss_mb() -> float:
    import psutil

    return float(psutil.Process().memory_info().rss) / 1e6


def timed(fn: Callable[[], object]) -> float:
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=100_000)
    parser.add_argument("--scrapes", type=int, default=200)
    parser.add_argument("--records", type=int, default=2000, help="records the record pass reads (timed)")
    parser.add_argument(
        "--engine",
        choices=("sqlite", "pg"),
        default="sqlite",
        help="pg: Mycel dev's tables on a throwaway PostgreSQL server, the dashboard's database there too",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
    server_cm = None
    try:
        env = {
            "HOME": str(work),
            "DJANGO_SETTINGS_MODULE": "mycel_dashboard.settings",
            "DASHBOARD_DATA_DIR": str(work / "dashboard"),
            "ALLOWED_HOSTS": "testserver",
            "DASHBOARD_FLEET_INDEX_BACKGROUND": "0",
        }
        started = time.perf_counter()
        if args.engine == "pg":
            from tests.support.postgres import running_postgres

            server_cm = running_postgres()
            server = server_cm.__enter__()
            server.create_database("mycel")
            pg_url = server.url("mycel")
            server.load_sql(pg_url, PG_DEV_SAMPLE / "dump.sql")
            grow_postgres(pg_url, args.threads)
            (work / "home").mkdir()
            shutil.copy(PG_DEV_SAMPLE / "leon.db", work / "home" / "leon.db")  # dev's SQLite summaries
            env.update(
                LEON_POSTGRES_URL=pg_url,
                LEON_DB_PATH=str(work / "home" / "leon.db"),
                MYCEL_CONFIG_HOME=str(work / "home"),
                DATABASE_URL=server.create_database("dashboard"),
            )
        else:
            shutil.copytree(SAMPLE_HOME, work / "home")
            for path in (work / "home").rglob("*"):
                path.chmod(0o755 if path.is_dir() else 0o644)
            db = work / "home" / "leon.db"
            grow_sqlite(db, args.threads)
            env.update(
                LEON_DB_PATH=str(db),
                LEON_SANDBOX_DB_PATH=str(work / "home" / "sandbox.db"),
                LEON_QUEUE_DB_PATH=str(work / "home" / "queue.db"),
                MYCEL_CONFIG_HOME=str(work / "home"),
            )
        grown_s = time.perf_counter() - started
        os.environ.update(env)
        import django

        django.setup()
        from django.core.management import call_command
        from django.test import Client

        from memory_core.app.fleet_index import build, index_version, indexed_facts, store_name
        from memory_core.app.fleet_records import build_records
        from memory_core.app.health import active_from, figures_of, tally
        from memory_core.records import StoreProblem
        from memory_core.stores.locations import resolve_locations
        from memory_core.stores.reader import MycelReader
        from memory_core.stores.thread_list.fleet_heads import EVERY_ROW
        from mycel_dashboard.monitoring.gather import TALLIES_KEPT_S
        from mycel_dashboard.monitoring.tallies import DashboardFleetTallies
        from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader

        call_command("migrate", verbosity=0)
        locations = resolve_locations()
        started = time.perf_counter()
        state = build(lambda cap: builder_reader(locations, cap), DashboardFleetIndex())
        build_s = time.perf_counter() - started
        assert state is not None and state.complete, state
        # The record pass (each thread's record of calls, tallied): timed on the newest --records threads;
        # the rest stay due, as on a fleet whose pass is catching up (the scrape does not wait for it).
        started = time.perf_counter()
        records = build_records(
            builder_reader(locations, EVERY_ROW), DashboardFleetIndex(), limit=args.records
        )
        records_s = time.perf_counter() - started

        client = Client()

        def scrape() -> float:
            began = time.perf_counter()
            response = client.get("/metrics")
            took = time.perf_counter() - began
            assert response.status_code == 200, response.content[:300]
            # The fleet's figures, not a failed readiness answer (which carries none).
            assert (
                b"mycel_memory_threads{" in response.content and b"mycel_memory_ready 1.0" in response.content
            )
            return took

        first_s = scrape()
        warm_s = median(scrape() for _ in range(10))
        before = rss_mb()
        for _ in range(args.scrapes):
            scrape()
        after = rss_mb()

        store = store_name(MycelReader(locations))
        tallied_s = median(
            timed(lambda: DashboardFleetTallies().tallies(store, active_since=active_from()))
            for _ in range(3)
        )

        reader = MycelReader(locations, row_cap=EVERY_ROW)
        rows = reader.list_threads().value[:SAMPLE_NAIVE]
        problems: list[StoreProblem] = []
        began = time.perf_counter()
        figures_of(
            tally(indexed_facts(reader, rows, index_version(reader), problems), active_since=active_from())
        )
        naive_s = (time.perf_counter() - began) * args.threads / max(1, len(rows))

        print(
            f"fleet ({args.engine}): {args.threads:,} threads (grown in {grown_s:.1f} s); "
            f"index built in {build_s:.1f} s"
        )
        rate = (records or 0) / records_s if records_s else 0.0
        print(
            f"record pass: {records or 0:,} records in {records_s:.1f} s ({rate:,.0f} a second; the whole "
            f"fleet at that rate: {args.threads / rate / 60 if rate else 0:.0f} min, in the background)"
        )
        print(f"first scrape after the build: {first_s * 1000:.0f} ms")
        print(f"warm scrape (median of 10): {warm_s * 1000:.0f} ms (target <= 300 ms)")
        print(
            f"the index's tallies recomputed (one SQL query; a scrape does it when the index moved or "
            f"{TALLIES_KEPT_S:.0f} s passed): {tallied_s * 1000:.0f} ms"
        )
        print(
            f"RSS over {args.scrapes} more scrapes: {before:.1f} MB -> {after:.1f} MB ({after - before:+.1f} MB)"
        )
        print(
            f"naive way (a fleet walk, {len(rows):,} threads timed, scaled): {naive_s:.1f} s; "
            f"the warm scrape is {naive_s / warm_s:,.0f}x faster"
        )
    finally:
        if server_cm is not None:
            from django.db import connections

            connections.close_all()
            server_cm.__exit__(None, None, None)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Dashboard benchmark: server time of the Thread page of the ~560 MB thread and of the Threads page over
10,000 threads, against the naive way of reading the same thread (LangGraph's SqliteSaver.list()
decoding every checkpoint) measured in the same run.

Run: .venv/bin/python tests/benchmarks/bench_dashboard.py [--quick]   (not collected by pytest).

Uses the data home bench_stores.py generates (the same one, cached under var/bench/). "Cold" = the file's
pages dropped from the OS cache and every derived cache of the process (reader, token counts, the views'
per-head caches) emptied; "warm" = the median of five repeats. Times are the Django test client's, so the
server time without the network.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from contextlib import closing
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent


def _home(quick: bool) -> Path:
    from tests.benchmarks.bench_stores import home_folder

    folder = home_folder(quick)
    if not (folder / "leon.db").exists():
        print("generating the store benchmark's home …", flush=True)
        subprocess.check_call(
            [sys.executable, str(HERE / "bench_stores.py"), "--generate-only"]
            + (["--quick"] if quick else [])
        )
    return folder


def forget_everything(db: Path, *, keep_facts: bool = False) -> None:
    """Cold: the file's pages dropped from the OS cache and every derived cache of the process emptied.

    With `keep_facts`, the head facts file in DASHBOARD_FACTS_DIR stays, as for a new worker; without it,
    nothing was ever derived from this leon.db.
    """
    from django.conf import settings

    from memory_core import memo
    from memory_core.tokens import default_counter
    from tests.benchmarks.bench_stores import drop_page_cache

    if not keep_facts:
        shutil.rmtree(settings.DASHBOARD_FACTS_DIR, ignore_errors=True)
    drop_page_cache(db)
    memo.reset()
    default_counter().clear()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small home, for CI smoke runs")
    args = parser.parse_args()
    home = _home(args.quick)
    os.environ.update(
        LEON_DB_PATH=str(home / "leon.db"),
        LEON_SANDBOX_DB_PATH=str(home / "sandbox.db"),
        LEON_QUEUE_DB_PATH=str(home / "queue.db"),
        MYCEL_CONFIG_HOME=str(home),
        DJANGO_SETTINGS_MODULE="mycel_dashboard.settings",
        DASHBOARD_DATA_DIR=tempfile.mkdtemp(prefix="bench-dashboard-"),
        ALLOWED_HOSTS="testserver",
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.test import Client

    from tests.benchmarks.bench_stores import BIG, naive_series, timed

    call_command("migrate", verbosity=0)
    client = Client()
    client.force_login(User.objects.create_user("bench", password="bench-pass-123"))
    db = home / "leon.db"
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        threads = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
        size = conn.execute(
            "SELECT SUM(length(checkpoint)) FROM checkpoints WHERE thread_id = ?", (BIG,)
        ).fetchone()[0]

    def get(url: str) -> float:
        seconds, response = timed(lambda: client.get(url))
        assert response.status_code == 200, (url, response.status_code)
        return seconds

    forget_everything(db)
    page_cold = get(f"/threads/{BIG}/")
    page_warm = median(get(f"/threads/{BIG}/") for _ in range(5))
    partial_warm = median(
        timed(lambda: client.get(f"/threads/{BIG}/?view=sent&page=3", HTTP_HX_REQUEST="true"))[0]
        for _ in range(5)
    )
    forget_everything(db)
    list_first = get("/threads/")
    list_warm = median(get("/threads/") for _ in range(5))
    search_warm = median(get("/threads/?q=big&sort=messages") for _ in range(5))
    fill_first = get("/threads/?sort=fill")
    fill_warm = median(get("/threads/?sort=fill") for _ in range(5))
    forget_everything(db, keep_facts=True)
    list_cold = get("/threads/")
    fill_cold = get("/threads/?sort=fill")
    flags_cold = get("/threads/?sort=flags")
    flags_warm = median(get("/threads/?sort=flags") for _ in range(5))
    forget_everything(db)
    naive_cold, _ = timed(lambda: naive_series(db))

    print(f"home: {home} ({BIG}: {size / 1e6:,.0f} MB of checkpoints)")
    print(
        f"thread page ({BIG})      cold {page_cold * 1000:7.0f} ms   warm {page_warm * 1000:7.0f} ms"
        f"   timeline partial (sent, page 3) warm {partial_warm * 1000:6.0f} ms"
    )
    print(
        f"naive read of the same thread (SqliteSaver.list(), every checkpoint) cold {naive_cold * 1000:7.0f} ms"
    )
    print(
        f"ratio naive / thread page   cold {naive_cold / page_cold:5.1f}x   warm {naive_cold / page_warm:5.1f}x"
    )
    print(
        f"threads page ({threads:,} threads) first ever {list_first * 1000:7.0f} ms   new worker cold "
        f"{list_cold * 1000:7.0f} ms   warm {list_warm * 1000:7.0f} ms   search+sort warm {search_warm * 1000:6.0f} ms"
    )
    print(
        f"threads page sorted by context fill: first ever (decodes every head once) {fill_first * 1000:7.0f} ms"
        f"   new worker cold {fill_cold * 1000:7.0f} ms   warm {fill_warm * 1000:7.0f} ms"
    )
    print(
        f"threads page sorted by flags (every head's pruning under its settings, per worker) new worker cold "
        f"{flags_cold * 1000:7.0f} ms   warm {flags_warm * 1000:7.0f} ms"
    )
    print(
        "(first ever: nothing derived from this leon.db yet; new worker cold: OS page cache dropped and every "
        "in-memory cache emptied, the head facts file kept; warm: median of 5 repeats)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

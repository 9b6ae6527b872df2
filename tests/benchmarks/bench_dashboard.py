"""Dashboard benchmark: server time of the Thread page of the ~560 MB thread and of the Threads page over
10,000 threads, against the naive way of reading the same thread (LangGraph's SqliteSaver.list()
decoding every checkpoint) measured in the same run.

Run: .venv/bin/python tests/benchmarks/bench_dashboard.py [--quick]   (not collected by pytest).

Uses the data home bench_stores.py generates (cached under var/bench/). "Cold" = the first request in
this process with the file's pages dropped from the OS cache; "warm" = the same request again.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
HERE = Path(__file__).resolve().parent


def _home(quick: bool) -> Path:
    params = (
        {"turns": 30, "tool_chars": 5000, "small": 500}
        if quick
        else {"turns": 200, "tool_chars": 5000, "small": 10_000}
    )
    key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:12]
    folder = ROOT / "var" / "bench" / f"stores-{key}"
    if not (folder / "leon.db").exists():
        print(f"generating the store benchmark's home {params} …", flush=True)
        subprocess.check_call(
            [sys.executable, str(HERE / "bench_stores.py"), "--generate-only"]
            + (["--quick"] if quick else [])
        )
    return folder


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

    from tests.benchmarks.bench_stores import BIG, drop_page_cache, naive_series, timed

    call_command("migrate", verbosity=0)
    client = Client()
    client.force_login(User.objects.create_user("bench", password="bench-pass-123"))
    db = home / "leon.db"

    def get(url: str) -> float:
        seconds, response = timed(lambda: client.get(url))
        assert response.status_code == 200, (url, response.status_code)
        return seconds

    drop_page_cache(db)
    page_cold = get(f"/threads/{BIG}/")
    page_warm = get(f"/threads/{BIG}/")
    partial_warm, _ = timed(lambda: client.get(f"/threads/{BIG}/?view=sent&page=3", HTTP_HX_REQUEST="true"))
    drop_page_cache(db)
    list_cold = get("/threads/")
    list_warm = get("/threads/")
    search_warm = get("/threads/?q=big&sort=messages")
    drop_page_cache(db)
    naive_cold, _ = timed(lambda: naive_series(db))

    print(f"home: {home}")
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
        f"threads page               cold {list_cold * 1000:7.0f} ms   warm {list_warm * 1000:7.0f} ms"
        f"   search+sort warm {search_warm * 1000:6.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

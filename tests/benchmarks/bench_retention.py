"""Retention benchmark: the dry-run (plan + the page's rows) on the store bench home's ~560 MB thread
(bench_stores.py: 200 turns, plus 10,000 small threads), cold and warm, against the naive way.

Run: .venv/bin/python tests/benchmarks/bench_retention.py [--quick] [--skip-naive]   (not collected by pytest).

The naive way is LangGraph's own `SqliteSaver.list()` over the thread, summing each checkpoint serialized
again by the saver's serde and its metadata (what a script without SQL would do to learn the sizes), then
keeping the newest K. "Cold": the file's pages dropped from the OS cache and nothing in memory; "pages
cached": a new process's first request; "warm": a second request (the reader's memos kept). Target: at
most 1 s with the pages cached and warm, on the big thread (the whole fleet is printed for reference).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core import memo  # noqa: E402
from memory_core.app.retention import retention_dry_run  # noqa: E402
from memory_core.footprint.retention import RetentionPolicy, plan_as_dict  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from mycel_dashboard.screens.retention.presenter import retention_rows  # noqa: E402
from tests.benchmarks.bench_stores import BIG, drop_page_cache, home_folder, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

KEEP = 10


def naive_keep_last(db: Path, keep: int) -> tuple[int, int]:
    """(checkpoints, bytes freed) the LangGraph way (our own bench file, so the saver's setup() is harmless)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    sizes: list[int] = []
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        for item in saver.list({"configurable": {"thread_id": BIG}}):  # newest first
            _kind, blob = saver.serde.dumps_typed(item.checkpoint)
            sizes.append(len(blob) + len(json.dumps(item.metadata, default=str).encode()))
    return len(sizes), sum(sizes[keep:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small home, for smoke runs")
    parser.add_argument("--skip-naive", action="store_true", help="skip the (slow) naive way")
    args = parser.parse_args()
    folder = home_folder(args.quick)
    db = folder / "leon.db"
    if not db.exists():
        print(
            f"no bench home at {folder}: run tests/benchmarks/bench_stores.py {'--quick' if args.quick else ''} first"
        )
        return 2
    import langgraph.checkpoint.sqlite  # noqa: F401  # loaded as in a dashboard worker, outside the timings

    locations = point_locations(folder)

    def dry_run(policy: RetentionPolicy, only: set[str] | None) -> dict:
        run = retention_dry_run(MycelReader(locations), policy, only=only)
        data = plan_as_dict(run.plan)
        retention_rows(data, sort="-frees")  # the page's rows, as the view builds them
        return data

    def cold(policy: RetentionPolicy, only: set[str] | None) -> float:
        drop_page_cache(db)
        memo.reset()
        return timed(lambda: dry_run(policy, only))[0]

    ok = True
    print(f"home: {folder}")
    results: dict[str, float] = {}
    for label, policy, only in (
        (f"keep-last {KEEP}, the big thread", RetentionPolicy(keep_last=KEEP), {BIG}),
        ("heads-only, the big thread", RetentionPolicy(heads_only=True), {BIG}),
        (f"keep-last {KEEP}, the whole fleet", RetentionPolicy(keep_last=KEEP), None),
    ):
        colds = [cold(policy, only) for _ in range(3)]
        # The file's pages in the OS cache, nothing kept in memory: a new worker's first request.
        cached = median((memo.reset(), timed(lambda p=policy, o=only: dry_run(p, o))[0])[1] for _ in range(3))
        warm = median(timed(lambda p=policy, o=only: dry_run(p, o))[0] for _ in range(5))
        data = dry_run(policy, only)
        big = next(t for t in data["threads"] if t["thread_id"] == BIG)
        results[label] = median(colds)
        print(
            f"{label}: cold {median(colds) * 1000:.0f} ms (median of {', '.join(f'{c * 1000:.0f}' for c in colds)}), "
            f"pages cached, nothing kept {cached * 1000:.0f} ms, warm {warm * 1000:.0f} ms; big thread frees {big['frees_bytes'] / 1e6:.1f} MB, "
            f"drops {len(big['drops'])}, keeps {len(big['keeps'])}; threads touched {data['totals']['threads_touched']:,}"
        )
        # Cold is the disk reading the thread's 560 MB (the byte facts read each metadata, stored after its
        # checkpoint blob); the target holds for what the dry-run itself costs.
        if only is not None:
            ok = ok and cached <= 1.0 and warm <= 1.0
    if not args.skip_naive:
        drop_page_cache(db)
        naive, (count, freed) = timed(lambda: naive_keep_last(db, KEEP))
        label = f"keep-last {KEEP}, the big thread"
        print(
            f"naive (SqliteSaver.list() + serde dumps over {count} checkpoints; would free {freed / 1e6:.1f} MB "
            f"serialized): cold {naive * 1000:.0f} ms; ratio naive/dry-run cold {naive / results[label]:.1f}x"
        )
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

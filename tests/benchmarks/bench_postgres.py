"""Mycel on PostgreSQL: a long thread's series and a 10,000-thread list through MycelReader, against the
naive way (LangGraph's own AsyncPostgresSaver: alist() decoding every checkpoint, aget_tuple() per
thread), measured in the same run on a throwaway server.

The home is main's layout (LEON_STORAGE_STRATEGY=supabase) written by LangGraph's real PostgresSaver
through a real graph: one 200-turn tool-heavy thread, and a one-turn thread copied 10,000 times in SQL.
Targets (issue 12): series >= 15x faster than alist(); the list <= 300 ms warm; peak RSS <= 300 MB.

    .venv/bin/python tests/benchmarks/bench_postgres.py [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core import memo  # noqa: E402
from memory_core.stores.gc_setup import settle_heap  # noqa: E402
from memory_core.stores.locations import resolve_locations  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.core.store_builders import build_thread  # noqa: E402
from tests.support.postgres import running_postgres  # noqa: E402

BIG = "big-thread"
MYCEL_RUN = {"model": "claude-opus-4-6", "model_provider": "anthropic", "api_key": "sk-ant-FAKE-bench-key"}
COPY_SQL = """
INSERT INTO checkpoints SELECT 'small-' || i, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
  FROM checkpoints, generate_series(1, %(n)s) AS i WHERE thread_id = 'small-template';
INSERT INTO checkpoint_blobs SELECT 'small-' || i, checkpoint_ns, channel, version, type, blob
  FROM checkpoint_blobs, generate_series(1, %(n)s) AS i WHERE thread_id = 'small-template';
INSERT INTO checkpoint_writes SELECT 'small-' || i, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path
  FROM checkpoint_writes, generate_series(1, %(n)s) AS i WHERE thread_id = 'small-template';
DELETE FROM checkpoints WHERE thread_id = 'small-template';
DELETE FROM checkpoint_blobs WHERE thread_id = 'small-template';
DELETE FROM checkpoint_writes WHERE thread_id = 'small-template';
"""


def timed(fn: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    value = fn()
    return time.perf_counter() - started, value


def generate(url: str, *, turns: int, small: int) -> None:
    import psycopg

    build_thread(url, BIG, turns=turns, parallel=1, tool_chars=4700, configurable=MYCEL_RUN)
    build_thread(url, "small-template", turns=1, parallel=1, tool_chars=400, configurable=MYCEL_RUN)
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in COPY_SQL.split(";\n"):
            if statement.strip():
                conn.execute(statement, {"n": small})  # type: ignore[arg-type]
        conn.execute("VACUUM ANALYZE")


async def _naive_series(url: str) -> dict[str, int]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    out: dict[str, int] = {}
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        async for item in saver.alist({"configurable": {"thread_id": BIG}}):
            out[item.config["configurable"]["checkpoint_id"]] = len(
                item.checkpoint["channel_values"].get("messages", [])
            )
    return out


async def _naive_list(url: str, threads: list[str]) -> dict[str, int]:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    found: dict[str, int] = {}
    async with AsyncPostgresSaver.from_conn_string(url) as saver:
        for thread_id in threads:
            head = await saver.aget_tuple({"configurable": {"thread_id": thread_id}})
            found[thread_id] = len(head.checkpoint["channel_values"].get("messages", [])) if head else 0
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="30 turns and 500 threads, for a smoke run")
    parser.add_argument("--generate-into", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--small", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate_into:
        generate(args.generate_into, turns=args.turns, small=args.small)
        return 0
    turns, small = (30, 500) if args.quick else (200, 10_000)
    with running_postgres() as server:
        url = server.create_database("bench")
        started = time.perf_counter()
        # In a child process, so writing the home does not count in this process's peak RSS.
        subprocess.check_call(
            [sys.executable, __file__, "--generate-into", url, "--turns", str(turns), "--small", str(small)]
        )
        print(
            f"generated {turns} turns + {small:,} threads in {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        import psycopg

        with psycopg.connect(url) as conn:
            checkpoints, size = conn.execute(
                "SELECT count(*), pg_size_pretty(pg_database_size(current_database())) FROM checkpoints WHERE thread_id = %s",
                (BIG,),
            ).fetchone() or (0, "?")
        print(f"big thread: {checkpoints} checkpoints; database {size}")
        home = Path(tempfile.mkdtemp(prefix="mycel-pg-bench-"))
        env = {
            "HOME": str(home),
            "LEON_STORAGE_STRATEGY": "supabase",
            "LEON_POSTGRES_URL": url,
            "LEON_DB_PATH": str(home / "leon.db"),
            "MYCEL_CONFIG_HOME": str(home),
        }
        locations = resolve_locations(env)
        import langgraph.checkpoint.postgres  # noqa: F401 - as a worker starts: LangGraph loaded, heap settled

        settle_heap()

        def series() -> Any:
            memo.reset()
            return MycelReader(locations).list_checkpoints(BIG)

        first, fast = timed(series)
        ours = median(timed(series)[0] for _ in range(3))

        def listing() -> Any:
            return MycelReader(locations).list_threads()

        memo.reset()
        list_first, listed = timed(listing)
        list_warm = median(timed(listing)[0] for _ in range(5))
        # Our reads' peak, taken before the naive way runs (ru_maxrss only ever grows).
        ours_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        naive_time, naive = timed(lambda: asyncio.run(_naive_series(url)))
        naive_again = timed(lambda: asyncio.run(_naive_series(url)))[0]
        same = {c.checkpoint_id: c.messages for c in fast.value} == naive
        sample = [r.thread_id for r in listed.value][:1000]
        naive_list_time = timed(lambda: asyncio.run(_naive_list(url, sample)))[0]
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(
        f"series, MycelReader: first {first * 1000:.0f} ms, then {ours * 1000:.0f} ms (nothing kept in memory); "
        f"AsyncPostgresSaver.alist(): {naive_time * 1000:.0f} ms, {naive_again * 1000:.0f} ms"
    )
    print(
        f"ratio alist/ours: {min(naive_time, naive_again) / ours:.1f}x (target >= 15x); same counts: {same}"
    )
    print(
        f"thread list ({len(listed.value):,} threads): first {list_first * 1000:.0f} ms, warm {list_warm * 1000:.0f} ms "
        f"(target <= 300 ms); aget_tuple() per thread for the first {len(sample):,}: {naive_list_time * 1000:.0f} ms "
        f"(~{naive_list_time * len(listed.value) / max(len(sample), 1):.1f} s for all)"
    )
    print(
        f"peak RSS of our reads: {ours_rss:.0f} MB (target <= 300 MB); of the whole run, the naive way's "
        f"decoding included: {rss:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

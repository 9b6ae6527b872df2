"""CLI benchmark: `mycel-memory thread ID --json` as a whole process, on the 200-turn tool-heavy thread.

Run: .venv/bin/python tests/benchmarks/bench_cli.py [--quick] [--runs N]   (not collected by pytest).

Prints, measured in one run, each the median of N whole-process runs (Python's start included):
- ours: `python -m memory_core thread big-thread --json`, with no facts kept (a fresh facts folder each
  run) and with the facts the first run kept;
- the naive way on the same thread: a script that opens LangGraph's NEWEST `SqliteSaver` on the file and
  `list()`s the thread's checkpoints, run in its own venv (var/bench-venv-langgraph-latest, created here
  with an unpinned `pip install langgraph langgraph-checkpoint-sqlite` when absent; the project pins 1.0.x);
- the floor: a bare script that starts Python, reads the checkpoint ids, and reads and decodes the head
  checkpoint with ormsgpack into plain data.
Targets: ours (facts kept) >= 20x faster than list(), and <= 5x the floor. Byte-compiled modules are
written under var/bench/pycache for every process measured, as an installed package has them.
The home is the one bench_stores.py generates and caches under var/bench/.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_stores import BIG, home_folder  # noqa: E402

NAIVE_VENV = ROOT / "var" / "bench-venv-langgraph-latest"
PYCACHE = ROOT / "var" / "bench" / "pycache"
TARGET_VS_LIST = 20.0
TARGET_VS_FLOOR = 5.0

NAIVE_SCRIPT = """
import sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
db, thread_id = sys.argv[1], sys.argv[2]
# Read-only: the saver's setup() finds its tables and changes nothing.
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
saver = SqliteSaver(conn)
print(sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}})))
"""

FLOOR_SCRIPT = """
import sqlite3, sys
import ormsgpack
db, thread_id = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
ids = [r[0] for r in conn.execute(
    "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
    (thread_id,))]
(blob,) = conn.execute(
    "SELECT checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
    (thread_id, ids[-1])).fetchone()
def plain(code, data):
    return ormsgpack.unpackb(data, ext_hook=plain, option=ormsgpack.OPT_NON_STR_KEYS)
head = ormsgpack.unpackb(blob, ext_hook=plain, option=ormsgpack.OPT_NON_STR_KEYS)
print(len(ids), len(head["channel_values"]["messages"]))
"""


def naive_python() -> Path:
    """The newest LangGraph saver, in a venv of its own (created on first use)."""
    python = NAIVE_VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {NAIVE_VENV} (newest langgraph-checkpoint-sqlite) …", flush=True)
        subprocess.check_call([sys.executable, "-m", "venv", str(NAIVE_VENV)])
        subprocess.check_call(
            [str(python), "-m", "pip", "install", "--quiet", "langgraph", "langgraph-checkpoint-sqlite"]
        )
    return python


def package_version(python: Path, name: str) -> str:
    return subprocess.check_output(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({name!r}))"], text=True
    ).strip()


def environment(home: Path, facts: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(PYCACHE),
        LEON_DB_PATH=str(home / "leon.db"),
        LEON_SANDBOX_DB_PATH=str(home / "sandbox.db"),
        LEON_QUEUE_DB_PATH=str(home / "queue.db"),
        MYCEL_CONFIG_HOME=str(home),
        MYCEL_MEMORY_CACHE_DIR=str(facts),
    )
    return env


def run_once(command: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return elapsed, done.stdout


def timed_runs(runs: int, command: list[str], env: dict[str, str], before: Callable[[], None]) -> list[float]:
    times: list[float] = []
    for _ in range(runs):
        before()
        times.append(run_once(command, env)[0])
    return times


def fmt(times: list[float]) -> str:
    return f"{median(times) * 1000:.0f} ms (median of {', '.join(f'{t * 1000:.0f}' for t in times)})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the small home (smoke run; targets not judged)")
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs per measure (default 5)")
    args = parser.parse_args()
    home = home_folder(args.quick)
    if not (home / "leon.db").exists():
        print(f"generating the benchmark home into {home} …", flush=True)
        command = [sys.executable, str(ROOT / "tests/benchmarks/bench_stores.py"), "--generate-only"]
        subprocess.check_call(command + (["--quick"] if args.quick else []))
    db = home / "leon.db"
    naive = naive_python()
    scratch = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        facts = scratch / "facts"
        env = environment(home, facts)
        ours = [sys.executable, "-m", "memory_core", "thread", BIG, "--json"]
        naive_cmd = [str(naive), "-c", NAIVE_SCRIPT, str(db), BIG]
        floor_cmd = [sys.executable, "-c", FLOOR_SCRIPT, str(db), BIG]

        def forget_facts() -> None:
            shutil.rmtree(facts, ignore_errors=True)

        # One run of each first: byte-compiles every module, and pages the file in for all alike.
        for command in (ours, floor_cmd, naive_cmd):
            run_once(command, env)
        cold = timed_runs(args.runs, ours, env, forget_facts)
        _, cold_out = run_once(ours, env)  # keeps the facts for the warm runs
        warm = timed_runs(args.runs, ours, env, lambda: None)
        _, warm_out = run_once(ours, env)
        floor = timed_runs(args.runs, floor_cmd, env, lambda: None)
        naive_times = timed_runs(args.runs, naive_cmd, env, lambda: None)
        listed = int(run_once(naive_cmd, env)[1].split()[-1])
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    report = json.loads(warm_out)
    same = cold_out == warm_out and listed == len(report["checkpoints"])
    print(f"home: {home}")
    print(
        f"thread {BIG}: {len(report['checkpoints'])} checkpoints, {len(report['messages'])} messages at the head; "
        f"{os.path.getsize(db) / 1e6:.0f} MB leon.db"
    )
    print(
        f"LangGraph in {NAIVE_VENV.name}: langgraph-checkpoint-sqlite {package_version(naive, 'langgraph-checkpoint-sqlite')}, "
        f"langgraph-checkpoint {package_version(naive, 'langgraph-checkpoint')} "
        f"(the project pins langgraph-checkpoint-sqlite {package_version(Path(sys.executable), 'langgraph-checkpoint-sqlite')})"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (figures vary ±30 %)")
    print()
    print(f"mycel-memory thread --json, no facts kept:  {fmt(cold)}")
    print(f"mycel-memory thread --json, facts kept:     {fmt(warm)}")
    print(f"SqliteSaver.list(), newest LangGraph:       {fmt(naive_times)}")
    print(f"floor (start Python, ids, decode the head): {fmt(floor)}")
    vs_list = median(naive_times) / median(warm)
    vs_floor = median(warm) / median(floor)
    print(
        f"facts kept: {vs_list:.1f}x faster than list() (target >= {TARGET_VS_LIST:.0f}x), "
        f"{vs_floor:.1f}x the floor (target <= {TARGET_VS_FLOOR:.0f}x); "
        f"no facts kept: {median(naive_times) / median(cold):.1f}x faster than list()"
    )
    print(f"same output with and without kept facts, same checkpoint count as list(): {same}")
    ok = same and vs_list >= TARGET_VS_LIST and vs_floor <= TARGET_VS_FLOOR
    if args.quick:
        print("quick run: the targets are for the full-size home")
        return 0 if same else 1
    print("targets met" if ok else "targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

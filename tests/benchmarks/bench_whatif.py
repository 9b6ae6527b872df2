"""Config what-if benchmark: one slider move on a 2,000-message thread, cached vs the naive way.

The naive way re-reads and decodes the thread's head checkpoint from SQLite on every request; the
Config screen keeps decoded messages per head checkpoint id (and the current side per settings), so a
slider move costs one replay under the proposed settings.

Run: .venv/bin/python tests/benchmarks/bench_whatif.py [--home FOLDER]
The demo home (LangGraph's saver, `write_demo_home(long_turns=500)`: 2,000 messages, ~1.4 GB because
every checkpoint stores the whole list) takes a couple of minutes to write; pass --home to keep and
reuse it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory_core import memo  # noqa: E402
from memory_core.demo import write_demo_home  # noqa: E402
from memory_core.memory_settings import MemorySettings  # noqa: E402
from memory_core.stores.locations import resolve_locations  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from memory_core.whatif import compare_sides, thread_whatif  # noqa: E402
from mycel_dashboard.screens.shared import replays  # noqa: E402

LONG_TURNS = 500  # four messages each


def _timed(run: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append((time.perf_counter() - started) * 1000)
    return times


def _home(folder: Path | None) -> tuple[Path, str]:
    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="bench-whatif-"))
    if not (folder / "leon.db").exists():
        print(f"writing a demo home with a {LONG_TURNS * 4}-message thread into {folder} ...", flush=True)
        started = time.perf_counter()
        write_demo_home(folder, threads=1, long_turns=LONG_TURNS)
        print(f"  written in {time.perf_counter() - started:.0f} s", flush=True)
    reader = MycelReader(_locations(folder))
    rows = reader.list_threads().value
    longest = max(rows, key=lambda r: r.messages)
    return folder, longest.thread_id


def _locations(folder: Path):  # type: ignore[no-untyped-def]
    return resolve_locations(
        {"HOME": str(folder), "LEON_DB_PATH": str(folder / "leon.db"), "MYCEL_CONFIG_HOME": str(folder)}
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=None, help="reuse (or create) the demo home here")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    folder, thread_id = _home(args.home)
    reader = MycelReader(_locations(folder))
    row = next(r for r in reader.list_threads().value if r.thread_id == thread_id)
    # A limit small enough that the thread compacts: the costliest path of the replay.
    current = MemorySettings(context_limit=20_000)
    proposals = [replace(current, soft_trim_chars=3000 - 50 * (n + 1)) for n in range(args.repeat)]

    def naive() -> object:
        proposed = proposals.pop(0) if proposals else replace(current, soft_trim_chars=1234)
        state = reader.get_state(thread_id, row.head_checkpoint_id)
        assert state.value is not None
        return thread_whatif(state.value.messages, current=current, proposed=proposed)

    naive_ms = _timed(naive, args.repeat)

    memo.reset()
    store = str(reader.locations.main)
    head = replays.replay_input(reader, row)  # the first request decodes once and replays "now"
    messages = head.messages
    replays.thread_replay(
        store, thread_id, row.head_checkpoint_id, messages, current, summary_chars=4000, tiktoken=True
    )
    proposals = [replace(current, soft_trim_chars=2000 - 50 * (n + 1)) for n in range(args.repeat)]

    def cached() -> object:
        proposed = proposals.pop(0) if proposals else replace(current, soft_trim_chars=1234)
        msgs = replays.replay_input(reader, row).messages
        now = replays.thread_replay(
            store, thread_id, row.head_checkpoint_id, msgs, current, summary_chars=4000, tiktoken=True
        )
        then = replays.thread_replay(
            store, thread_id, row.head_checkpoint_id, msgs, proposed, summary_chars=4000, tiktoken=False
        )
        return compare_sides(msgs, now, then)

    cached_ms = _timed(cached, args.repeat)
    whatif = cached()
    assert isinstance(whatif, type(thread_whatif(messages, current=current, proposed=current)))

    print(
        f"thread {thread_id}: {len(messages):,} messages, {len(whatif.current.calls):,} model calls replayed"
    )
    print(f"{'':34}{'median ms':>10}{'max ms':>10}")
    print(f"{'naive (read + decode + what-if)':34}{statistics.median(naive_ms):>10.1f}{max(naive_ms):>10.1f}")
    print(
        f"{'cached (what-if of the proposal)':34}{statistics.median(cached_ms):>10.1f}{max(cached_ms):>10.1f}"
    )
    print(f"speed-up: {statistics.median(naive_ms) / statistics.median(cached_ms):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Prompt-cache benchmark: the cache analysis (`mycel-memory cache THREAD_ID`, the cache screen's thread
view) of a 2,000-message thread, against the naive way.

Run: .venv/bin/python tests/benchmarks/bench_prompt_cache.py   (not collected by pytest).

The thread (400 owner turns, two tool calls each, results of 500 to 14,000 characters, so results are
trimmed and cleared as they leave protect_recent) is written once under var/bench/ through LangGraph's
real SqliteSaver (`put`, a checkpoint every 50 turns and the head) and reused. "First": a new process's
first analysis (the head decoded, the record built, every message counted by tiktoken). "Warm": the next
ones (the record kept per head; only the prefix analysis runs). Target: warm at most 300 ms. The naive way
prunes every call's whole request again from scratch (Mycel's protect_recent, soft trim, hard clear, on the
decoded messages), compares each request with the previous one message by message, and counts the
re-written part with the same tiktoken counter.
"""

from __future__ import annotations

import random
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.app.prompt_cache import thread_cache  # noqa: E402
from memory_core.memory_settings import MemorySettings  # noqa: E402
from memory_core.messages import messages_from_dicts  # noqa: E402
from memory_core.pruning import prune_decisions  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from memory_core.tokens import default_counter  # noqa: E402
from tests.benchmarks.bench_stores import timed  # noqa: E402
from tests.core.store_builders import point_locations  # noqa: E402

TARGET_S = 0.300
THREAD = "cache-bench"
TURNS = 400  # 5 messages a turn: 2,000 messages
LAYOUT = 1  # bump when write_home() changes what it writes


def _messages() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    rng = random.Random(15)
    out: list[Any] = []
    for turn in range(TURNS):
        out.append(HumanMessage(content=f"turn {turn}: check the stations", id=f"h{turn}"))
        calls = [
            {"name": "Bash", "args": {"n": f"{turn}-{k}"}, "id": f"c{turn}-{k}", "type": "tool_call"}
            for k in range(2)
        ]
        out.append(
            AIMessage(
                content="checking",
                tool_calls=calls,
                id=f"a{turn}",
                response_metadata={"model_name": "claude-sonnet-4-5-20250929"},
            )
        )
        for k in range(2):
            size = rng.choice([500, 1500, 2500, 4000, 6000, 14000])
            text = " ".join(f"{rng.randint(0, 99999):05d} reading ok" for _ in range(size // 18))[:size]
            out.append(ToolMessage(content=text, tool_call_id=f"c{turn}-{k}", name="Bash", id=f"t{turn}-{k}"))
        out.append(
            AIMessage(
                content=f"done with turn {turn}",
                id=f"d{turn}",
                response_metadata={"model_name": "claude-sonnet-4-5-20250929"},
            )
        )
    return out


def home() -> Path:
    folder = ROOT / "var" / "bench" / f"prompt-cache-{LAYOUT}"
    db = folder / "leon.db"
    if db.exists():
        return folder
    from langgraph.checkpoint.base import create_checkpoint, empty_checkpoint
    from langgraph.checkpoint.sqlite import SqliteSaver

    folder.mkdir(parents=True, exist_ok=True)
    messages = _messages()
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        config: dict[str, Any] = {"configurable": {"thread_id": THREAD, "checkpoint_ns": ""}}
        version = None
        for end in [*range(250, len(messages), 250), len(messages)]:
            version = saver.get_next_version(version, None)
            base = empty_checkpoint()
            base["channel_values"] = {"messages": messages[:end]}
            base["channel_versions"] = {"messages": version}
            checkpoint = create_checkpoint(base, None, end)
            config = saver.put(config, checkpoint, {"source": "loop", "step": end}, {"messages": version})
    return folder


def naive(db: Path) -> tuple[int, int]:
    """(calls, re-written tokens) re-pruning every request from scratch and comparing message lists."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    counter = default_counter()
    settings = MemorySettings()
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        state = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": THREAD}})
    assert state is not None
    messages = messages_from_dicts([m.model_dump() for m in state.checkpoint["channel_values"]["messages"]])
    previous: list[str] | None = None
    calls = rewritten = 0
    for i, message in enumerate(messages):
        if message.type.value != "ai":
            continue
        calls += 1
        request = [m.text for m in prune_decisions(messages[:i], settings=settings).messages]
        if previous is not None:
            k = next(
                (n for n, (a, b) in enumerate(zip(previous, request, strict=False)) if a != b), len(previous)
            )
            rewritten += sum(counter.count(t) for t in previous[k:])
        previous = request
    return calls, rewritten


def main() -> int:
    folder = home()
    reader = MycelReader(point_locations(folder))
    row = reader.get_thread(THREAD).value
    assert row is not None and row.messages == 2 * TURNS + 3 * TURNS
    first_s, _ = timed(lambda: thread_cache(reader, row, book=None))
    warm = []
    for _ in range(5):
        seconds, found = timed(lambda: thread_cache(reader, row, book=None))
        warm.append(seconds)
    naive_s, (calls, naive_tokens) = timed(lambda: naive(folder / "leon.db"))
    ours = found.current
    print(f"thread: {row.messages:,} messages, {len(ours.calls):,} model calls ({ours.unit})")
    print(
        f"re-written tokens: {ours.tally.rows and sum(r[3] for r in ours.tally.rows):,} "
        f"(naive, compaction-blind: {naive_tokens:,} over {calls:,} calls)"
    )
    print(
        f"first in process: {first_s * 1000:.0f} ms; warm median of 5: {median(warm) * 1000:.1f} ms "
        f"(target {TARGET_S * 1000:.0f} ms)"
    )
    print(
        f"naive (re-prune every request, compare lists): {naive_s * 1000:.0f} ms; "
        f"ratio naive / warm: {naive_s / median(warm):.0f}x, naive / first: {naive_s / first_s:.1f}x"
    )
    return 0 if median(warm) <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

"""Engine benchmark: the token counter with and without its cache, and plan/replay on a 2,000-message thread.

Run: .venv/bin/python tests/benchmarks/bench_engine.py   (not collected by pytest; prints ratios measured
in the same run, so they compare like with like on whatever machine runs it).
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from memory_core.compaction import plan_compaction  # noqa: E402
from memory_core.memory_settings import MemorySettings  # noqa: E402
from memory_core.messages import Message, message_from_dict  # noqa: E402
from memory_core.replay import replay_calls  # noqa: E402
from memory_core.tokens import TokenCounter, default_counter, estimate_tokens  # noqa: E402

T = TypeVar("T")
WORDS = [
    "the",
    "agent",
    "reads",
    "a",
    "file",
    "then",
    "runs",
    "the",
    "tests",
    "and",
    "fixes",
    "what",
    "failed",
    "before",
    "it",
    "answers",
]
CJK = "记忆压缩会把较早的对话总结成一段摘要然后保留最近的消息以便继续工作"
CODE = [
    "def handle(request):\n    data = json.loads(request.body)\n    return JsonResponse({'ok': True})\n",
    "for i, row in enumerate(rows):\n    if row['status'] != 'done':\n        pending.append((i, row))\n",
    "class Pruner:\n    def __init__(self, soft=3000, hard=10000):\n        self.soft, self.hard = soft, hard\n",
]


def _piece(rng: random.Random, kind: int) -> str:
    if kind == 0:
        return "".join(rng.choice(CODE) for _ in range(rng.randint(5, 40)))
    if kind == 1:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(80, 900))) + "."
    if kind == 2:
        return "".join(rng.choice(CJK) for _ in range(rng.randint(200, 1500)))
    rows = [
        {"id": rng.randint(0, 10**6), "path": f"/src/{rng.choice(WORDS)}.py", "ok": rng.random() < 0.5}
        for _ in range(rng.randint(10, 120))
    ]
    return json.dumps(rows)


def mixed_texts(total_bytes: int, seed: int = 7) -> list[str]:
    """Tool-output-sized pieces of code, prose, CJK and JSON adding up to about total_bytes of UTF-8."""
    rng = random.Random(seed)
    texts: list[str] = []
    size = 0
    while size < total_bytes:
        text = _piece(rng, len(texts) % 4)
        texts.append(text)
        size += len(text.encode())
    return texts


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bench_counter() -> None:
    texts = mixed_texts(5 * 1024 * 1024)
    megabytes = sum(len(t.encode()) for t in texts) / 1e6
    encoding = default_counter().encoding_name
    probe = TokenCounter(encoding)
    probe.count_uncached("warm up the encoder")
    # Interleaved rounds, best of each: the machine's noise is larger than the cache's own overhead.
    uncached_s = cold_s = warm_s = float("inf")
    for _ in range(3):
        seconds, total = timed(lambda: sum(probe.count_uncached(t) for t in texts))
        uncached_s = min(uncached_s, seconds)
        counter = TokenCounter(encoding)
        seconds, cold_total = timed(lambda counter=counter: sum(counter.count(t) for t in texts))
        cold_s = min(cold_s, seconds)
        seconds, warm_total = timed(lambda counter=counter: sum(counter.count(t) for t in texts))
        warm_s = min(warm_s, seconds)
        assert total == cold_total == warm_total
    print(
        f"token counter ({encoding}), best of 3 interleaved rounds, on {megabytes:.1f} MB mixed text, {len(texts)} pieces, {total:,} tokens"
    )
    print(f"  uncached            {uncached_s:7.3f} s  {megabytes / uncached_s:8.1f} MB/s")
    print(f"  cache, first pass   {cold_s:7.3f} s  {megabytes / cold_s:8.1f} MB/s  (hash + tokenize + store)")
    print(
        f"  cache, repeat pass  {warm_s:7.3f} s  {megabytes / warm_s:8.1f} MB/s  ({uncached_s / warm_s:,.0f}x faster than uncached)"
    )
    print(f"  first-pass overhead of the cache: {100 * (cold_s / uncached_s - 1):+.1f} %")


def thread(messages: int, seed: int = 11) -> tuple[Message, ...]:
    """A tool-heavy thread: human turns, AI steps with one or two calls, results of mixed sizes."""
    rng = random.Random(seed)
    raws: list[dict[str, Any]] = []
    call = 0
    while len(raws) < messages:
        raws.append(
            {"type": "human", "content": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 60)))}
        )
        for _ in range(rng.randint(2, 12)):
            ids = [f"call_{call + k}" for k in range(rng.choice([1, 1, 1, 2]))]
            call += len(ids)
            raws.append(
                {
                    "type": "ai",
                    "content": rng.choice(WORDS),
                    "tool_calls": [{"id": i, "name": "Bash"} for i in ids],
                    "usage_metadata": {"input_tokens": rng.randint(1000, 90000)},
                }
            )
            for call_id in ids:
                size = rng.choice([200, 800, 2500, 4000, 9000, 15000, 40000])
                raws.append({"type": "tool", "content": "x" * size, "tool_call_id": call_id})
        raws.append(
            {"type": "ai", "content": " ".join(rng.choice(WORDS) for _ in range(40)), "tool_calls": []}
        )
    return tuple(message_from_dict({**raw, "id": f"m{i}"}) for i, raw in enumerate(raws[:messages]))


def bench_plan_and_replay() -> None:
    messages = thread(2000)
    memory = MemorySettings(context_limit=200_000)
    ai_count = sum(1 for m in messages if m.type.value == "ai")
    print(
        f"\nthread of {len(messages)} messages, {ai_count} model calls, {estimate_tokens(messages):,} estimated tokens stored"
    )
    plan_s, plan = timed(lambda: plan_compaction(messages, settings=memory))
    print(
        f"  plan_compaction (whole thread)         {plan_s * 1000:8.1f} ms  (compact_up_to_index {plan.compact_up_to_index})"
    )
    replay_s, calls = timed(lambda: replay_calls(messages, settings=memory))
    compacted = sum(c.compacted for c in calls)
    print(
        f"  replay_calls ({len(calls)} calls)               {replay_s * 1000:8.1f} ms  ({compacted} calls compact)"
    )
    sample = calls[:: max(1, len(calls) // 50)]
    naive_sample_s, _ = timed(lambda: [plan_compaction(messages[: c.index], settings=memory) for c in sample])
    naive_s = naive_sample_s * len(calls) / len(sample)
    print(
        f"  naive: plan_compaction per call         {naive_s * 1000:8.1f} ms  (estimated from {len(sample)} calls)"
    )
    print(f"  replay vs naive: {naive_s / replay_s:,.0f}x faster")
    counter = TokenCounter(default_counter().encoding_name)
    tt_s, _ = timed(lambda: replay_calls(messages, settings=memory, counter=counter))
    tt_again_s, _ = timed(lambda: replay_calls(messages, settings=memory, counter=counter))
    print(
        f"  replay_calls with tiktoken, cold cache  {tt_s * 1000:8.1f} ms;  warm cache {tt_again_s * 1000:.1f} ms"
    )


if __name__ == "__main__":
    bench_counter()
    bench_plan_and_replay()

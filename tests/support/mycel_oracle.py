"""An oracle for tests: what Mycel hands its model at every call, from the one-call plan the vectors
prove against Mycel's code (plan_compaction) and Mycel's cache rule (reference §3.9) — independent of
memory_core.call_record, which the tests hold against it."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from memory_core.compaction import plan_compaction
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType


def expected_request_sizes(
    messages: Sequence[Message], settings_at: Callable[[int], MemorySettings]
) -> list[int]:
    """Messages handed the model at every call (system prompt included), walking plan_compaction call by
    call with Mycel's cache: a compaction sends summary + kept; a later call under the trigger reuses the
    cached summary; a call over the trigger that cannot compact sends everything."""
    cached: int | None = None
    sent = []
    calls = [i for i, m in enumerate(messages) if m.type is MessageType.AI]
    for n, i in enumerate(calls):
        plan = plan_compaction(messages[:i], settings=settings_at(n))
        if plan.would_compact:
            cached = plan.compact_up_to_index
            sent.append(2 + i - cached)
        elif not plan.should_compact and cached is not None and 0 < cached <= i:
            sent.append(2 + i - cached)
        else:
            sent.append(1 + i)
    return sent

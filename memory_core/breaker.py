"""Mycel dev's compaction circuit breaker, as its head checkpoint saves it (reference mycel-dev §4.3).

MemoryMiddleware snapshots `{"failure_count": int, "breaker_open": bool}` into the `memory_compaction_state`
channel at every save and restores it on the next query, so the head says whether compaction is off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core.records import BreakerState

BREAKER_CHANNEL = "memory_compaction_state"


def breaker_from_channel(value: Any) -> BreakerState | None:
    """The breaker in a `memory_compaction_state` value; None when it is not that shape (main layouts)."""
    if not isinstance(value, Mapping):
        return None
    count, is_open = value.get("failure_count"), value.get("breaker_open")
    if isinstance(count, bool) or not isinstance(count, int) or not isinstance(is_open, bool | int):
        return None
    return BreakerState(failure_count=count, open=bool(is_open))


def breaker_of(channels: Mapping[str, Any]) -> BreakerState | None:
    """The breaker among a decoded checkpoint's channels (CheckpointState.channels), if it saves one."""
    return breaker_from_channel(channels.get(BREAKER_CHANNEL))

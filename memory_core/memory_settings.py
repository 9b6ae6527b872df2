"""The memory settings Mycel's middleware acts on, with Mycel's defaults (reference §3.2–3.5, §4.2).

This is the value the pure engine takes; memory_core.config loads, validates and explains it.
"""

from __future__ import annotations

from dataclasses import dataclass

# Fixed in Mycel's code, not configurable there (core/runtime/agent.py passes compaction_threshold=0.7).
MYCEL_COMPACTION_THRESHOLD = 0.7
# Mycel's fallback context limit when nothing else resolves one.
DEFAULT_CONTEXT_LIMIT = 128_000


def compaction_trigger(context_limit: int, threshold: float = MYCEL_COMPACTION_THRESHOLD) -> int:
    """The estimate above which Mycel compacts: int(context limit × 0.7) — the one place it is computed."""
    return int(context_limit * threshold)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySettings:
    soft_trim_chars: int = 3000
    hard_clear_threshold: int = 10000
    protect_recent: int = 3
    reserve_tokens: int = 16384  # stored by Mycel's compactor, never used in any calculation
    keep_recent_tokens: int = 20000
    context_limit: int = DEFAULT_CONTEXT_LIMIT
    threshold: float = MYCEL_COMPACTION_THRESHOLD
    # Mycel dev's absolute trigger (memory.compaction.trigger_tokens); main has no such setting and its
    # rules ignore it. Named apart from `trigger_tokens` below, which every screen reads as main's trigger.
    fixed_trigger_tokens: int | None = None

    @property
    def trigger_tokens(self) -> int:
        """Compaction fires when Mycel's estimate is strictly above this."""
        return compaction_trigger(self.context_limit, self.threshold)

    @property
    def effective_keep_recent_tokens(self) -> int:
        """keep_recent_tokens after Mycel's cap of int(0.4 × context limit) (it only ever lowers it)."""
        cap = int(self.context_limit * 0.4)
        if self.keep_recent_tokens > cap > 0:
            return cap
        return self.keep_recent_tokens

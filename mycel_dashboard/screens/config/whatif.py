"""The Config screen's live what-if: the chosen thread with its chart and the fleet totals, with caches.

Decoded messages and replayed sides are cached per thread head, so a slider move never re-reads SQLite.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_core.messages import Message
from memory_core.pruning import PruneAction
from memory_core.records import ThreadRow
from memory_core.replay import DEFAULT_SUMMARY_CHARS
from memory_core.settings import MemorySettings
from memory_core.stores.reader import MycelReader
from memory_core.whatif import (
    BadgeChange,
    FleetThread,
    FleetWhatIf,
    ThreadSide,
    ThreadWhatIf,
    compare_sides,
    fleet_whatif,
    thread_side,
)
from mycel_dashboard.screens.config.resolver import SettingsResolver
from mycel_dashboard.screens.shared.caches import BoundedCache, derived_from
from mycel_dashboard.screens.shared.charts import whatif_figure

# Threads the fleet what-if covers (most recently active first); their decoded messages stay cached.
FLEET_LIMIT = 50
_MESSAGES: BoundedCache[tuple[Message, ...]] = BoundedCache(FLEET_LIMIT + 14)
# A slider revisits values: keep the fleet's replays for the last few dozen proposals, not just four.
_SIDES: BoundedCache[ThreadSide] = BoundedCache(32 * FLEET_LIMIT)

BADGE_LABELS: Mapping[PruneAction, str] = {
    PruneAction.UNCHANGED: "unchanged",
    PruneAction.PROTECTED: "protected",
    PruneAction.SOFT_TRIMMED: "soft-trimmed",
    PruneAction.HARD_CLEARED: "hard-cleared",
}


def cached_messages(reader: MycelReader, row: ThreadRow) -> tuple[Message, ...]:
    """The head checkpoint's messages, decoded once per head (slider moves never re-read SQLite)."""

    def decode() -> tuple[Message, ...]:
        state = reader.get_state(row.thread_id, row.head_checkpoint_id)
        return state.value.messages if state.value is not None else ()

    return _MESSAGES.get_or_compute(
        (str(reader.locations.main), row.thread_id, row.head_checkpoint_id), decode
    )


def cached_side(
    reader: MycelReader,
    row: ThreadRow,
    messages: Sequence[Message],
    settings: MemorySettings,
    summary_chars: int,
) -> ThreadSide:
    key = (str(reader.locations.main), row.thread_id, row.head_checkpoint_id, settings, summary_chars)
    return _SIDES.get_or_compute(
        key, lambda: thread_side(messages, settings=settings, summary_chars=summary_chars)
    )


def clear_caches() -> None:
    _MESSAGES.clear()
    _SIDES.clear()


@dataclass(frozen=True, slots=True)
class ChosenThread:
    row: ThreadRow
    whatif: ThreadWhatIf
    figure: dict[str, Any] | None
    message_count: int

    @property
    def badge_rows(self) -> list[tuple[BadgeChange, str, str]]:
        """The changed results with their badge labels, as the Thread screen words them."""
        return [(c, BADGE_LABELS[c.before], BADGE_LABELS[c.after]) for c in self.whatif.badge_changes]


@dataclass(frozen=True, slots=True)
class WhatIf:
    chosen: ChosenThread | None
    fleet: FleetWhatIf
    fleet_threads: int  # threads covered
    all_threads: int
    elapsed_ms: float
    thread_ms: float  # the chosen thread alone
    problems: tuple[str, ...] = ()


def fleet_rows(threads: Sequence[ThreadRow]) -> list[ThreadRow]:
    """The threads the fleet what-if covers: ones with messages, most recently active first."""
    with_messages = [t for t in threads if t.head_checkpoint_id and t.messages]
    with_messages.sort(key=lambda t: (t.updated_at is not None, t.updated_at), reverse=True)
    return with_messages[:FLEET_LIMIT]


def default_thread(threads: Sequence[ThreadRow]) -> str | None:
    """The thread shown when none is chosen: the longest one (the most for a what-if to show)."""
    candidates = [t for t in threads if t.head_checkpoint_id and t.messages]
    return max(candidates, key=lambda t: t.messages).thread_id if candidates else None


def compute_whatif(
    reader: MycelReader,
    threads: Sequence[ThreadRow],
    resolver: SettingsResolver,
    *,
    chosen_id: str | None,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
    thread_url: Callable[[str, int], str],
) -> WhatIf:
    """The chosen thread's what-if (with its chart) and the fleet totals, under current vs proposed."""
    started = time.perf_counter()
    problems: list[str] = []
    chosen: ChosenThread | None = None
    thread_ms = 0.0
    covered = derived_from(threads, ("fleet",), lambda: fleet_rows(threads))
    by_id = derived_from(threads, ("by_id",), lambda: {t.thread_id: t for t in threads})
    targets = list(covered)
    if chosen_id in by_id and by_id[chosen_id] not in covered:
        targets.append(by_id[chosen_id])
    items: list[FleetThread] = []
    for row in targets:
        thread_started = time.perf_counter()
        try:
            messages = cached_messages(reader, row)
            current, proposed = resolver.pair(row)
            chars = summary_chars if row.thread_id == chosen_id else DEFAULT_SUMMARY_CHARS
            now = cached_side(reader, row, messages, current, chars)
            then = now if proposed == current else cached_side(reader, row, messages, proposed, chars)
            whatif = compare_sides(messages, now, then)
        except Exception as exc:  # noqa: BLE001 - one unreadable thread must not take the page down
            problems.append(f"{row.thread_id}: could not compute the what-if ({type(exc).__name__}: {exc})")
            continue
        if row in covered:
            items.append(FleetThread(thread_id=row.thread_id, whatif=whatif))
        if row.thread_id == chosen_id:
            chosen = ChosenThread(
                row=row,
                whatif=whatif,
                figure=whatif_figure(whatif, lambda index, tid=row.thread_id: thread_url(tid, index)),
                message_count=len(messages),
            )
            thread_ms = (time.perf_counter() - thread_started) * 1000
    fleet = fleet_whatif(items)
    return WhatIf(
        chosen=chosen,
        fleet=fleet,
        fleet_threads=len(items),
        all_threads=len(threads),
        elapsed_ms=(time.perf_counter() - started) * 1000,
        thread_ms=thread_ms,
        problems=tuple(problems),
    )

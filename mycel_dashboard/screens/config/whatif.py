"""The Config screen's live what-if: the chosen thread with its chart and the fleet totals.

The current side of every thread is the record the Thread screen draws (screens/shared/replays.py: the
calls as Mycel made them), kept per head with the decoded messages, so a slider move never re-reads SQLite
and replays only the proposal.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from memory_core.app.prompt_cache import side_rewrites
from memory_core.economics.prompt_cache import unit_of
from memory_core.messages import Message
from memory_core.pruning import PruneAction
from memory_core.records import ThreadRow
from memory_core.rules.dev import trigger_under
from memory_core.rules.profile import RulesProfile, rules_for
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from memory_core.whatif import (
    BadgeChange,
    FleetThread,
    FleetWhatIf,
    ThreadSide,
    ThreadWhatIf,
    compare_sides,
    fleet_whatif,
    recorded_side,
)
from mycel_dashboard.screens.shared.caches import derived_from
from mycel_dashboard.screens.shared.charts import rules_words, whatif_figure
from mycel_dashboard.screens.shared.memory import SettingsResolver
from mycel_dashboard.screens.shared.replays import replay_input, thread_record, thread_replay

# Threads the fleet what-if covers (most recently active first).
FLEET_LIMIT = 50

BADGE_LABELS: Mapping[PruneAction, str] = {
    PruneAction.UNCHANGED: "unchanged",
    PruneAction.PROTECTED: "protected",
    PruneAction.SOFT_TRIMMED: "soft-trimmed",
    PruneAction.HARD_CLEARED: "hard-cleared",
}


@dataclass(frozen=True, slots=True)
class ChosenThread:
    row: ThreadRow
    whatif: ThreadWhatIf
    figure: dict[str, Any] | None
    message_count: int
    rules: RulesProfile = RulesProfile.MAIN  # whose rules both sides follow
    rules_words: str = ""
    trigger_tokens: int | None = None  # the proposed dev trigger_tokens (None: int(0.7 × the limit))
    cache_rewrites: tuple[int, int] = (0, 0)  # prompt-cache tokens re-written, current → proposed

    @property
    def trigger_now(self) -> int:
        """The trigger the current side ran under: its record's last call's (the settings in force, which
        the record can pin apart from today's config), else today's config's by its rules."""
        calls = self.whatif.current.calls
        return calls[-1].trigger_tokens if calls else trigger_under(self.rules, self.whatif.current.settings)

    @property
    def limit_now(self) -> int:
        """The context limit the current side ran under: its record's last call's, as for the trigger."""
        calls = self.whatif.current.calls
        return calls[-1].context_limit if calls else self.whatif.current.settings.context_limit

    @property
    def limit_proposed(self) -> int:
        return self.whatif.proposed.settings.context_limit

    @property
    def breaker_opened_at(self) -> int | None:
        """The call after which Mycel dev's breaker was open in the record, if it ever was."""
        return next((c.call for c in self.whatif.current.calls if c.breaker_open), None)

    @property
    def trigger_proposed(self) -> int:
        return trigger_under(self.rules, self.whatif.proposed.settings)

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
    cache_rewrites: tuple[int, int] = (0, 0)  # the fleet's prompt-cache tokens re-written, current → proposed
    cache_unit: str = ""  # their unit (the Context screen's cache tab computes them the same way)


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
    thread_urls: Callable[[str], Callable[[int], str]],
    rules: RulesProfile | None = None,
    trigger_tokens: int | None = None,
    all_threads: int | None = None,
) -> WhatIf:
    """The chosen thread's what-if (with its chart) and the fleet totals, under current vs proposed.

    Each thread follows its layout's rules unless `rules` overrides them; `trigger_tokens` is a proposed
    Mycel dev trigger (threads under main's rules ignore it, as Mycel main does)."""
    started = time.perf_counter()
    store = reader.store_key
    problems: list[str] = []
    chosen: ChosenThread | None = None
    thread_ms = 0.0
    covered = derived_from(threads, ("fleet",), lambda: fleet_rows(threads))
    by_id = derived_from(threads, ("by_id",), lambda: {t.thread_id: t for t in threads})
    targets = list(covered)
    if chosen_id in by_id and by_id[chosen_id] not in covered:
        targets.append(by_id[chosen_id])
    items: list[FleetThread] = []
    fleet_rewrites = (0, 0)
    for row in targets:
        thread_started = time.perf_counter()
        try:
            head = replay_input(reader, row)
            current, proposed = resolver.pair(row)
            profile = rules or rules_for(row.layout)
            if profile is RulesProfile.DEV and trigger_tokens is not None:
                proposed = replace(proposed, fixed_trigger_tokens=trigger_tokens)
            # "Now" is the record the Thread screen draws (what Mycel really did); only the proposal is
            # replayed.
            record = thread_record(reader, row, rules=rules)
            now = recorded_side(head.messages, record.calls, current, rules=profile)
            then = (
                now
                if proposed == current
                else thread_replay(
                    store,
                    row.thread_id,
                    row.head_checkpoint_id,
                    head.messages,
                    proposed,
                    summary_chars=head.summary_chars,
                    tiktoken=False,
                    rules=profile,
                )
            )
            whatif = compare_sides(head.messages, now, then)
            rewrites = _cache_rewrites(store, row, head.messages, now, then)
        except Exception as exc:  # noqa: BLE001 - one unreadable thread must not take the page down
            problems.append(f"{row.thread_id}: could not compute the what-if ({type(exc).__name__}: {exc})")
            continue
        if row in covered:
            items.append(FleetThread(thread_id=row.thread_id, whatif=whatif))
            fleet_rewrites = (fleet_rewrites[0] + rewrites[0], fleet_rewrites[1] + rewrites[1])
        if row.thread_id == chosen_id:
            chosen = ChosenThread(
                row=row,
                whatif=whatif,
                figure=whatif_figure(
                    whatif, thread_urls(row.thread_id), trigger_of=partial(trigger_under, profile)
                ),
                message_count=len(head.messages),
                rules=profile,
                rules_words=rules_words(profile, record.rules_reason if rules is None else "chosen here"),
                trigger_tokens=proposed.fixed_trigger_tokens,
                cache_rewrites=rewrites,
            )
            thread_ms = (time.perf_counter() - thread_started) * 1000
    fleet = fleet_whatif(items)
    return WhatIf(
        chosen=chosen,
        fleet=fleet,
        fleet_threads=len(items),
        all_threads=len(threads) if all_threads is None else all_threads,
        elapsed_ms=(time.perf_counter() - started) * 1000,
        thread_ms=thread_ms,
        problems=tuple(problems),
        cache_rewrites=fleet_rewrites,
        cache_unit=unit_of(default_counter()),
    )


def _cache_rewrites(
    store: object, row: ThreadRow, messages: Sequence[Message], now: ThreadSide, then: ThreadSide
) -> tuple[int, int]:
    """Prompt-cache tokens re-written over every call, current → proposed (memory_core.economics)."""
    current = side_rewrites(store, row.thread_id, row.head_checkpoint_id, messages, now)
    return current, current if then is now else side_rewrites(
        store, row.thread_id, row.head_checkpoint_id, messages, then
    )

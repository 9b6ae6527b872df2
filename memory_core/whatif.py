"""What a proposed memory config would change: on one thread and across a fleet of threads.

One config applied to one thread is a `ThreadSide`: every model call plus what Mycel would do at the
thread's next call on the full stored list. The current side's calls are the record (memory_core.call_record:
what Mycel really did); a proposal's are a replay under the proposed settings (memory_core.replay), in
the same shape. Sides are pure values, so a caller can cache the current one and recompute only the
proposed one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory_core.call_record.calls import RecordedCall, replayed
from memory_core.call_record.dev_calls import dev_replayed
from memory_core.call_record.summariser import with_summariser_requests
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.pruning import PruneAction, prune_decisions
from memory_core.records import BreakerState
from memory_core.replay import DEFAULT_SUMMARY_CHARS, replay_calls
from memory_core.rules.dev import plan_dev_call
from memory_core.rules.profile import RulesProfile
from memory_core.tokens import TokenCounter, estimate_tokens


@dataclass(frozen=True, slots=True)
class NextCall:
    """Mycel's memory at the thread's next model call, on the whole stored history."""

    stored_tokens: int
    pruned_tokens: int  # what Mycel compares with the trigger
    trigger_tokens: int
    would_compact: bool
    soft_trimmed: int
    hard_cleared: int
    protected: int  # results only protect_recent keeps whole


@dataclass(frozen=True, slots=True)
class ThreadSide:
    """One config applied to one thread."""

    settings: MemorySettings
    calls: tuple[RecordedCall, ...]
    actions: tuple[PruneAction, ...]  # per stored message, at the next call
    next_call: NextCall

    @property
    def compactions(self) -> int:
        return sum(1 for c in self.calls if c.compacted)

    @property
    def tokens_saved(self) -> int:
        """Stored minus sent tokens, summed over every replayed model call (Mycel's estimates)."""
        return sum(c.stored_tokens - c.sent_tokens for c in self.calls)

    @property
    def sent_tokens(self) -> int:
        return sum(c.sent_tokens for c in self.calls)

    @property
    def summariser_chars(self) -> int:
        """Characters sent to the summariser over every compaction, in the branch's request shape."""
        return sum(r.chars for c in self.calls for r in c.summariser)


@dataclass(frozen=True, slots=True)
class BadgeChange:
    """A tool result whose fate at the next model call differs between the two configs."""

    index: int
    tool_name: str | None
    tool_call_id: str | None
    chars: int | None
    before: PruneAction
    after: PruneAction


@dataclass(frozen=True, slots=True)
class ThreadWhatIf:
    current: ThreadSide
    proposed: ThreadSide
    badge_changes: tuple[BadgeChange, ...]

    @property
    def differs(self) -> bool:
        """True when the proposal changes anything Mycel would send or do on this thread."""
        return (
            bool(self.badge_changes)
            or any(
                (a.sent_tokens, a.compacted) != (b.sent_tokens, b.compacted)
                for a, b in zip(self.current.calls, self.proposed.calls, strict=True)
            )
            or self.current.next_call.would_compact != self.proposed.next_call.would_compact
        )


def next_call(
    messages: Sequence[Message],
    settings: MemorySettings,
    *,
    rules: RulesProfile = RulesProfile.MAIN,
    calls: Sequence[RecordedCall] = (),
) -> tuple[NextCall, tuple[PruneAction, ...]]:
    """Mycel's memory at the thread's next call, and each stored message's badge then.

    Under Mycel dev's rules the decision is dev's middleware behind the summary the last call held, with
    the breaker as the last call left it (`calls`: the record, or a replay); the badges are main's pruning,
    which dev did not change (reference mycel-dev §4.6)."""
    pruning = prune_decisions(messages, settings=settings)
    pruned_tokens = estimate_tokens(pruning.messages)
    trigger, would_compact = settings.trigger_tokens, pruned_tokens > settings.trigger_tokens
    if rules is RulesProfile.DEV:
        last = calls[-1] if calls else None
        plan = plan_dev_call(
            messages,
            settings=settings,
            active_summary=last.summary if last is not None else None,
            breaker=BreakerState(last.breaker_failures, last.breaker_open)
            if last is not None
            else BreakerState(),
        )
        trigger, would_compact = plan.threshold_tokens, plan.compact_up_to_index is not None
    upcoming = NextCall(
        stored_tokens=estimate_tokens(messages),
        pruned_tokens=pruned_tokens,
        trigger_tokens=trigger,
        would_compact=would_compact,
        soft_trimmed=pruning.count(PruneAction.SOFT_TRIMMED),
        hard_cleared=pruning.count(PruneAction.HARD_CLEARED),
        protected=pruning.count(PruneAction.PROTECTED),
    )
    return upcoming, tuple(d.action for d in pruning.decisions)


def recorded_side(
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
    settings: MemorySettings,
    *,
    rules: RulesProfile = RulesProfile.MAIN,
) -> ThreadSide:
    """The thread as Mycel ran it (its recorded calls), with its next call under `settings` and `rules`."""
    upcoming, actions = next_call(messages, settings, rules=rules, calls=calls)
    return ThreadSide(settings=settings, calls=tuple(calls), actions=actions, next_call=upcoming)


def thread_side(
    messages: Sequence[Message],
    *,
    settings: MemorySettings,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
    counter: TokenCounter | None = None,
    rules: RulesProfile = RulesProfile.MAIN,
) -> ThreadSide:
    """Replay every model call of a thread under `settings` and `rules`, plus its next call (with a
    `counter`, each call also gets a tiktoken count of what was sent)."""
    if rules is RulesProfile.DEV:
        calls: tuple[RecordedCall, ...] = tuple(
            dev_replayed(messages, settings, summary_chars=summary_chars, counter=counter)
        )
    else:
        calls = replayed(
            replay_calls(messages, settings=settings, summary_chars=summary_chars, counter=counter), settings
        )
    calls = with_summariser_requests(calls, lambda _: settings, lambda _: messages, rules=rules)
    upcoming, actions = next_call(messages, settings, rules=rules, calls=calls)
    return ThreadSide(settings=settings, calls=calls, actions=actions, next_call=upcoming)


def badge_changes(
    messages: Sequence[Message], current: ThreadSide, proposed: ThreadSide
) -> tuple[BadgeChange, ...]:
    """Tool results whose badge (unchanged / protected / soft-trimmed / hard-cleared) the proposal changes."""
    changes = []
    for index, (before, after) in enumerate(zip(current.actions, proposed.actions, strict=True)):
        message = messages[index]
        if before is after or message.type is not MessageType.TOOL:
            continue
        changes.append(
            BadgeChange(
                index=index,
                tool_name=message.name,
                tool_call_id=message.tool_call_id,
                chars=len(message.content) if isinstance(message.content, str) else None,
                before=before,
                after=after,
            )
        )
    return tuple(changes)


def compare_sides(messages: Sequence[Message], current: ThreadSide, proposed: ThreadSide) -> ThreadWhatIf:
    """Two sides of the same messages, with the results whose badge changes."""
    return ThreadWhatIf(
        current=current, proposed=proposed, badge_changes=badge_changes(messages, current, proposed)
    )


def thread_whatif(
    messages: Sequence[Message],
    *,
    current: MemorySettings,
    proposed: MemorySettings,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
) -> ThreadWhatIf:
    """One thread under the current and the proposed settings, side by side."""
    now = thread_side(messages, settings=current, summary_chars=summary_chars)
    then = (
        now if proposed == current else thread_side(messages, settings=proposed, summary_chars=summary_chars)
    )
    return compare_sides(messages, now, then)


@dataclass(frozen=True, slots=True)
class FleetTotals:
    """One config across every thread: next-call facts and replayed-call totals."""

    threads: int = 0
    would_compact: int = 0  # threads whose next model call would compact
    soft_trimmed: int = 0  # tool results at the next call, all threads
    hard_cleared: int = 0
    calls: int = 0  # replayed model calls, all threads
    compactions: int = 0
    tokens_saved: int = 0

    @property
    def saved_per_call(self) -> float:
        """Tokens Mycel's memory kept out of an average model call (stored minus sent)."""
        return self.tokens_saved / self.calls if self.calls else 0.0

    def plus(self, side: ThreadSide) -> FleetTotals:
        return FleetTotals(
            threads=self.threads + 1,
            would_compact=self.would_compact + int(side.next_call.would_compact),
            soft_trimmed=self.soft_trimmed + side.next_call.soft_trimmed,
            hard_cleared=self.hard_cleared + side.next_call.hard_cleared,
            calls=self.calls + len(side.calls),
            compactions=self.compactions + side.compactions,
            tokens_saved=self.tokens_saved + side.tokens_saved,
        )


@dataclass(frozen=True, slots=True)
class FleetThread:
    """One thread's what-if, named (the caller computes it, so it can cache the sides)."""

    thread_id: str
    whatif: ThreadWhatIf


@dataclass(frozen=True, slots=True)
class FleetWhatIf:
    current: FleetTotals
    proposed: FleetTotals
    changed_threads: tuple[str, ...]  # threads on which the proposal changes something

    @property
    def compact_delta(self) -> int:
        return self.proposed.would_compact - self.current.would_compact


def fleet_whatif(threads: Iterable[FleetThread]) -> FleetWhatIf:
    """Totals over every thread under the current and the proposed config."""
    current, proposed = FleetTotals(), FleetTotals()
    changed: list[str] = []
    for item in threads:
        current = current.plus(item.whatif.current)
        proposed = proposed.plus(item.whatif.proposed)
        if item.whatif.differs:
            changed.append(item.thread_id)
    return FleetWhatIf(current=current, proposed=proposed, changed_threads=tuple(changed))

"""Mycel dev's MemoryMiddleware at one model call, as a pure step (reference mycel-dev.md §4).

Pruning, the split and the split-turn rules are main's (memory_core.pruning / compaction); dev differs in
what it measures (the summarized view), its trigger (an absolute `trigger_tokens` or int(0.7 × limit)),
its split (the newest message is always kept), its circuit breaker and in what it then sends.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.compaction import (
    compact_up_to_index,
    human_flags,
    message_token_estimates,
    split_index,
    summary_message,
    summary_text_for,
    turn_prefix_count,
)
from memory_core.memory_settings import MemorySettings, compaction_trigger
from memory_core.messages import Message
from memory_core.model_view import ActiveSummary
from memory_core.pruning import PruningResult, prune_decisions
from memory_core.records import BreakerState
from memory_core.rules.profile import RulesProfile
from memory_core.tokens import estimate_tokens

# dev opens its breaker once this many compactions in a row have failed.
BREAKER_OPENS_AT = 3
CLOSED_BREAKER = BreakerState()
# What dev's summariser stands in for when a plan needs a text (the vectors' stub answers this too).
SUMMARY_PLACEHOLDER = "SUMMARY"


def next_breaker(breaker: BreakerState, *, succeeded: bool) -> BreakerState:
    """The breaker after one summarisation attempt: a success resets the count, the third failure opens it."""
    if succeeded:
        return BreakerState(0, breaker.open)
    failures = breaker.failure_count + 1
    return BreakerState(failures, breaker.open or failures >= BREAKER_OPENS_AT)


def dev_trigger_tokens(settings: MemorySettings) -> int:
    """dev's trigger: the absolute `trigger_tokens` when set, else int(limit × 0.7) (0.7 is hard-wired)."""
    if settings.fixed_trigger_tokens is not None:
        return settings.fixed_trigger_tokens
    return compaction_trigger(settings.context_limit)


def trigger_under(rules: RulesProfile, settings: MemorySettings) -> int:
    """The compaction trigger `settings` give under `rules` (main: int(limit × threshold); dev: above)."""
    return dev_trigger_tokens(settings) if rules is RulesProfile.DEV else settings.trigger_tokens


def summarized_view(pruned: Sequence[Message], summary: ActiveSummary | None) -> tuple[Message, ...] | None:
    """[summary] + pruned[compact_up_to_index:] when the active summary applies, else None."""
    if summary is None or not summary.applies_to(len(pruned)):
        return None
    return (summary_message(summary.summary_text), *pruned[summary.compact_up_to_index :])


@dataclass(frozen=True, slots=True)
class DevCallPlan:
    """dev's memory middleware at one call: what it measured, whether it compacted, what it sent."""

    pruning: PruningResult
    stored_tokens: int
    pruned_tokens: int
    trigger_view_tokens: int  # estimate dev compares: of the summarized view when it applies
    view_applied: bool
    threshold_tokens: int
    should_compact: bool
    keep_recent_tokens: int
    message_tokens: tuple[int, ...]
    summarize_count: int
    keep_count: int
    split_turn: bool
    turn_prefix_count: int
    attempted: bool
    compact_up_to_index: int | None  # only when it compacted
    breaker_before: BreakerState
    breaker_after: BreakerState
    summary_text_after: str | None  # the summary dev holds after the call
    sent: tuple[Message, ...]
    sent_from_index: int  # where the verbatim tail of `sent` starts in the pruned list

    @property
    def compacted(self) -> bool:
        return self.compact_up_to_index is not None

    @property
    def breaker_opened(self) -> bool:
        return self.breaker_after.open and not self.breaker_before.open


def plan_dev_call(
    messages: Sequence[Message],
    *,
    settings: MemorySettings,
    active_summary: ActiveSummary | None = None,
    breaker: BreakerState = CLOSED_BREAKER,
    summarizer_fails: bool = False,
    summary_placeholder: str = SUMMARY_PLACEHOLDER,
) -> DevCallPlan:
    """dev's middleware on the stored input of one call (rules spelled out in the dev vectors' meta)."""
    pruning = prune_decisions(messages, settings=settings)
    pruned = pruning.messages
    pruned_tokens = estimate_tokens(pruned)
    view = summarized_view(pruned, active_summary)
    trigger_view = estimate_tokens(view) if view is not None else pruned_tokens
    threshold = dev_trigger_tokens(settings)
    should = trigger_view > threshold
    keep_recent = settings.effective_keep_recent_tokens
    tokens = message_token_estimates(pruned)
    humans = human_flags(pruned)
    cut = split_index(tokens, humans, keep_recent_tokens=keep_recent, keep_newest=True)
    prefix = turn_prefix_count(tokens[cut:], humans[cut:], context_limit=settings.context_limit)
    attempted = should and not breaker.open
    would_cut = compact_up_to_index(len(pruned), cut, len(pruned) - cut, prefix)
    # Nothing to summarise is a success without a model call; a failing summariser compacts nothing.
    compacted = attempted and would_cut is not None and not summarizer_fails
    succeeded = compacted or (attempted and would_cut is None)
    breaker_after = next_breaker(breaker, succeeded=succeeded) if attempted else breaker
    held = (
        active_summary.summary_text
        if active_summary and active_summary.summary_text and active_summary.compact_up_to_index >= 0
        else None
    )
    if compacted and would_cut is not None:
        new_text = summary_text_for(summary_placeholder, summary_placeholder if prefix else None)
        held = new_text
        sent: tuple[Message, ...] = (summary_message(new_text), *pruned[would_cut:])
        sent_from = would_cut
    elif should or view is None:
        # Over the trigger but nothing compacted: dev sends the pruned full list, without the summary.
        sent, sent_from = pruned, 0
    else:
        sent = view
        sent_from = active_summary.compact_up_to_index if active_summary else 0
    return DevCallPlan(
        pruning=pruning,
        stored_tokens=estimate_tokens(messages),
        pruned_tokens=pruned_tokens,
        trigger_view_tokens=trigger_view,
        view_applied=view is not None,
        threshold_tokens=threshold,
        should_compact=should,
        keep_recent_tokens=keep_recent,
        message_tokens=tokens,
        summarize_count=cut,
        keep_count=len(pruned) - cut,
        split_turn=prefix > 0,
        turn_prefix_count=prefix,
        attempted=attempted,
        compact_up_to_index=would_cut if compacted else None,
        breaker_before=breaker,
        breaker_after=breaker_after,
        summary_text_after=held,
        sent=sent,
        sent_from_index=sent_from,
    )

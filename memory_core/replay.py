"""Replay a stored thread as Mycel's memory middleware saw it: one model call per AI message.

The input of the call that produced AI message i is messages[:i]. Under any settings, each call gets the
stored, pruned and sent token estimates, whether compaction triggered, and the summary in force. Mycel's
repeated compaction is simulated (reference §3.4): once the pruned history is over the trigger, every
call compacts again; below it, the summary from the last compaction is reused. The summary's real text is
unknown here, so a placeholder of a chosen size stands in for it.

Each call's input is measured by memory_core.call_inputs (per-message numbers computed once, prefix
sums per call), the same numbers the record-first reconstruction (memory_core.call_record) stands on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.call_inputs import call_inputs
from memory_core.compaction import (
    SUMMARY_HEADER,
    compact_up_to_index,
    split_index,
    summary_text_for,
    turn_prefix_count,
)
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.model_view import ActiveSummary
from memory_core.tokens import TokenCounter

DEFAULT_SUMMARY_CHARS = 4000


def simulated_summary_chars(stored_summary_text: str | None) -> int:
    """The length the replay gives the summaries it simulates: Mycel's own active summary's, when it
    stored one (the best guess for the size of the others), else DEFAULT_SUMMARY_CHARS."""
    return len(stored_summary_text) if stored_summary_text else DEFAULT_SUMMARY_CHARS


def placeholder_summary(chars: int) -> str:
    """Stand-in summary text of exactly `chars` characters."""
    unit = "summary placeholder "
    return (unit * (chars // len(unit) + 1))[:chars]


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call: the AI message at `index` was produced from messages[:index]."""

    index: int
    stored_tokens: int  # Mycel's estimate of the stored input
    pruned_tokens: int  # ... after pruning (what Mycel compares with the trigger)
    sent_tokens: int  # ... of what was sent (summary view; placeholder summary text)
    sent_messages: int
    should_compact: bool
    compacted: bool  # Mycel summarised at this call (over the trigger and at least 2 to summarise)
    summarize_count: int | None  # the split, when the trigger fired
    keep_count: int | None
    split_turn: bool
    summary: ActiveSummary | None  # the summary in front of what was sent (None: none applied)
    soft_trimmed: int
    hard_cleared: int
    provider_input_tokens: int | None  # usage_metadata.input_tokens of the AI message, when recorded
    tiktoken_sent: int | None = None  # real-tokenizer count of what was sent, when a counter was given


def replay_calls(
    messages: Sequence[Message],
    *,
    settings: MemorySettings,
    counter: TokenCounter | None = None,
    summary_chars: int = DEFAULT_SUMMARY_CHARS,
) -> tuple[ModelCall, ...]:
    """Every model call of a stored thread under `settings`, with Mycel's repeated compaction simulated.

    `summary_chars` is the assumed length of each generated summary (a split turn has two, joined the way
    Mycel joins them). With a `counter`, each call also gets a tiktoken count of what was sent.
    """
    keep_recent = settings.effective_keep_recent_tokens
    trigger = settings.trigger_tokens
    history_text = placeholder_summary(summary_chars)
    split_text = summary_text_for(history_text, history_text)

    head_counts: dict[str, int] = {}

    def head_tt(head: str) -> int:
        # Only two summary texts exist in a replay; count each once instead of hashing it per call.
        if head not in head_counts and counter is not None:
            head_counts[head] = counter.count(head)
        return head_counts.get(head, 0)

    cached: ActiveSummary | None = None
    calls: list[ModelCall] = []
    for call in call_inputs(messages, settings, counter):
        i = call.index
        pruned_tokens = call.pruned_tokens
        should = pruned_tokens > trigger
        compacted = False
        split_turn = False
        summarize_count: int | None = None
        keep_count: int | None = None
        if should:
            tokens, humans = call.split_tokens(), call.humans()
            cut = split_index(tokens, humans, keep_recent_tokens=keep_recent)
            prefix = turn_prefix_count(tokens[cut:], humans[cut:], context_limit=settings.context_limit)
            summarize_count, keep_count, split_turn = cut, i - cut, prefix > 0
            up_to = compact_up_to_index(i, cut, i - cut, prefix)
            if up_to is not None:
                compacted = True
                cached = ActiveSummary(split_text if split_turn else history_text, up_to)
        # Mycel applies the cached summary only when it did not try to compact at this call.
        applied: ActiveSummary | None = None
        if compacted or (
            not should and cached is not None and cached.summary_text and 0 < cached.compact_up_to_index <= i
        ):
            applied = cached
        if applied is None:
            sent_chars, sent_count, tt_sent = call.chars_between(0, i), i, call.tiktoken_between(0, i)
        else:
            head = SUMMARY_HEADER + applied.summary_text
            start = applied.compact_up_to_index
            sent_chars = len(head) + call.chars_between(start, i)
            sent_count = 1 + i - start
            kept_tt = call.tiktoken_between(start, i)
            tt_sent = None if kept_tt is None or counter is None else head_tt(head) + kept_tt
        calls.append(
            ModelCall(
                index=i,
                stored_tokens=call.stored_tokens,
                pruned_tokens=pruned_tokens,
                sent_tokens=sent_chars // 2,
                sent_messages=sent_count,
                should_compact=should,
                compacted=compacted,
                summarize_count=summarize_count,
                keep_count=keep_count,
                split_turn=split_turn,
                summary=applied,
                soft_trimmed=call.soft_trimmed,
                hard_cleared=call.hard_cleared,
                provider_input_tokens=call.message.input_tokens,
                tiktoken_sent=tt_sent,
            )
        )
    return tuple(calls)

"""Replay a stored thread as Mycel's memory middleware saw it: one model call per AI message.

The input of the call that produced AI message i is messages[:i]. Under any settings, each call gets the
stored, pruned and sent token estimates, whether compaction triggered, and the summary in force. Mycel's
repeated compaction is simulated (reference §3.4): once the pruned history is over the trigger, every
call compacts again; below it, the summary from the last compaction is reused. The summary's real text is
unknown here, so a placeholder of a chosen size stands in for it.

Everything per message is computed once; each call then costs prefix-sum arithmetic plus Mycel's split
walk, instead of re-pruning the whole prefix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from memory_core.compaction import (
    SUMMARY_HEADER,
    compact_up_to_index,
    split_index,
    summary_text_for,
    turn_prefix_count,
)
from memory_core.messages import Message, MessageType
from memory_core.model_view import ActiveSummary
from memory_core.pruning import PruneAction, trimmed_content
from memory_core.settings import MemorySettings
from memory_core.tokens import TokenCounter, content_chars, estimate_message_tokens

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


@dataclass(slots=True)
class _Thread:
    """Per-message numbers, computed once."""

    raw_chars: list[int]
    pruned_chars: list[int]  # as if unprotected
    raw_tokens: list[int]
    pruned_tokens: list[int]
    humans: list[bool]
    changed_by_call_id: dict[str, list[int]]  # tool results pruning would change, by tool_call_id
    ai_steps: list[tuple[int, tuple[str, ...]]]  # tool-calling AI messages: index, truthy call ids
    soft: list[int]
    hard: list[int]
    raw_tt: list[int] | None
    pruned_tt: list[int] | None


def _thread_numbers(
    messages: Sequence[Message], settings: MemorySettings, counter: TokenCounter | None
) -> _Thread:
    t = _Thread([], [], [], [], [], {}, [], [], [], [] if counter else None, [] if counter else None)
    for i, message in enumerate(messages):
        raw_chars = content_chars(message.content)
        raw_tokens = estimate_message_tokens(message)
        raw_tt = counter.count(message.text) if counter else 0
        action = PruneAction.UNCHANGED
        pruned_chars, pruned_tokens, pruned_tt = raw_chars, raw_tokens, raw_tt
        if message.type is MessageType.TOOL and isinstance(message.content, str):
            action, content = trimmed_content(
                message.content,
                soft_trim_chars=settings.soft_trim_chars,
                hard_clear_threshold=settings.hard_clear_threshold,
            )
            if action is not PruneAction.UNCHANGED:
                pruned_chars, pruned_tokens = len(content), len(content) // 2
                pruned_tt = counter.count(content) if counter else 0
                if message.tool_call_id:
                    t.changed_by_call_id.setdefault(message.tool_call_id, []).append(i)
        if message.type is MessageType.AI and message.tool_calls:
            t.ai_steps.append((i, tuple(c.id for c in message.tool_calls if c.id)))
        t.raw_chars.append(raw_chars)
        t.pruned_chars.append(pruned_chars)
        t.raw_tokens.append(raw_tokens)
        t.pruned_tokens.append(pruned_tokens)
        t.humans.append(message.type is MessageType.HUMAN)
        t.soft.append(int(action is PruneAction.SOFT_TRIMMED))
        t.hard.append(int(action is PruneAction.HARD_CLEARED))
        if t.raw_tt is not None and t.pruned_tt is not None:
            t.raw_tt.append(raw_tt)
            t.pruned_tt.append(pruned_tt)
    return t


def _prefix(values: Sequence[int]) -> list[int]:
    return list(accumulate(values, initial=0))


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
    t = _thread_numbers(messages, settings, counter)
    pruned_chars_sum = _prefix(t.pruned_chars)
    raw_chars_sum = _prefix(t.raw_chars)
    soft_sum, hard_sum = _prefix(t.soft), _prefix(t.hard)
    pruned_tt_sum = _prefix(t.pruned_tt) if t.pruned_tt is not None else None
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
    step_count = 0
    calls: list[ModelCall] = []
    for i, message in enumerate(messages):
        while step_count < len(t.ai_steps) and t.ai_steps[step_count][0] < i:
            step_count += 1
        if message.type is not MessageType.AI:
            continue
        # Results Mycel protects at this call whose content pruning would otherwise change.
        protected: set[int] = set()
        if settings.protect_recent > 0:
            for _, ids in t.ai_steps[max(0, step_count - settings.protect_recent) : step_count]:
                for call_id in ids:
                    protected.update(j for j in t.changed_by_call_id.get(call_id, ()) if j < i)

        def chars_between(start: int, end: int, protected: set[int] = protected) -> int:
            extra = sum(t.raw_chars[j] - t.pruned_chars[j] for j in protected if start <= j < end)
            return pruned_chars_sum[end] - pruned_chars_sum[start] + extra

        def tt_between(start: int, end: int, protected: set[int] = protected) -> int | None:
            if pruned_tt_sum is None or t.raw_tt is None or t.pruned_tt is None:
                return None
            extra = sum(t.raw_tt[j] - t.pruned_tt[j] for j in protected if start <= j < end)
            return pruned_tt_sum[end] - pruned_tt_sum[start] + extra

        pruned_tokens = chars_between(0, i) // 2
        should = pruned_tokens > trigger
        compacted = False
        split_turn = False
        summarize_count: int | None = None
        keep_count: int | None = None
        if should:
            tokens = t.pruned_tokens[:i]
            for j in protected:
                tokens[j] = t.raw_tokens[j]
            humans = t.humans[:i]
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
            sent_chars, sent_count, tt_sent = chars_between(0, i), i, tt_between(0, i)
        else:
            head = SUMMARY_HEADER + applied.summary_text
            start = applied.compact_up_to_index
            sent_chars = len(head) + chars_between(start, i)
            sent_count = 1 + i - start
            kept_tt = tt_between(start, i)
            tt_sent = None if kept_tt is None or counter is None else head_tt(head) + kept_tt
        calls.append(
            ModelCall(
                index=i,
                stored_tokens=raw_chars_sum[i] // 2,
                pruned_tokens=pruned_tokens,
                sent_tokens=sent_chars // 2,
                sent_messages=sent_count,
                should_compact=should,
                compacted=compacted,
                summarize_count=summarize_count,
                keep_count=keep_count,
                split_turn=split_turn,
                summary=applied,
                soft_trimmed=soft_sum[i] - sum(1 for j in protected if t.soft[j]),
                hard_cleared=hard_sum[i] - sum(1 for j in protected if t.hard[j]),
                provider_input_tokens=message.input_tokens,
                tiktoken_sent=tt_sent,
            )
        )
    return tuple(calls)

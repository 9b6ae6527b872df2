"""The input of every model call of a stored thread, as Mycel's memory middleware measures it.

The call that produced AI message i got messages[:i]. Its pruning depends only on the pruning settings
and on which results protect_recent shields at that call, so everything per message is computed once and
each call is prefix-sum arithmetic. The replay (memory_core.replay) and the record-first reconstruction
(memory_core.call_record) both stand on these numbers, so they can never measure a call differently.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from memory_core.compaction import ENTRY_SEPARATOR, max_history_tokens, summary_entry_chars
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.pruning import PruneAction, trimmed_content
from memory_core.tokens import TokenCounter, content_chars, estimate_message_tokens


def _prefix(values: Sequence[int]) -> list[int]:
    return list(accumulate(values, initial=0))


@dataclass(slots=True)
class ThreadNumbers:
    """Per-message numbers of one thread under one set of pruning settings, computed once."""

    raw_chars: list[int] = field(default_factory=list)
    pruned_chars: list[int] = field(default_factory=list)  # as if unprotected
    raw_tokens: list[int] = field(default_factory=list)  # compactor estimate per message
    pruned_tokens: list[int] = field(default_factory=list)
    humans: list[bool] = field(default_factory=list)
    changed_by_call_id: dict[str, list[int]] = field(default_factory=dict)  # results pruning changes
    ai_steps: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)  # tool-calling AI messages
    soft: list[int] = field(default_factory=list)
    hard: list[int] = field(default_factory=list)
    raw_tt: list[int] | None = None
    pruned_tt: list[int] | None = None
    pruned_chars_sum: list[int] = field(default_factory=list)
    raw_chars_sum: list[int] = field(default_factory=list)
    soft_sum: list[int] = field(default_factory=list)
    hard_sum: list[int] = field(default_factory=list)
    pruned_tt_sum: list[int] | None = None
    previous_human: list[int] = field(default_factory=list)  # newest human index <= i, else -1
    raw_entry: list[int] = field(default_factory=list)  # its entry's length in the summariser's text
    pruned_entry: list[int] = field(default_factory=list)
    pruned_entry_sum: list[int] = field(default_factory=list)


def thread_numbers(
    messages: Sequence[Message], settings: MemorySettings, counter: TokenCounter | None = None
) -> ThreadNumbers:
    t = ThreadNumbers(raw_tt=[] if counter else None, pruned_tt=[] if counter else None)
    last_human = -1
    for i, message in enumerate(messages):
        raw_chars = content_chars(message.content)
        raw_tokens = estimate_message_tokens(message)
        raw_tt = counter.count(message.text) if counter else 0
        action = PruneAction.UNCHANGED
        pruned_chars, pruned_tokens, pruned_tt = raw_chars, raw_tokens, raw_tt
        raw_entry = pruned_entry = summary_entry_chars(message, len(message.text))
        if message.type is MessageType.TOOL and isinstance(message.content, str):
            action, content = trimmed_content(
                message.content,
                soft_trim_chars=settings.soft_trim_chars,
                hard_clear_threshold=settings.hard_clear_threshold,
            )
            if action is not PruneAction.UNCHANGED:
                pruned_chars, pruned_tokens = len(content), len(content) // 2
                pruned_entry = summary_entry_chars(message, len(content))
                pruned_tt = counter.count(content) if counter else 0
                if message.tool_call_id:
                    t.changed_by_call_id.setdefault(message.tool_call_id, []).append(i)
        if message.type is MessageType.AI and message.tool_calls:
            t.ai_steps.append((i, tuple(c.id for c in message.tool_calls if c.id)))
        if message.type is MessageType.HUMAN:
            last_human = i
        t.previous_human.append(last_human)
        t.raw_chars.append(raw_chars)
        t.pruned_chars.append(pruned_chars)
        t.raw_tokens.append(raw_tokens)
        t.pruned_tokens.append(pruned_tokens)
        t.humans.append(message.type is MessageType.HUMAN)
        t.raw_entry.append(raw_entry)
        t.pruned_entry.append(pruned_entry)
        t.soft.append(int(action is PruneAction.SOFT_TRIMMED))
        t.hard.append(int(action is PruneAction.HARD_CLEARED))
        if t.raw_tt is not None and t.pruned_tt is not None:
            t.raw_tt.append(raw_tt)
            t.pruned_tt.append(pruned_tt)
    t.pruned_chars_sum = _prefix(t.pruned_chars)
    t.raw_chars_sum = _prefix(t.raw_chars)
    t.pruned_entry_sum = _prefix(t.pruned_entry)
    t.soft_sum, t.hard_sum = _prefix(t.soft), _prefix(t.hard)
    t.pruned_tt_sum = _prefix(t.pruned_tt) if t.pruned_tt is not None else None
    return t


@dataclass(frozen=True, slots=True)
class CallInput:
    """The stored input of one model call (messages[:index]) as Mycel's memory measured it."""

    index: int  # the AI message this call produced
    message: Message
    protected: frozenset[int]  # results protect_recent keeps whole at this call that pruning would change
    numbers: ThreadNumbers

    @property
    def stored_tokens(self) -> int:
        return self.numbers.raw_chars_sum[self.index] // 2

    @property
    def pruned_tokens(self) -> int:
        """Mycel's trigger estimate of the pruned input (what it compares with the trigger)."""
        return self.chars_between(0, self.index) // 2

    @property
    def soft_trimmed(self) -> int:
        t = self.numbers
        return t.soft_sum[self.index] - sum(1 for j in self.protected if t.soft[j])

    @property
    def hard_cleared(self) -> int:
        t = self.numbers
        return t.hard_sum[self.index] - sum(1 for j in self.protected if t.hard[j])

    def chars_between(self, start: int, end: int) -> int:
        """Characters of the pruned messages[start:end] at this call (the trigger estimate's unit)."""
        t = self.numbers
        extra = sum(t.raw_chars[j] - t.pruned_chars[j] for j in self.protected if start <= j < end)
        return t.pruned_chars_sum[end] - t.pruned_chars_sum[start] + extra

    def summary_text_chars(self, start: int, end: int) -> int:
        """Length of format_for_summary's text of the pruned messages[start:end] at this call."""
        if end <= start:
            return 0
        t = self.numbers
        extra = sum(t.raw_entry[j] - t.pruned_entry[j] for j in self.protected if start <= j < end)
        entries = t.pruned_entry_sum[end] - t.pruned_entry_sum[start] + extra
        return entries + len(ENTRY_SEPARATOR) * (end - start - 1)

    def tiktoken_between(self, start: int, end: int) -> int | None:
        t = self.numbers
        if t.pruned_tt_sum is None or t.raw_tt is None or t.pruned_tt is None:
            return None
        extra = sum(t.raw_tt[j] - t.pruned_tt[j] for j in self.protected if start <= j < end)
        return t.pruned_tt_sum[end] - t.pruned_tt_sum[start] + extra

    def split_tokens(self) -> list[int]:
        """The compactor's estimate of every pruned message of the input (drives Mycel's splits)."""
        tokens = self.numbers.pruned_tokens[: self.index]
        for j in self.protected:
            tokens[j] = self.numbers.raw_tokens[j]
        return tokens

    def humans(self) -> list[bool]:
        return self.numbers.humans[: self.index]

    def splitter(self) -> CallSplitter:
        return CallSplitter.of(self)


def call_inputs(
    messages: Sequence[Message],
    settings: MemorySettings,
    counter: TokenCounter | None = None,
    *,
    at_end: Message | None = None,
) -> Iterator[CallInput]:
    """Every model call of the thread, oldest first: one per AI message, and with `at_end` one more
    on the whole list (a request with no answer stored: `at_end` stands in for it)."""
    numbers = thread_numbers(messages, settings, counter)
    step_count = 0
    ends = [*messages, at_end] if at_end is not None else messages
    for i, message in enumerate(ends):
        while step_count < len(numbers.ai_steps) and numbers.ai_steps[step_count][0] < i:
            step_count += 1
        if message.type is not MessageType.AI:
            continue
        protected: set[int] = set()
        if settings.protect_recent > 0:
            for _, ids in numbers.ai_steps[max(0, step_count - settings.protect_recent) : step_count]:
                for call_id in ids:
                    protected.update(j for j in numbers.changed_by_call_id.get(call_id, ()) if j < i)
        yield CallInput(i, message, frozenset(protected), numbers)


@dataclass(frozen=True, slots=True)
class CallSplitter:
    """Mycel's split rules on one call's input, answered in O(log n) for any keep_recent or limit.

    Equal to compaction.split_index / turn_prefix_count on the same tokens (tests check it); the
    inference of the settings in force asks these many times per call.
    """

    tokens: tuple[int, ...]
    suffix: tuple[int, ...]  # suffix[j] = sum(tokens[j:]); non-increasing
    prefix: tuple[int, ...]  # prefix[j] = sum(tokens[:j])
    previous_human: tuple[int, ...]

    @classmethod
    def of(cls, call: CallInput) -> CallSplitter:
        tokens = call.split_tokens()
        prefix = _prefix(tokens)
        total = prefix[-1]
        return cls(
            tokens=tuple(tokens),
            suffix=tuple(total - p for p in prefix),
            prefix=tuple(prefix),
            previous_human=tuple(call.numbers.previous_human[: call.index]),
        )

    def _adjust(self, split_idx: int, start: int = 0) -> int:
        """_adjust_boundary on messages[start:], for a cut at start + split_idx (relative result)."""
        n = len(self.tokens) - start
        if split_idx >= n:
            return split_idx
        human = self.previous_human[start + split_idx]
        return max(human - start, 1) if human >= start else 1

    def cut(self, keep_recent_tokens: int, *, keep_newest: bool = False) -> int:
        """How many leading messages split_messages would summarise (0 = nothing); `keep_newest` is
        dev's keep-last rule (compaction.split_index)."""
        n = len(self.tokens)
        if n <= 2 or self.suffix[0] <= keep_recent_tokens:
            return 0
        # The walk stops at the newest j with suffix[j] > keep_recent_tokens.
        j = _last_above(self.suffix, keep_recent_tokens)
        split_idx = n - 1 if keep_newest and j + 1 == n else j + 1
        split_idx = self._adjust(split_idx)
        return 0 if split_idx <= 1 else split_idx

    def keep_tokens(self, cut: int) -> int:
        return self.suffix[cut]

    def turn_prefix(self, cut: int, context_limit: int) -> int:
        """detect_split_turn's prefix length for the kept part messages[cut:] (0: not split)."""
        n = len(self.tokens) - cut
        if n <= 1:
            return 0
        bound = max_history_tokens(context_limit)
        if self.suffix[cut] <= bound:
            return 0
        # The first kept message whose running total would exceed the bound.
        end = bisect_right(self.prefix, self.prefix[cut] + bound, lo=cut + 1) - 1 - cut
        return self._adjust(min(end, n - 1), cut)


def _last_above(values: Sequence[int], limit: int) -> int:
    """The largest j with values[j] > limit, for a non-increasing sequence whose values[0] > limit."""
    lo, hi = 0, len(values) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if values[mid] > limit:
            lo = mid
        else:
            hi = mid - 1
    return lo

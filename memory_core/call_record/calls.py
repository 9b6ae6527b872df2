"""Every model call of a thread as Mycel made it: record first, arithmetic only for what is not stored.

For the call that produced AI message i, Mycel handed the model its system prompt (not stored), then the
summary in its cache (when one applied), then messages[:i] pruned from where that summary ends. The
summary rows say where Mycel compacted and what it wrote; memory_core.call_record.evidence says which settings
were in force, so pruning and the calls without a row are Mycel's own arithmetic under those settings.
A compaction with no row keeps a summary whose text is unknown: it is measured at the size Mycel's
stored summaries have, and marked as not stored.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory_core.call_inputs import CallInput
from memory_core.call_record.evidence import SettingsInForce
from memory_core.compaction import SUMMARY_HEADER, compact_up_to_index, summary_text_for
from memory_core.memory_settings import MemorySettings
from memory_core.model_view import ActiveSummary
from memory_core.records import CheckpointRow, SummaryRow
from memory_core.replay import ModelCall, placeholder_summary
from memory_core.rules.request_time import NOTHING_ADDED, RequestTime
from memory_core.rules.summariser import SummariserRequest
from memory_core.tokens import TokenCounter

# Mycel's system prompt goes with every request but is never stored: counted, not shown.
SYSTEM_PROMPT_MESSAGES = 1


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One model call as Mycel made it."""

    call: int  # 1-based
    index: int  # the AI message it produced; its input was messages[:index]
    checkpoint_id: str | None  # the oldest checkpoint holding that AI message
    compacted: bool  # Mycel compacted right before this call
    compaction_stored: bool  # False: compacted, summary not stored (the arithmetic says so, no row)
    split_turn: bool  # the compaction summarised a turn prefix too
    summary: ActiveSummary | None  # the summary in front of what was sent (None: none applied)
    summary_id: str | None  # its row (None when none applied, or it was never stored)
    summary_stored: bool  # False when the summary in front is one Mycel did not store
    sent_messages: int  # messages handed the model, without the system prompt
    stored_tokens: int  # Mycel's estimate of the stored input
    pruned_tokens: int  # ... after pruning: what Mycel compared with the trigger
    sent_tokens: int  # ... of what was sent (the real summary text where stored)
    tiktoken_tokens: int | None  # real-tokenizer count of what was sent (system prompt not included)
    provider_input_tokens: int | None  # usage_metadata.input_tokens (system prompt and tools included)
    soft_trimmed: int
    hard_cleared: int
    over_trigger: bool  # the pruned estimate was over the trigger of the settings in force
    context_limit: int
    trigger_tokens: int
    context_limit_source: str
    segment: int  # which settings segment (0-based) the call ran under
    # Mycel dev's rules only (memory_core.call_record.dev_calls); main's calls keep these defaults.
    attempted: bool = False  # dev tried to compact (over its trigger, breaker closed)
    trigger_view_tokens: int | None = None  # the estimate dev compared: of the summarized view
    breaker_failures: int = 0  # failed compactions in a row after the call
    breaker_open: bool = False  # after the call
    # What Mycel added at call time and never stored (memory_core.rules.request_time); counted in sent_*.
    request_time: RequestTime = NOTHING_ADDED
    # Mycel dev's prompt-too-long (memory_core.rules.dev_recovery): the provider refused this request, so
    # no answer is stored; and the history its input is in when a recovery has rewritten the head since
    # (an index into ThreadCalls.earlier; None: the head's messages).
    refused: bool = False
    earlier_history: int | None = None
    # The requests Mycel's summariser got before this call (memory_core.rules.summariser): a compaction's,
    # or a failed attempt's first; call_record.summariser fills them in.
    summariser: tuple[SummariserRequest, ...] = ()
    # The size in tokens of an unstored summary in front, by the provider's counts
    # (memory_core.call_record.provider_counts); counted in tiktoken_tokens. None: stored, or no counts.
    summary_tokens: int | None = None

    @property
    def request_messages(self) -> int:
        """Messages Mycel handed the model, its system prompt included."""
        return self.sent_messages + SYSTEM_PROMPT_MESSAGES

    @property
    def fill(self) -> float:
        """What was sent as a share of the context limit (Mycel's estimate)."""
        return self.sent_tokens / self.context_limit if self.context_limit else 0.0


def checkpoints_holding(
    checkpoints: Sequence[CheckpointRow], head_id: str | None
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """For the head's lineage, newest first: the running minimum message count and the checkpoint.

    Message i was written by the oldest checkpoint from which every checkpoint up to the head holds more
    than i messages (a rollback in between starts the count again). Dev's layout stores no parent ids:
    then every checkpoint, newest first, is the lineage.
    """
    by_id = {c.checkpoint_id: c for c in checkpoints}
    lineage: list[CheckpointRow] = []
    if head_id in by_id and any(c.parent_checkpoint_id for c in checkpoints):
        node: CheckpointRow | None = by_id[head_id]
        seen: set[str] = set()
        while node is not None and node.checkpoint_id not in seen:
            seen.add(node.checkpoint_id)
            lineage.append(node)
            node = by_id.get(node.parent_checkpoint_id) if node.parent_checkpoint_id else None
    else:
        lineage = list(checkpoints)
    minima: list[int] = []
    ids: list[str] = []
    low = None
    for row in lineage:
        if row.messages is None:
            continue
        low = row.messages if low is None else min(low, row.messages)
        minima.append(low)
        ids.append(row.checkpoint_id)
    return tuple(minima), tuple(ids)


def holder_of(index: int, holding: tuple[tuple[int, ...], tuple[str, ...]]) -> str | None:
    minima, ids = holding
    # minima is non-increasing; the holders are the leading run with minimum > index, the oldest last.
    negated = [-m for m in minima]
    count = bisect_left(negated, -index)
    return ids[count - 1] if count else None


def sent_size(
    call: CallInput, summary: ActiveSummary | None, head_tiktoken: Callable[[str], int]
) -> tuple[int, int, int | None]:
    """Characters, messages and tiktoken count of what was sent: the summary in front, when one
    applied, then the pruned messages from where it ends."""
    i = call.index
    if summary is None:
        return call.chars_between(0, i), i, call.tiktoken_between(0, i)
    start = summary.compact_up_to_index
    chars = len(SUMMARY_HEADER) + len(summary.summary_text) + call.chars_between(start, i)
    kept = call.tiktoken_between(start, i)
    return chars, 1 + i - start, None if kept is None else head_tiktoken(summary.summary_text) + kept


def summary_head_tiktoken(counter: TokenCounter | None) -> Callable[[str], int]:
    """tiktoken of the summary message for a text, each text counted once."""
    head_tokens: dict[str, int] = {}

    def head_tiktoken(text: str) -> int:
        if text not in head_tokens and counter is not None:
            head_tokens[text] = counter.count(SUMMARY_HEADER + text)
        return head_tokens.get(text, 0)

    return head_tiktoken


def recorded_calls(
    calls: Sequence[CallInput],
    inference: SettingsInForce,
    off_history: Sequence[SummaryRow] = (),
    *,
    holding: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
    summary_chars: int,
    counter: TokenCounter | None = None,
) -> tuple[RecordedCall, ...]:
    """Every call of the thread: the stored rows where Mycel compacted, its arithmetic elsewhere."""
    ai_indices = {c.index for c in calls}
    # A row written at a count that is no call here: the call failed after compacting, yet Mycel's cache
    # kept the summary for the next call. Rows at a call's count that a newer row replaced do not count.
    late_rows = sorted(
        (r for r in off_history if r.compacted_at not in ai_indices), key=lambda r: r.compacted_at
    )
    unknown = placeholder_summary(summary_chars)
    head_tiktoken = summary_head_tiktoken(counter)

    cache: tuple[ActiveSummary, str | None] | None = None
    late = 0
    out: list[RecordedCall] = []
    for position, call in enumerate(calls):
        i = call.index
        while late < len(late_rows) and late_rows[late].compacted_at < i:
            late_row = late_rows[late]
            cache = (ActiveSummary.from_row(late_row), late_row.summary_id)
            late += 1
        segment = inference.segment_at(position)
        settings = segment.settings
        over = call.pruned_tokens > settings.trigger_tokens
        row = inference.rows_by_index.get(i)
        compacted, stored, split = False, True, False
        if row is not None:
            compacted, split = True, row.is_split_turn
            cache = (ActiveSummary.from_row(row), row.summary_id)
        elif i in inference.not_stored:
            splitter = call.splitter()
            cut = splitter.cut(settings.effective_keep_recent_tokens)
            prefix = splitter.turn_prefix(cut, settings.context_limit)
            up_to = compact_up_to_index(i, cut, i - cut, prefix)
            if up_to is not None:
                compacted, stored, split = True, False, prefix > 0
                text = summary_text_for(unknown, unknown) if split else unknown
                cache = (ActiveSummary(text, up_to), None)
        applied = None
        if cache is not None and (compacted or not over):
            summary = cache[0]
            if summary.summary_text and 0 < summary.compact_up_to_index <= i:
                applied = cache
        sent_chars, sent, tiktoken = sent_size(call, applied[0] if applied else None, head_tiktoken)
        out.append(
            RecordedCall(
                call=position + 1,
                index=i,
                checkpoint_id=holder_of(i, holding),
                compacted=compacted,
                compaction_stored=stored,
                split_turn=split,
                summary=applied[0] if applied else None,
                summary_id=applied[1] if applied else None,
                summary_stored=applied is None or applied[1] is not None,
                sent_messages=sent,
                stored_tokens=call.stored_tokens,
                pruned_tokens=call.pruned_tokens,
                sent_tokens=sent_chars // 2,
                tiktoken_tokens=tiktoken,
                provider_input_tokens=call.message.input_tokens,
                soft_trimmed=call.soft_trimmed,
                hard_cleared=call.hard_cleared,
                over_trigger=over,
                context_limit=settings.context_limit,
                trigger_tokens=settings.trigger_tokens,
                context_limit_source=segment.source,
                segment=inference.segments.index(segment),
            )
        )
    return tuple(out)


class NumberedCall(Protocol):
    @property
    def call(self) -> int: ...

    @property
    def compacted(self) -> bool: ...


def recompaction_runs(calls: Sequence[NumberedCall], *, at_least: int = 3) -> list[tuple[int, int]]:
    """Mycel main's trap (reference §3.4): past the trigger, it summarises again at every call. The runs of
    `at_least` or more consecutive calls that each compacted, as (first, last) call numbers."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for n, call in enumerate(calls):
        if call.compacted and start is None:
            start = n
        if start is not None and (not call.compacted or n == len(calls) - 1):
            end = n if call.compacted else n - 1
            if end - start + 1 >= at_least:
                runs.append((calls[start].call, calls[end].call))
            start = None
    return runs


def recompacts_every_call(calls: Sequence[RecordedCall]) -> bool:
    """True when the thread's last calls are such a run: its next call will compact again too."""
    runs = recompaction_runs(calls)
    return bool(runs) and runs[-1][1] == calls[-1].call


def replayed(
    calls: Sequence[ModelCall],
    settings: MemorySettings,
    *,
    holding: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
    source: str = "proposed",
) -> tuple[RecordedCall, ...]:
    """A replay under chosen settings (memory_core.replay) in the shape of the record, for a what-if: its
    summaries are simulated, so none is stored."""
    return tuple(
        RecordedCall(
            call=number,
            index=c.index,
            checkpoint_id=holder_of(c.index, holding),
            compacted=c.compacted,
            compaction_stored=not c.compacted,
            split_turn=c.split_turn,
            summary=c.summary,
            summary_id=None,
            summary_stored=c.summary is None,
            sent_messages=c.sent_messages,
            stored_tokens=c.stored_tokens,
            pruned_tokens=c.pruned_tokens,
            sent_tokens=c.sent_tokens,
            tiktoken_tokens=c.tiktoken_sent,
            provider_input_tokens=c.provider_input_tokens,
            soft_trimmed=c.soft_trimmed,
            hard_cleared=c.hard_cleared,
            over_trigger=c.should_compact,
            context_limit=settings.context_limit,
            trigger_tokens=settings.trigger_tokens,
            context_limit_source=source,
            segment=0,
        )
        for number, c in enumerate(calls, start=1)
    )

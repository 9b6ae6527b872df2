"""The prompt-cache cost of pruning: where each request's prefix broke, why, and what it re-wrote.

A request is Mycel's system prompt (never stored; assumed the same at every call), the summary in front
when one applied (one message), then messages[cut:index] each as pruned at that call. A provider's prompt
cache serves the longest prefix a request shares with the one before; from the first message that differs,
everything the previous request held is written to the cache again. Messages compare by identity and
pruned form: a result is pruned unless protect_recent shields it (CallInput.protected), and its pruned
form depends only on the settings, so two calls differ exactly where their protected sets differ.

Mycel adds Anthropic's prompt caching only for Anthropic models (reference mycel-dev §4.1: PromptCaching
"only if model_provider == 'anthropic'"); the provider is not stored, so the model's name decides. Every
call still gets its tokens; only those calls are priced, at the pricing cache's cache-write minus
cache-read price (memory_core/economics/cost.py's lookup): a rewritten token would have been a cache read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from memory_core.call_inputs import CallInput, call_inputs
from memory_core.call_record.calls import SYSTEM_PROMPT_MESSAGES, RecordedCall, summary_head_tiktoken
from memory_core.compaction import SUMMARY_HEADER
from memory_core.economics.cost import MILLION, ZERO, PriceBook, usd
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.model_view import ActiveSummary
from memory_core.tokens import TokenCounter

ESTIMATE_UNIT = "Mycel's estimate (characters / 2)"


class Cause(StrEnum):
    """What broke the prefix a call shared with the previous call's request (issue 15's names)."""

    TRIM = "trim"  # a result newly soft-trimmed
    CLEAR = "clear"  # a result newly hard-cleared
    COMPACTION = "compaction"  # Mycel compacted before this call: a new summary, the cut moved
    NEW_SUMMARY = "new summary"  # the summary in front changed without a compaction
    NONE = "none"  # the request only appended to the previous one


CAUSES = tuple(Cause)


def prompt_caching(model: str | None) -> bool:
    """Whether Mycel adds Anthropic's prompt caching for calls to this model (a Claude model's name)."""
    if not model:
        return False
    name = model.lower()
    return name.startswith(("claude", "anthropic")) or "/claude" in name


def rewrite_price(model: str | None, book: PriceBook | None) -> Decimal | None:
    """USD per million re-written tokens (cache write minus cache read), None when not priced."""
    if book is None or not prompt_caching(model) or model is None:
        return None
    priced = book.priced_as(model)
    if priced is None or priced.price.cache_write <= ZERO or priced.price.cache_read <= ZERO:
        return None
    return priced.price.cache_write - priced.price.cache_read


@dataclass(frozen=True, slots=True)
class CallPrefix:
    """One model call's request against the previous call's."""

    call: int  # 1-based, as /threads/ID/calls/N/
    index: int
    model: str | None
    request_messages: int  # system prompt included
    shared_prefix_messages: int | None  # system prompt included; None for the first call
    cause: Cause | None  # None for the first call (nothing cached before it)
    break_index: int | None  # the stored message whose pruned form changed (trim / clear)
    rewritten_tokens: int  # of the previous request, from the break to its end
    caching: bool  # Mycel adds prompt caching for this model
    cost_usd: Decimal | None  # None: not an Anthropic model, or no cache prices for it


@dataclass(frozen=True, slots=True)
class Tally:
    """A thread's (or fleet's) rewrites by cause and model: small, price-free, so it can be memoized."""

    rows: tuple[tuple[Cause, str | None, int, int], ...] = ()  # cause, model, calls, tokens

    def plus(self, other: Tally) -> Tally:
        return tally_of([*self.rows, *other.rows])


def tally_of(rows: Iterable[tuple[Cause, str | None, int, int]]) -> Tally:
    summed: dict[tuple[Cause, str | None], tuple[int, int]] = {}
    for cause, model, calls, tokens in rows:
        old_calls, old_tokens = summed.get((cause, model), (0, 0))
        summed[(cause, model)] = (old_calls + calls, old_tokens + tokens)
    ordered = sorted(summed.items(), key=lambda item: (CAUSES.index(item[0][0]), item[0][1] or ""))
    return Tally(tuple((cause, model, calls, tokens) for (cause, model), (calls, tokens) in ordered))


def tally_json(tally: Tally) -> list[list[object]]:
    """A tally as the fleet index keeps it."""
    return [[str(cause), model, calls, tokens] for cause, model, calls, tokens in tally.rows]


def tally_from_json(rows: list[list[Any]]) -> Tally:
    return Tally(tuple((Cause(cause), model, calls, tokens) for cause, model, calls, tokens in rows))


@dataclass(frozen=True, slots=True)
class CauseTotal:
    cause: Cause
    calls: int
    rewritten_tokens: int
    priced_tokens: int  # of those, on models with cache prices
    cost_usd: Decimal | None  # None when none of its tokens is priced


@dataclass(frozen=True, slots=True)
class Totals:
    by_cause: tuple[CauseTotal, ...]  # every cause, in CAUSES order

    @property
    def rewritten_tokens(self) -> int:
        return sum(t.rewritten_tokens for t in self.by_cause)

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.by_cause)

    @property
    def cost_usd(self) -> Decimal | None:
        costs = [t.cost_usd for t in self.by_cause if t.cost_usd is not None]
        return sum(costs, ZERO) if costs else None

    def of(self, cause: Cause) -> CauseTotal:
        return self.by_cause[CAUSES.index(cause)]


def priced_totals(tally: Tally, book: PriceBook | None) -> Totals:
    """Totals per cause, priced per model: the same arithmetic for a call, a thread and the fleet."""
    out = []
    for cause in CAUSES:
        calls = tokens = priced = 0
        cost: Decimal | None = None
        for row_cause, model, n, t in tally.rows:
            if row_cause is not cause:
                continue
            calls, tokens = calls + n, tokens + t
            price = rewrite_price(model, book)
            if price is not None:
                priced += t
                cost = (cost or ZERO) + Decimal(t) * price / MILLION
        out.append(CauseTotal(cause, calls, tokens, priced, cost))
    return Totals(tuple(out))


@dataclass(frozen=True, slots=True)
class ThreadPrefixes:
    calls: tuple[CallPrefix, ...]
    unit: str  # "tiktoken o200k_base" or Mycel's estimate
    tally: Tally

    def totals(self, book: PriceBook | None) -> Totals:
        return priced_totals(self.tally, book)


def unit_of(counter: TokenCounter | None) -> str:
    return f"tiktoken {counter.encoding_name}" if counter is not None else ESTIMATE_UNIT


def request_prefixes(
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
    settings: MemorySettings,
    *,
    counter: TokenCounter | None = None,
    models: Mapping[int, str | None] | None = None,
    book: PriceBook | None = None,
) -> ThreadPrefixes:
    """Every call's shared prefix with the call before, its cause and the tokens it re-wrote.

    `calls` are the record (or a replay, memory_core.whatif) whose pruning ran under `settings`; `models`
    maps a call number to its model. Tokens are tiktoken's with a `counter`, else Mycel's estimate.
    """
    models = models or {}
    # A call of a history Mycel dev rewrote since (prompt too long) is not in these messages.
    calls = [c for c in calls if c.earlier_history is None]
    inputs = {c.index: c for c in call_inputs(messages, settings, counter)}
    head_tokens = summary_head_tiktoken(counter)

    def tokens_from(call: RecordedCall, measured: CallInput, start: int) -> int:
        if counter is not None:
            return measured.tiktoken_between(start, call.index) or 0
        return measured.chars_between(start, call.index) // 2

    def whole(call: RecordedCall, measured: CallInput) -> int:
        summary = call.summary
        if summary is None:
            return tokens_from(call, measured, 0)
        cut = summary.compact_up_to_index
        if counter is not None:
            return head_tokens(summary.summary_text) + tokens_from(call, measured, cut)
        chars = len(SUMMARY_HEADER) + len(summary.summary_text) + measured.chars_between(cut, call.index)
        return chars // 2

    out: list[CallPrefix] = []
    previous: tuple[RecordedCall, CallInput] | None = None
    for call in calls:
        measured = inputs[call.index]
        model = models.get(call.call)
        shared: int | None = None
        cause: Cause | None = None
        broke: int | None = None
        rewritten = 0
        if previous is not None:
            before, before_input = previous
            # A simulated summary (a replay, or a compaction Mycel did not store) has no known text: new.
            new_text = call.compacted and not call.summary_stored
            if new_text or not _same_front(before.summary, call.summary):
                cause = Cause.COMPACTION if call.compacted else Cause.NEW_SUMMARY
                shared, rewritten = SYSTEM_PROMPT_MESSAGES, whole(before, before_input)
            else:
                cut = call.summary.compact_up_to_index if call.summary else 0
                changed = [j for j in before_input.protected ^ measured.protected if cut <= j < before.index]
                if not changed:
                    cause, shared = Cause.NONE, before.request_messages
                else:
                    broke = min(changed)
                    cause = Cause.CLEAR if measured.numbers.hard[broke] else Cause.TRIM
                    shared = SYSTEM_PROMPT_MESSAGES + (1 if call.summary else 0) + broke - cut
                    rewritten = tokens_from(before, before_input, broke)
        price = rewrite_price(model, book)
        out.append(
            CallPrefix(
                call=call.call,
                index=call.index,
                model=model,
                request_messages=call.request_messages,
                shared_prefix_messages=shared,
                cause=cause,
                break_index=broke,
                rewritten_tokens=rewritten,
                caching=prompt_caching(model),
                cost_usd=None if price is None else Decimal(rewritten) * price / MILLION,
            )
        )
        previous = (call, measured)
    tally = tally_of((c.cause, c.model, 1, c.rewritten_tokens) for c in out if c.cause is not None)
    return ThreadPrefixes(calls=tuple(out), unit=unit_of(counter), tally=tally)


def _same_front(a: ActiveSummary | None, b: ActiveSummary | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.summary_text == b.summary_text and a.compact_up_to_index == b.compact_up_to_index


# -- one JSON shape for `mycel-memory cache --json` and the cache screen ---------------------------------

ASSUMPTION = (
    "Mycel's system prompt is not stored: it is counted as the first message of every request and assumed "
    "unchanged between calls, so no break is ever at it and its tokens are never counted."
)


def call_json(c: CallPrefix) -> dict[str, object]:
    return {
        "call": c.call,
        "index": c.index,
        "model": c.model,
        "prompt_caching": c.caching,
        "request_messages": c.request_messages,
        "shared_prefix_messages": c.shared_prefix_messages,
        "cause": None if c.cause is None else str(c.cause),
        "break_index": c.break_index,
        "rewritten_tokens": c.rewritten_tokens,
        "cost_usd": usd(c.cost_usd),
    }


def totals_json(totals: Totals) -> dict[str, object]:
    return {
        "calls": totals.calls,
        "rewritten_tokens": totals.rewritten_tokens,
        "cost_usd": usd(totals.cost_usd),
        "by_cause": {
            str(t.cause): {
                "calls": t.calls,
                "rewritten_tokens": t.rewritten_tokens,
                "priced_tokens": t.priced_tokens,
                "cost_usd": usd(t.cost_usd),
            }
            for t in totals.by_cause
        },
    }

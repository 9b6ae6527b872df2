"""The calls' usage the record pass keeps in the fleet index (FleetUsage, FleetUnmetered), and the Cost
report's reads over it (CostIndex of memory_core/app/fleet_cost.py): sums per model and day, the costliest
threads, one page of threads' groups, the calls without usage. Each read costs what the page shows and the
period holds, never a walk of the fleet's checkpoints.

The fleet's sums per model and day (FleetUsageSum, FleetUnmeteredSum) are kept here, by every write of a
thread's usage, in its transaction: a write adds its thread's new groups and takes away its old ones, so a
page reads a few rows whatever the fleet's size. Writes come from the record pass, under the builder's lock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from decimal import Decimal
from typing import Any, cast

from django.db import transaction
from django.db.models import Case, Count, DecimalField, ExpressionWrapper, F, QuerySet, Sum, Value, When
from django.db.models.functions import Coalesce

from memory_core.app.fleet_index import RecordTally, usage_order
from memory_core.economics.cost import CallUsage, Price, Usage, UsageGroup, day_of
from mycel_dashboard.models import (
    NO_DAY,
    FleetThread,
    FleetUnmetered,
    FleetUnmeteredSum,
    FleetUsage,
    FleetUsageSum,
)

_BATCH = 1000
_TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")


def put_usage(store: str, tallies: Sequence[tuple[str, RecordTally]]) -> None:
    """Replace these threads' kept usage with their tallies' (inside the caller's transaction): one delete,
    one insert per table and one change of each fleet sum for the whole batch."""
    drop_usage(store, [thread_id for thread_id, _ in tallies])
    added: dict[_Key, list[int]] = {}
    unmetered: dict[date | None, int] = {}
    for _, tally in tallies:
        for g in tally.usage:
            _merge(added, (g.model, g.day, g.abandoned), [g.calls, *_usage_values(g.usage)])
        for c in tally.unmetered:
            unmetered[day_of(c.at)] = unmetered.get(day_of(c.at), 0) + 1
    FleetUsage.objects.bulk_create(
        (
            FleetUsage(
                store=store,
                thread_id=thread_id,
                model=g.model,
                day=g.day,
                abandoned=g.abandoned,
                calls=g.calls,
                input_tokens=g.usage.input,
                output_tokens=g.usage.output,
                reasoning_tokens=g.usage.reasoning,
                cache_read_tokens=g.usage.cache_read,
                cache_write_tokens=g.usage.cache_write,
            )
            for thread_id, tally in tallies
            for g in tally.usage
        ),
        batch_size=_BATCH,
    )
    FleetUnmetered.objects.bulk_create(
        (
            FleetUnmetered(
                store=store,
                thread_id=thread_id,
                position=i,
                call=c.call,
                message_id=c.message_id,
                model=c.model,
                model_from=c.model_from,
                at=c.at,
                day=day_of(c.at),
                checkpoint_id=c.checkpoint_id,
                branch=c.branch,
                reason=c.no_usage or "",
            )
            for thread_id, tally in tallies
            for i, c in enumerate(tally.unmetered)
        ),
        batch_size=_BATCH,
    )
    _add_sums(store, added, unmetered)


def drop_usage(store: str, thread_ids: Sequence[str]) -> None:
    """Forget the threads' kept usage, and take it out of the fleet's sums."""
    with transaction.atomic():
        for start in range(0, len(thread_ids), _BATCH):
            part = list(thread_ids[start : start + _BATCH])
            usage = FleetUsage.objects.filter(store=store, thread_id__in=part)
            unmetered = FleetUnmetered.objects.filter(store=store, thread_id__in=part)
            gone: dict[_Key, list[int]] = {}
            for row in cast(Iterable[dict[str, Any]], _summed_rows(usage)):
                group = _summed(row)
                _merge(
                    gone,
                    (group.model, group.day, group.abandoned),
                    [-group.calls, *_usage_values(group.usage, -1)],
                )
            counted = unmetered.values("day").annotate(n=Count("id")).order_by()
            _add_sums(store, gone, {row["day"]: -row["n"] for row in cast(Iterable[dict[str, Any]], counted)})
            usage.delete()
            unmetered.delete()


_Key = tuple[str | None, date | None, bool]  # (model, day, abandoned)


def _usage_values(usage: Usage, sign: int = 1) -> list[int]:
    return [
        sign * usage.input,
        sign * usage.output,
        sign * usage.reasoning,
        sign * usage.cache_read,
        sign * usage.cache_write,
    ]


def _merge(into: dict[_Key, list[int]], key: _Key, values: list[int]) -> None:
    # None and "" name the same unknown model (the report's "(unknown model)", never priced): one sum row.
    model, day, abandoned = key
    found = into.setdefault((model or None, day, abandoned), [0] * len(values))
    into[(model or None, day, abandoned)] = [a + b for a, b in zip(found, values, strict=True)]


def _add_sums(store: str, usage: Mapping[_Key, list[int]], unmetered: Mapping[date | None, int]) -> None:
    """Add these changes to the fleet's sums (inside the caller's transaction); a sum left at no calls goes."""
    names = ("calls", *_TOKENS)
    for (model, day, abandoned), values in usage.items():
        key = {"store": store, "model": model or "", "day": day or NO_DAY, "abandoned": abandoned}
        changes = {name: F(name) + value for name, value in zip(names, values, strict=True)}
        if not FleetUsageSum.objects.filter(**key).update(**changes):
            FleetUsageSum.objects.create(**key, **dict(zip(names, values, strict=True)))
    for day, n in unmetered.items():
        key = {"store": store, "day": day or NO_DAY}
        if not FleetUnmeteredSum.objects.filter(**key).update(calls=F("calls") + n):
            FleetUnmeteredSum.objects.create(**key, calls=n)
    if usage:
        FleetUsageSum.objects.filter(store=store, calls__lte=0).delete()
    if unmetered:
        FleetUnmeteredSum.objects.filter(store=store, calls__lte=0).delete()


def _summed_rows(rows: QuerySet[Any]) -> QuerySet[Any]:
    """FleetUsage rows summed per (model, day, branch kind)."""
    summed: QuerySet[Any] = rows.values("model", "day", "abandoned").annotate(
        n=Sum("calls"), **{name: Sum(name) for name in _TOKENS}
    )
    return summed.order_by()


def usage_of(
    store: str, thread_ids: Sequence[str]
) -> dict[str, tuple[tuple[UsageGroup, ...], tuple[CallUsage, ...]]]:
    """Each thread's kept usage groups (in usage_order) and calls without usage (in the record's order)."""
    groups: dict[str, list[UsageGroup]] = {}
    without: dict[str, list[CallUsage]] = {}
    for start in range(0, len(thread_ids), _BATCH):
        part = list(thread_ids[start : start + _BATCH])
        for row in FleetUsage.objects.filter(store=store, thread_id__in=part):
            groups.setdefault(row.thread_id, []).append(_kept(row))
        for found in FleetUnmetered.objects.filter(store=store, thread_id__in=part).order_by("position"):
            without.setdefault(found.thread_id, []).append(_unmetered(found))
    return {
        thread_id: (
            tuple(sorted(groups.get(thread_id, ()), key=usage_order)),
            tuple(without.get(thread_id, ())),
        )
        for thread_id in groups.keys() | without.keys()
    }


class DashboardCostIndex:
    """CostIndex over the dashboard's database."""

    def usage(self, store: str) -> list[UsageGroup]:
        return [
            UsageGroup(
                None,
                row.model or None,
                None if row.day == NO_DAY else row.day,
                row.abandoned,
                row.calls,
                Usage(*(getattr(row, name) for name in _TOKENS)),
            )
            for row in FleetUsageSum.objects.filter(store=store)
        ]

    def unmetered_days(self, store: str) -> dict[date | None, int]:
        return {
            None if row.day == NO_DAY else row.day: row.calls
            for row in FleetUnmeteredSum.objects.filter(store=store)
        }

    def unmetered(self, store: str, since: date | None, until: date | None, limit: int) -> list[CallUsage]:
        rows = _in_period(FleetUnmetered.objects.filter(store=store), "day", since, until)
        shown = rows.order_by(F("at").desc(nulls_last=True), "thread_id", "position")[:limit]
        return [_unmetered(row) for row in shown]

    def costliest(
        self,
        store: str,
        since: date | None,
        until: date | None,
        prices: Mapping[str, Price] | None,
        offset: int,
        limit: int,
    ) -> tuple[int, list[str]]:
        if since is None and until is None:
            # Every day: the order the record pass kept per thread, read from its index (fleet_by_cost),
            # at the pricing cache of the index's version, which is the page's (`prices`).
            with_usage = FleetThread.objects.filter(store=store, record_usage_calls__gt=0)
            ranked = with_usage.order_by("-record_cost_order", "-record_tokens", "thread_id")
            ids = ranked.values_list("thread_id", flat=True)[offset : offset + limit]
            return with_usage.count(), list(ids)
        rows = _in_period(FleetUsage.objects.filter(store=store), "day", since, until)
        count = rows.values("thread_id").distinct().count()
        tokens = sum((F(name) for name in _TOKENS[1:]), F(_TOKENS[0]))
        order: list[Any] = []
        per_thread = rows.values("thread_id").annotate(tokens=Sum(tokens))
        if prices is not None:
            per_thread = per_thread.annotate(cost=Coalesce(Sum(_cost(prices)), Value(Decimal(0))))
            order.append(F("cost").desc())
        ids = per_thread.order_by(*order, F("tokens").desc(), "thread_id").values_list("thread_id", flat=True)
        return count, list(ids[offset : offset + limit])

    def thread_usage(self, store: str, thread_ids: Sequence[str]) -> list[UsageGroup]:
        found = usage_of(store, thread_ids)
        return [g for thread_id in thread_ids for g in found.get(thread_id, ((), ()))[0]]


def _in_period(rows: QuerySet[Any], field: str, since: date | None, until: date | None) -> QuerySet[Any]:
    if since is not None:
        rows = rows.filter(**{f"{field}__gte": since})
    if until is not None:
        rows = rows.filter(**{f"{field}__lte": until})
    return rows


def _cost(prices: Mapping[str, Price]) -> Case:
    """A row's cost (times a million) at its model's price; 0 for a model without one (the order only:
    the page's figures are summed exactly in Python, by group_report)."""
    money = DecimalField(max_digits=40, decimal_places=12)
    return Case(
        *(
            When(
                model=model,
                then=ExpressionWrapper(
                    F("input_tokens") * Value(p.input)
                    + F("output_tokens") * Value(p.output)
                    + F("cache_read_tokens") * Value(p.cache_read)
                    + F("cache_write_tokens") * Value(p.cache_write),
                    output_field=money,
                ),
            )
            for model, p in prices.items()
        ),
        default=Value(Decimal(0)),
        output_field=money,
    )


def _summed(row: dict[str, Any]) -> UsageGroup:
    """A group summed over threads (a `values()` row of FleetUsage)."""
    usage = Usage(*(int(row[name] or 0) for name in _TOKENS))
    return UsageGroup(None, row["model"], row["day"], bool(row["abandoned"]), int(row["n"]), usage)


def _kept(row: FleetUsage) -> UsageGroup:
    usage = Usage(*(int(getattr(row, name)) for name in _TOKENS))
    return UsageGroup(row.thread_id, row.model, row.day, row.abandoned, row.calls, usage)


def _unmetered(row: FleetUnmetered) -> CallUsage:
    return CallUsage(
        thread_id=row.thread_id,
        call=row.call,
        message_id=row.message_id,
        model=row.model,
        model_from=row.model_from,
        at=row.at,
        checkpoint_id=row.checkpoint_id,
        branch=row.branch,
        usage=None,
        no_usage=row.reason,
    )

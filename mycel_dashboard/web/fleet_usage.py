"""The calls' usage the record pass keeps in the fleet index (FleetUsage, FleetUnmetered), and the Cost
report's reads over it (CostIndex of memory_core/app/cost.py): sums per model and day, the costliest
threads of a period priced in SQL, one page of threads' groups, the calls without usage. Each read costs
what the page shows and the period holds, never a walk of the fleet's checkpoints."""

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
from mycel_dashboard.models import FleetUnmetered, FleetUsage

_BATCH = 1000
_TOKENS = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")


def put_usage(store: str, thread_id: str, tally: RecordTally) -> None:
    """Replace the thread's kept usage with the tally's (inside the caller's transaction)."""
    drop_usage(store, [thread_id])
    FleetUsage.objects.bulk_create(
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
        for g in tally.usage
    )
    FleetUnmetered.objects.bulk_create(
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
        for i, c in enumerate(tally.unmetered)
    )


def drop_usage(store: str, thread_ids: Sequence[str]) -> None:
    with transaction.atomic():
        for start in range(0, len(thread_ids), _BATCH):
            part = list(thread_ids[start : start + _BATCH])
            FleetUsage.objects.filter(store=store, thread_id__in=part).delete()
            FleetUnmetered.objects.filter(store=store, thread_id__in=part).delete()


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
        summed = (
            FleetUsage.objects.filter(store=store)
            .values("model", "day", "abandoned")
            .annotate(n=Sum("calls"), **{name: Sum(name) for name in _TOKENS})
            .order_by()
        )
        return [_summed(row) for row in cast(Iterable[dict[str, Any]], summed)]

    def unmetered_days(self, store: str) -> dict[date | None, int]:
        counted = FleetUnmetered.objects.filter(store=store).values("day").annotate(n=Count("id")).order_by()
        return {row["day"]: row["n"] for row in cast(Iterable[dict[str, Any]], counted)}

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

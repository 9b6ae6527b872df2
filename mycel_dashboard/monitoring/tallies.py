"""The fleet index's facts tallied by (model, layout) in one SQL query (IndexTallies of
memory_core/app/health.py): what a /metrics scrape reads, whatever the fleet's size, instead of its rows.

tests/dashboard/test_metrics.py holds these tallies equal to health.tally over the same rows."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from django.db.models import BigIntegerField, Case, Count, F, Q, Sum, Value, When
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce

from memory_core.app.fleet_index import FLAGS
from memory_core.app.health import FILL_BUCKETS, GroupTally, IndexTallies, RecordSums
from memory_core.economics.cost import UsageGroup
from mycel_dashboard.models import FleetThread
from mycel_dashboard.web.fleet_usage import DashboardCostIndex

# The record columns summed as they are (record_<name>).
_RECORD_SUMS = (
    "calls",
    "calls_without_usage",
    "compactions",
    "trimmed_results",
    "provider_tokens",
    "estimated_tokens",
)


class DashboardFleetTallies(IndexTallies):
    def tallies(self, store: str, *, active_since: datetime) -> list[GroupTally]:
        counts: dict[str, Any] = {
            f"flag_{flag}": Count("id", filter=Q(flags__contains=f",{flag},")) for flag in FLAGS
        }
        counts |= {
            f"at_most_{i}": Count("id", filter=Q(fill__lte=bound)) for i, bound in enumerate(FILL_BUCKETS)
        }
        counts |= {
            f"sent_at_most_{i}": Count("id", filter=Q(record_fill_sent__lte=bound))
            for i, bound in enumerate(FILL_BUCKETS)
        }
        # health.state_of, in SQL: no head is "empty"; a head last active since `active_since` is "active".
        counts |= {
            "state_empty": Count("id", filter=Q(head_checkpoint_id__isnull=True)),
            "state_active": Count(
                "id", filter=Q(head_checkpoint_id__isnull=False, updated_at__gte=active_since)
            ),
        }
        counts |= {
            "rec_threads": Count("id", filter=Q(record_head__isnull=False)),
            "rec_current": Count("id", filter=Q(record_head=F("head_checkpoint_id"))),
            "rec_recompacting": Count("id", filter=Q(record_recompacting=True)),
            "rec_not_stored": Count("id", filter=Q(record_compactions_not_stored__gt=0)),
            "rec_fill_known": Count("record_fill_sent"),
            "rec_fill_sum": Sum("record_fill_sent"),
        }
        counts |= {f"rec_{name}": Coalesce(Sum(f"record_{name}"), 0) for name in _RECORD_SUMS}
        grouped = (
            FleetThread.objects.filter(store=store)
            .values(
                # model_key is NULL exactly when the row has no model (a JSON null reads as 'null' on SQLite).
                model=Case(
                    When(model_key__isnull=True, then=Value(None)), default=KeyTextTransform("model", "row")
                ),
                layout=KeyTextTransform("layout", "row"),
            )
            .annotate(
                threads=Count("id"),
                fill_known=Count("fill"),
                fill_sum=Sum("fill"),
                bytes=Coalesce(Sum("bytes_on_disk"), 0),
                summaries=Coalesce(Sum(Cast(KeyTextTransform("summaries", "row"), BigIntegerField())), 0),
                **counts,
            )
            .order_by()
        )
        return [
            GroupTally(
                row["model"] or None,
                row["layout"] or "main",
                row["threads"],
                {flag: row[f"flag_{flag}"] for flag in FLAGS},
                row["fill_known"],
                float(row["fill_sum"] or 0.0),
                tuple(row[f"at_most_{i}"] for i in range(len(FILL_BUCKETS))),
                int(row["bytes"]),
                int(row["summaries"]),
                RecordSums(
                    threads=row["rec_threads"],
                    current=row["rec_current"],
                    recompacting=row["rec_recompacting"],
                    not_stored=row["rec_not_stored"],
                    **{name: int(row[f"rec_{name}"]) for name in _RECORD_SUMS},
                    fill_sent_known=row["rec_fill_known"],
                    fill_sent_sum=float(row["rec_fill_sum"] or 0.0),
                    fill_sent_at_most=tuple(row[f"sent_at_most_{i}"] for i in range(len(FILL_BUCKETS))),
                ),
                {
                    "active": row["state_active"],
                    "idle": row["threads"] - row["state_active"] - row["state_empty"],
                    "empty": row["state_empty"],
                },
            )
            for row in cast(Iterable[dict[str, Any]], grouped)
        ]

    def usage(self, store: str) -> list[UsageGroup]:
        return DashboardCostIndex().usage(store)

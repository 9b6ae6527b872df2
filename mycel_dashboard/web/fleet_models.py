"""Threads per model from the fleet index, in one SQL query: what the Config page's table of context
limits counts at fleet size instead of reading every thread."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django.db.models import Count
from django.db.models.fields.json import KeyTextTransform

from mycel_dashboard.models import FleetThread


def indexed_model_counts(store: str) -> dict[str | None, int]:
    """Threads per model: the model chosen for the thread, else the one it last ran with (the rule of
    memory_core.app.thread_settings.thread_model, on the rows the index keeps)."""
    grouped = (
        FleetThread.objects.filter(store=store)
        .values(
            configured=KeyTextTransform("configured_model", "row"), model=KeyTextTransform("model", "row")
        )
        .annotate(threads=Count("id"))
        .order_by()
    )
    counts: dict[str | None, int] = {}
    for group in cast(Iterable[dict[str, Any]], grouped):
        model = group["configured"] or group["model"] or None
        counts[model] = counts.get(model, 0) + int(group["threads"])
    return counts

"""Threads per model from the fleet index, in one SQL query over an index: what the Config page's table of context
limits counts at fleet size instead of reading every thread."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django.db.models import Count

from mycel_dashboard.models import FleetThread


def indexed_model_counts(store: str) -> dict[str | None, int]:
    """Threads per model: the model chosen for the thread, else the one it last ran with (the rule of
    memory_core.app.thread_settings.thread_model, kept per thread as `thread_model`, under an index)."""
    grouped = FleetThread.objects.filter(store=store).values("thread_model").annotate(threads=Count("id"))
    return {
        group["thread_model"]: int(group["threads"])
        for group in cast(Iterable[dict[str, Any]], grouped.order_by())
    }

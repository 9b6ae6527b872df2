"""Each thread's footprint in the fleet index (FleetThread's storage_* columns), and the Storage report's
reads over them (FleetIndexStore.footprint_sums / footprints): one page in the report's order, the sums per
store. A thread's projection for any number of turns is one SQL expression of its columns, the very rule
of memory_core.footprint.growth.Pace.projected_bytes, in the same order of operations (a test holds the two
equal on both engines), so ranking a fleet by its projection needs no Python per thread.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Count, QuerySet, Sum
from django.db.models.expressions import RawSQL

from memory_core.app.fleet_index import FootprintSums
from memory_core.app.storage import StorageSort
from memory_core.footprint.growth import Footprint, GrowthFit, Pace
from mycel_dashboard.models import FleetThread

_EMPTY: dict[str, Any] = dict.fromkeys(
    (
        "storage_store",
        "storage_layout",
        "storage_checkpoints",
        "storage_bytes",
        "storage_turns",
        "storage_per_turn",
        "storage_basis",
        "storage_quadratic",
        "storage_fit_a",
        "storage_fit_b",
        "storage_fit_r2",
        "storage_rising_from",
        "storage_rising_until",
    )
)
COLUMNS = tuple(_EMPTY)


def footprint_columns(found: Footprint | None) -> dict[str, Any]:
    """FleetThread's storage_* values of a footprint (all NULL for none)."""
    if found is None:
        return dict(_EMPTY)
    pace = found.pace
    fit = pace.fit
    return {
        "storage_store": found.store,
        "storage_layout": found.layout,
        "storage_checkpoints": found.checkpoints,
        "storage_bytes": pace.total_bytes,
        "storage_turns": pace.turns,
        "storage_per_turn": pace.growth_bytes_per_turn,
        "storage_basis": pace.basis,
        "storage_quadratic": pace.quadratic,
        "storage_fit_a": fit.a if fit else None,
        "storage_fit_b": fit.b if fit else None,
        "storage_fit_r2": fit.r2 if fit else None,
        "storage_rising_from": pace.rising_from if fit else None,
        "storage_rising_until": pace.rising_until if fit else None,
    }


def footprint_of(stored: FleetThread) -> Footprint | None:
    if stored.storage_bytes is None:
        return None
    fit = None
    if stored.storage_fit_a is not None:
        fit = GrowthFit(stored.storage_fit_a, stored.storage_fit_b or 0.0, stored.storage_fit_r2 or 0.0)
    pace = Pace(
        stored.storage_bytes,
        stored.storage_turns or 0,
        stored.storage_per_turn or 0,
        stored.storage_basis or "",
        bool(stored.storage_quadratic),
        fit,
        stored.storage_rising_from or 0,
        stored.storage_rising_until,
    )
    return Footprint(
        stored.storage_store or "", stored.storage_layout or "", stored.storage_checkpoints or 0, pace
    )


def projected_sql(turns_ahead: int, vendor: str) -> str:
    """Pace.projected_bytes(turns_ahead) of a FleetThread row, in the SQL of `vendor` ("postgresql" or
    "sqlite")."""
    ahead = int(turns_ahead)
    if ahead <= 0:
        return "storage_bytes"
    least = "LEAST" if vendor == "postgresql" else "MIN"
    whole = "bigint" if vendor == "postgresql" else "INTEGER"
    last = f"{least}(storage_turns + {ahead}, COALESCE(storage_rising_until, storage_turns + {ahead}))"
    n = f"({last} - storage_rising_from + 1)"
    line = f"FLOOR({n} * storage_fit_a + storage_fit_b * (storage_rising_from + {last}) * {n} / 2 + 0.5)"
    return (
        f"CASE WHEN storage_fit_a IS NULL THEN storage_bytes + {ahead} * storage_per_turn "
        f"WHEN {n} > 0 THEN storage_bytes + CAST({line} AS {whole}) ELSE storage_bytes END"
    )


def _projected(turns_ahead: int) -> RawSQL:
    return RawSQL(projected_sql(turns_ahead, connection.vendor), ())  # noqa: S611 - an int and column names, no text of anyone's


def _measured(store: str) -> QuerySet[FleetThread]:
    return FleetThread.objects.filter(store=store, storage_bytes__isnull=False)


def footprint_sums(store: str, turns_ahead: int) -> tuple[dict[str, FootprintSums], int]:
    sums = (
        _measured(store)
        .values("storage_store")
        .annotate(threads=Count("*"), bytes=Sum("storage_bytes"), projected=Sum(_projected(turns_ahead)))
        .order_by()
    )
    found = {
        str(row["storage_store"]): FootprintSums(row["threads"], int(row["bytes"]), int(row["projected"]))
        for row in sums
    }
    without = FleetThread.objects.filter(store=store, storage_bytes__isnull=True).exclude(checkpoints=0)
    return found, without.count()


_ORDERS = {
    StorageSort.BYTES: ("-storage_bytes", "thread_id"),
    StorageSort.GROWTH: ("-storage_per_turn", "-storage_bytes", "thread_id"),
    StorageSort.PROJECTED: ("-projected", "-storage_bytes", "thread_id"),
}


def footprints(
    store: str, sort: StorageSort, turns_ahead: int, offset: int, limit: int
) -> list[tuple[str, str | None, Footprint]]:
    rows = _measured(store)
    if sort is StorageSort.PROJECTED:
        rows = rows.annotate(projected=_projected(turns_ahead))
    page = rows.order_by(*_ORDERS[sort]).only("thread_id", "row", *COLUMNS)[offset : offset + limit]
    out: list[tuple[str, str | None, Footprint]] = []
    for stored in page:
        kept = footprint_of(stored)
        if kept is not None:
            out.append((stored.thread_id, stored.row.get("name"), kept))
    return out

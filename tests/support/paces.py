# ruff: noqa: S608 - the table and column names are this module's constants; the values are parameters
"""Paces of every shape the Storage report projects (rising, falling to zero, crossing zero upward, flat,
too short to fit, none), and a table holding them in FleetThread's storage_* columns: the one fixture by
which the SQL projection (mycel_dashboard/web/fleet_storage.py) is held equal to Pace.projected_bytes on
each engine."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from memory_core.footprint.facts import CheckpointBytes, ThreadBytes
from memory_core.footprint.growth import GrowthFit, Pace, thread_growth
from mycel_dashboard.web.fleet_storage import COLUMNS, footprint_columns

TURNS_AHEAD = (0, 1, 2, 7, 50, 333, 10_000)
TABLE = "paces"


def _thread_of_turns(turn_bytes: Sequence[int]) -> ThreadBytes:
    checkpoints = tuple(
        CheckpointBytes(f"c{n:05d}", None, size, 0, 0, source="input") for n, size in enumerate(turn_bytes)
    )
    return ThreadBytes("t", "leon.db", "main", checkpoints)


def paces(count: int = 600, seed: int = 27) -> Iterator[Pace]:
    """Paces fitted from random turns, then lines that cross zero placed by hand."""
    rng = random.Random(seed)
    for _ in range(count):
        turns = rng.randint(0, 40)
        start, step, noise = rng.randint(0, 50_000), rng.randint(-3_000, 3_000), rng.randint(0, 20_000)
        sizes = [max(0, start + step * t + rng.randint(-noise, noise)) for t in range(turns)]
        yield thread_growth(_thread_of_turns(sizes)).pace
    for a, b in ((-5_000.5, 123.25), (9_000.0, -310.7), (0.5, 0.0), (-1.0, 0.0), (1e6, -1e-3), (-1e7, 3.3)):
        fit = GrowthFit(a, b, 0.9)
        start, end = fit.rising_turns(12)
        yield Pace(40_000, 12, fit.bytes_of_turn(13), "fitted", b > 0, fit, start, end)


def table_rows(found: Sequence[Pace]) -> list[tuple[Any, ...]]:
    """(id, the storage_* columns...) of each pace, in COLUMNS order."""
    from memory_core.footprint.growth import Footprint

    rows = []
    for n, pace in enumerate(found):
        columns = footprint_columns(Footprint("leon.db", "main", pace.turns, pace))
        rows.append((n, *(columns[c] for c in COLUMNS)))
    return rows


def create_sql(data_types: dict[str, Any]) -> str:
    """The paces' table, each column typed as the dashboard's migration types FleetThread's on the engine
    whose `DatabaseWrapper.data_types` these are."""
    from mycel_dashboard.models import FleetThread

    columns = []
    for name in COLUMNS:
        field = FleetThread._meta.get_field(name)
        params = {"max_length": field.max_length}
        typed = data_types[field.get_internal_type()]
        columns.append(f"{name} {typed(params) if callable(typed) else typed % params}")
    return f"CREATE TABLE {TABLE} (id integer PRIMARY KEY, {', '.join(columns)})"


def insert_sql(placeholder: str) -> str:
    return f"INSERT INTO {TABLE} VALUES ({', '.join([placeholder] * (len(COLUMNS) + 1))})"


def projected_sql_rows(sql: str) -> str:
    return f"SELECT id, {sql} FROM {TABLE} ORDER BY id"

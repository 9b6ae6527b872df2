"""Which backend Mycel's own configuration implies: the one place that asks which engine holds the
checkpoints. Every other reader and writer goes through the StoreBackend it returns."""

from __future__ import annotations

from memory_core.stores.backend import StoreBackend
from memory_core.stores.locations import MycelLocations
from memory_core.stores.sqlite.backend import SqliteBackend


def backend_for(locations: MycelLocations, *, query_timeout_s: float, row_cap: int) -> StoreBackend:
    """Postgres when LEON_POSTGRES_URL is set (dev always checkpoints there; main does with
    LEON_STORAGE_STRATEGY=supabase), else main's SQLite files."""
    if locations.postgres_url:
        from memory_core.stores.postgres.backend import PostgresBackend  # psycopg only when it is used

        return PostgresBackend(locations, query_timeout_s=query_timeout_s, row_cap=row_cap)
    return SqliteBackend(locations, query_timeout_s=query_timeout_s, row_cap=row_cap)

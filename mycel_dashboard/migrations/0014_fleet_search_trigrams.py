"""Trigram indexes for the Threads list's search (part of an id or name) on a PostgreSQL dashboard database.

The search is `UPPER(thread_id) LIKE UPPER('%…%') OR name_key LIKE '%…%'` (web/fleet_index.py), which
without them reads every indexed thread (~150 ms over 100,000 on PostgreSQL). pg_trgm ships with
PostgreSQL and is a trusted extension, so the database's owner may create it; where it cannot be created
the search keeps scanning, as it does on SQLite, and the migration still applies. These are the dashboard's
own tables: Mycel's database is never touched.
"""

import logging
from typing import Any

from django.db import DatabaseError, migrations, transaction

log = logging.getLogger(__name__)

INDEXES = {
    "fleet_thread_id_trgm": "UPPER(thread_id) gin_trgm_ops",
    "fleet_thread_name_trgm": "name_key gin_trgm_ops",
}


def add_trigram_indexes(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError as exc:
        log.warning("pg_trgm could not be created (%s): the Threads list's search scans the index", exc)
        return
    with connection.cursor() as cursor:
        for name, expression in INDEXES.items():
            cursor.execute(
                f"CREATE INDEX IF NOT EXISTS {name} ON mycel_dashboard_fleetthread USING gin ({expression})"
            )


def drop_trigram_indexes(apps: Any, schema_editor: Any) -> None:  # noqa: ARG001 - Django's signature
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        for name in INDEXES:
            cursor.execute(f"DROP INDEX IF EXISTS {name}")


class Migration(migrations.Migration):
    dependencies = [
        ("mycel_dashboard", "0013_fleet_reports"),
    ]

    operations = [migrations.RunPython(add_trigram_indexes, drop_trigram_indexes)]

"""The Storage report's projection in PostgreSQL's SQL (mycel_dashboard/web/fleet_storage.py
projected_sql), on a real server over FleetThread's column types there: every pace's
Pace.projected_bytes to the byte, for every shape of line and horizon (SQLite's twin:
tests/dashboard/test_projection_sql.py)."""

from __future__ import annotations

import psycopg
from django.db.backends.postgresql.base import DatabaseWrapper

from mycel_dashboard.web.fleet_storage import projected_sql
from tests.support.paces import TURNS_AHEAD, create_sql, insert_sql, paces, projected_sql_rows, table_rows
from tests.support.postgres import database_name


def test_postgres_projects_every_pace_as_python_does(pg_server) -> None:
    found = list(paces())
    url = pg_server.create_database(database_name("paces"))
    with psycopg.connect(url) as db:
        db.execute(create_sql(DatabaseWrapper.data_types))
        with db.cursor() as cursor:
            cursor.executemany(insert_sql("%s"), table_rows(found))
        for ahead in TURNS_AHEAD:
            got = [
                int(value) for _, value in db.execute(projected_sql_rows(projected_sql(ahead, "postgresql")))
            ]
            assert got == [p.projected_bytes(ahead) for p in found], ahead

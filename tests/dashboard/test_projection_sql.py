"""The fleet index ranks and sums the Storage report's projection in SQL (mycel_dashboard/web/
fleet_storage.py projected_sql); here that SQL, run by SQLite over FleetThread's column types, gives every
pace's Pace.projected_bytes to the byte, for every shape of line and horizon (PostgreSQL's twin:
tests/postgres/test_pg_projection_sql.py)."""

from __future__ import annotations

import sqlite3

from django.db.backends.sqlite3.base import DatabaseWrapper

from mycel_dashboard.web.fleet_storage import projected_sql
from tests.support.paces import TURNS_AHEAD, create_sql, insert_sql, paces, projected_sql_rows, table_rows


def test_sqlite_projects_every_pace_as_python_does() -> None:
    found = list(paces())
    db = sqlite3.connect(":memory:")
    db.execute(create_sql(DatabaseWrapper.data_types))
    db.executemany(insert_sql("?"), table_rows(found))
    crossing = [p for p in found if p.fit is not None and p.rising_until is not None]
    assert len(crossing) > 20  # lines that fall to zero within the horizons are among them
    for ahead in TURNS_AHEAD:
        got = [value for _, value in db.execute(projected_sql_rows(projected_sql(ahead, "sqlite")))]
        assert got == [p.projected_bytes(ahead) for p in found], ahead

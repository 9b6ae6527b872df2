"""`mycel-memory`: the engine's command line, wired to the dashboard's audit log.

memory_core records its audited writes through a sink its caller supplies; this entry point supplies the
dashboard's, in the same log the pages write, with the shell user as the actor. Django is set up only when
a command writes, so reading commands start as fast as before; on a machine where the web app never ran,
the first audited command migrates the dashboard's database where the settings put it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.app.audit import AuditRecord, AuditResult, AuditSink, AuditUnavailable
from memory_core.cli import main as engine_main
from memory_core.ids import printable

if TYPE_CHECKING:
    from memory_core.app.fleet_index import FleetIndexStore


class ShellAuditLog:
    """The dashboard's audit log, opened on first use (Django set up, the log's table made if missing)."""

    def __init__(self) -> None:
        self._log: AuditSink | None = None

    def begin(self, intent: AuditRecord) -> Hashable:
        return self._opened(intent).begin(intent)

    def end(self, ticket: Hashable, result: AuditResult, *, message: str, after: Mapping[str, Any]) -> None:
        if self._log is None:
            raise AuditUnavailable("the audit log was never opened")
        self._log.end(ticket, result, message=message, after=after)

    def _opened(self, intent: AuditRecord) -> AuditSink:
        if self._log is not None:
            return self._log
        try:
            self._log = _dashboard_log()
        except Exception as exc:  # noqa: BLE001 - whatever stops the log from opening, it is one line
            first = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            raise AuditUnavailable.refusing(intent, first) from None
        return self._log


def _dashboard_log() -> AuditSink:
    _django_ready()
    from mycel_dashboard.web.audit import AuditLog

    return AuditLog()


def _django_ready(*, migrate: bool = True) -> None:
    """Django set up once per process, the dashboard's database made and migrated if it is not."""
    import django
    from django.apps import apps

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mycel_dashboard.settings")
    if not apps.ready:
        # Once per process: a second setup would configure logging again, re-binding the root handler to
        # whatever sys.stderr is at that moment.
        django.setup()
    if not migrate:
        return
    from django.core.management import call_command
    from django.db import connection

    from mycel_dashboard.models import AuditEntry, FleetThread

    tables = connection.introspection.table_names()
    if AuditEntry._meta.db_table not in tables or FleetThread._meta.db_table not in tables:
        call_command("migrate", interactive=False, verbosity=0)


def _fleet_index() -> FleetIndexStore | None:
    """The dashboard's fleet index, when its database can be opened (None: the command lists in memory)."""
    try:
        # A read never makes the dashboard's database: only one the dashboard (or a write) already made.
        _django_ready(migrate=False)
        from django.db import connection

        if connection.vendor == "sqlite" and not Path(str(connection.settings_dict["NAME"])).exists():
            return None  # connecting would make the file

        from django.db.migrations.loader import MigrationLoader

        from mycel_dashboard.web.fleet_index import DashboardFleetIndex

        # An index whose tables predate this version's migrations (the dashboard migrates when it starts).
        loader = MigrationLoader(connection, ignore_no_migrations=True)
        if not set(loader.graph.leaf_nodes()) <= set(loader.applied_migrations):
            return None
        return DashboardFleetIndex()
    except Exception:  # noqa: BLE001 - no index is a slower list, never a failed command
        return None


def main(argv: Sequence[str] | None = None) -> int:
    return engine_main(argv, audit=ShellAuditLog(), fleet_index=_fleet_index)


if __name__ == "__main__":
    sys.exit(main())

"""`mycel-memory`: the engine's command line, wired to the dashboard's audit log.

memory_core records its audited writes through a sink its caller supplies; this entry point supplies the
dashboard's. Django is set up only when a command records, so reading commands start as fast as before.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from memory_core.app.audit import AuditRecord, AuditUnavailable
from memory_core.cli import main as engine_main
from memory_core.ids import printable


class DashboardAuditLog:
    """The dashboard's AuditEntry table as the CLI's audit sink."""

    def record(self, entry: AuditRecord) -> None:
        try:
            import django
            from django.apps import apps

            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mycel_dashboard.settings")
            if not apps.ready:
                # Once per process: a second setup would configure logging again, re-binding the root
                # handler to whatever sys.stderr is at that moment.
                django.setup()
            from memory_core.config import redact_secrets
            from mycel_dashboard.models import AuditEntry

            AuditEntry.objects.create(
                user=None,
                actor=entry.actor[:150],
                action=AuditEntry.Action(entry.action),
                result=AuditEntry.Result.FAILED if entry.failed else AuditEntry.Result.APPLIED,
                thread_id=entry.thread_id,
                target=entry.target,
                message=entry.failed or entry.message,
                after=redact_secrets(dict(entry.after)),
            )
        except Exception as exc:  # noqa: BLE001 - whatever the database says, it is one line and no write
            if entry.failed:
                return  # the write failed already; that is the error the user sees
            first = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            what = "export" if entry.action.endswith("export") else entry.action.replace("_", " ")
            raise AuditUnavailable(
                f"the {what} was not written: the dashboard's audit log cannot record it "
                f"({first}; run `python manage.py migrate`, or set DASHBOARD_DB_PATH / DATABASE_URL)"
            ) from None


def main(argv: Sequence[str] | None = None) -> int:
    return engine_main(argv, audit=DashboardAuditLog())


if __name__ == "__main__":
    sys.exit(main())

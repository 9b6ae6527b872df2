"""The one way a CLI export leaves its trace in the dashboard's audit log.

The audit log is the dashboard's own table, so Django is set up here only, and only when a command
exports. An export the log cannot record is not written: the caller learns it as one CliError line.
"""

from __future__ import annotations

import os
from typing import Any

from memory_core.cli.common import CliError
from memory_core.cli.table import printable


def record_export(
    action: str,
    actor: str,
    *,
    target: str,
    message: str,
    after: dict[str, Any],
    thread_id: str = "",
    failed: str | None = None,
) -> None:
    """One audit row (`action` is an AuditEntry.Action value): applied, or failed with `failed` as its
    message. Secrets are redacted here, whatever the caller passes."""
    try:
        import django  # noqa: TID251 - the audit log is the dashboard's; the CLI loads it only to record
        from django.apps import apps  # noqa: TID251 - as above

        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mycel_dashboard.settings")
        if not apps.ready:
            # Once per process: a second setup would configure logging again, re-binding the root handler
            # to whatever sys.stderr is at that moment.
            django.setup()
        from memory_core.config import redact_secrets
        from mycel_dashboard.models import AuditEntry

        AuditEntry.objects.create(
            user=None,
            actor=actor[:150],
            action=AuditEntry.Action(action),
            result=AuditEntry.Result.FAILED if failed else AuditEntry.Result.APPLIED,
            thread_id=thread_id,
            target=target,
            message=failed or message,
            after=redact_secrets(after),
        )
    except Exception as exc:  # noqa: BLE001 - whatever the database says, it is one line and no export
        if failed:
            return  # the write failed already; that is the error the user sees
        first = printable(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        raise CliError(
            "the export was not written: the dashboard's audit log cannot record it "
            f"({first}; run `python manage.py migrate`, or set DASHBOARD_DB_PATH / DATABASE_URL)"
        ) from None

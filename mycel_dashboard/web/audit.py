"""One function every write goes through to leave its trace in the audit log."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from mycel_dashboard.models import AuditEntry


def record(
    user: AbstractBaseUser | AnonymousUser,
    action: AuditEntry.Action,
    result: AuditEntry.Result,
    *,
    thread_id: str = "",
    target: str = "",
    message: str = "",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> AuditEntry:
    """Append an audit entry (the caller has already redacted anything secret)."""
    return AuditEntry.objects.create(
        user=user if user.is_authenticated else None,
        actor=user.get_username() if user.is_authenticated else "anonymous",
        action=action,
        result=result,
        thread_id=thread_id,
        target=target,
        message=message,
        before=before or {},
        after=after or {},
    )

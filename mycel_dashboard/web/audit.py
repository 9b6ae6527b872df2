"""The one way a write leaves its trace in the audit log: name the write once (who, what, which thread),
then record how it ended. Secrets are hidden here, whatever the caller passes."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from memory_core.config import redact_secrets
from mycel_dashboard.models import AuditEntry


class AuditTrail:
    """One audited write by the request's user: `applied`, `refused` or `failed` records its outcome."""

    def __init__(
        self, request: HttpRequest, action: AuditEntry.Action, *, thread_id: str = "", actor: str = ""
    ) -> None:
        self.user = request.user
        self.action = action
        self.thread_id = thread_id
        self.actor = actor[:150]  # who, when no one is signed in: the name a failed sign-in tried

    def applied(self, *, target: str = "", message: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditEntry.Result.APPLIED, target, message, **states)

    def refused(self, message: str, *, target: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditEntry.Result.REFUSED, target, message, **states)

    def failed(self, message: str, *, target: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditEntry.Result.FAILED, target, message, **states)

    def _record(
        self,
        result: AuditEntry.Result,
        target: str,
        message: str,
        *,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
    ) -> AuditEntry:
        user = self.user
        return AuditEntry.objects.create(
            user=user if user.is_authenticated else None,
            actor=user.get_username() if user.is_authenticated else (self.actor or "anonymous"),
            action=self.action,
            result=result,
            thread_id=self.thread_id,
            target=target,
            message=message,
            before=redact_secrets(before or {}),
            after=redact_secrets(after or {}),
        )

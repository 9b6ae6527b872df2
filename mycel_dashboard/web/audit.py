"""The dashboard's audit log, the one place every trace is written: a write's intent before it and its
outcome after (AuditLog, the sink memory_core's audited writes take, from a page or from `mycel-memory`),
or a one-off event such as a refusal or a sign-in (AuditTrail). Secrets are hidden here, whatever the
caller passes."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import DatabaseError
from django.http import HttpRequest

from memory_core.app.audit import AuditRecord, AuditResult, AuditUnavailable
from memory_core.config import redact_secrets
from memory_core.ids import printable
from mycel_dashboard.models import AuditEntry


def _reason(exc: Exception) -> str:
    text = str(exc)
    return printable(text.splitlines()[0] if text else type(exc).__name__)[:300]


class AuditLog:
    """AuditEntry rows as an AuditSink: `begin` writes the intent (result "pending", shown as "outcome
    unknown" until `end` records how the write ended)."""

    def __init__(self, user: User | AnonymousUser | None = None) -> None:
        self.user = user if isinstance(user, User) else None

    def begin(self, intent: AuditRecord) -> Hashable:
        try:
            entry = self._create(intent, AuditEntry.Result.PENDING)
        except DatabaseError as exc:
            raise AuditUnavailable.refusing(intent, _reason(exc)) from None
        return entry.pk

    def end(self, ticket: Hashable, result: AuditResult, *, message: str, after: Mapping[str, Any]) -> None:
        changes: dict[str, Any] = {"result": AuditEntry.Result(result.value), "message": message}
        if after:
            changes["after"] = redact_secrets(dict(after))
        try:
            AuditEntry.objects.filter(pk=int(str(ticket))).update(**changes)
        except DatabaseError as exc:
            raise AuditUnavailable(_reason(exc)) from None

    def record(self, entry: AuditRecord, result: AuditResult) -> AuditEntry:
        """A finished event in one row (nothing was written, or nothing outside the log); AuditUnavailable
        when the log cannot take it."""
        try:
            return self._create(entry, AuditEntry.Result(result.value))
        except DatabaseError as exc:
            raise AuditUnavailable(
                f"the dashboard's audit log cannot record it ({_reason(exc)}; check that its database is "
                "writable and migrated: DASHBOARD_DB_PATH / DATABASE_URL)"
            ) from None

    def _create(self, entry: AuditRecord, result: AuditEntry.Result) -> AuditEntry:
        return AuditEntry.objects.create(
            user=self.user,
            actor=entry.actor[:150],
            action=AuditEntry.Action(entry.action),
            result=result,
            thread_id=entry.thread_id,
            target=entry.target,
            message=entry.message,
            before=redact_secrets(dict(entry.before)),
            after=redact_secrets(dict(entry.after)),
        )


class AuditTrail:
    """The request's user's traces of one action: `intent` for an audited write (with `log` as its sink),
    `applied`, `refused` or `failed` for an event recorded whole."""

    def __init__(
        self, request: HttpRequest, action: AuditEntry.Action, *, thread_id: str = "", actor: str = ""
    ) -> None:
        self.log = AuditLog(request.user)
        self.action = action
        self.thread_id = thread_id
        user = request.user
        # Who, when no one is signed in: the name a failed sign-in tried.
        self.actor = user.get_username() if user.is_authenticated else (actor[:150] or "anonymous")

    def intent(
        self, *, target: str = "", message: str = "", before: Mapping[str, Any] | None = None
    ) -> AuditRecord:
        return AuditRecord(
            action=self.action.value,
            actor=self.actor,
            target=target,
            message=message,
            thread_id=self.thread_id,
            before=before or {},
        )

    def applied(self, *, target: str = "", message: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditResult.APPLIED, target, message, **states)

    def refused(self, message: str, *, target: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditResult.REFUSED, target, message, **states)

    def failed(self, message: str, *, target: str = "", **states: dict[str, Any] | None) -> AuditEntry:
        return self._record(AuditResult.FAILED, target, message, **states)

    def _record(
        self,
        result: AuditResult,
        target: str,
        message: str,
        *,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
    ) -> AuditEntry:
        entry = AuditRecord(
            action=self.action.value,
            actor=self.actor,
            target=target,
            message=message,
            thread_id=self.thread_id,
            before=before or {},
            after=after or {},
        )
        return self.log.record(entry, result)

"""Audit first, then write; or nothing. Every audited write (rollback, undo, config save and restore, an
export) records its intent before it touches anything and its outcome after, through a sink its caller
supplies (the dashboard's audit log, from the pages and from `mycel-memory` alike), so the engine records
without knowing Django. A write whose intent cannot be recorded does not happen; a process that dies
between the two leaves an intent whose outcome is unknown, which the Audit screen says."""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Protocol, TypeVar

from memory_core.app.errors import AppError

T = TypeVar("T")


class AuditResult(StrEnum):
    APPLIED = "applied"
    REFUSED = "refused"
    FAILED = "failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditRecord:
    """What is about to be done: `action` names it (an AuditEntry.Action value), `target` what it touches."""

    action: str
    actor: str
    target: str = ""
    message: str = ""
    thread_id: str = ""
    before: Mapping[str, Any] = field(default_factory=dict)
    after: Mapping[str, Any] = field(default_factory=dict)


class AuditUnavailable(AppError):
    """The audit log could not record an entry."""

    @classmethod
    def refusing(cls, intent: AuditRecord, reason: str) -> AuditUnavailable:
        """The write `intent` names was refused: its intent could not be recorded, for `reason`."""
        what = "export" if intent.action.endswith("export") else intent.action.replace("_", " ")
        return cls(
            f"the {what} was not written: the dashboard's audit log cannot record it ({reason}; check that "
            "its database is writable and migrated: DASHBOARD_DB_PATH / DATABASE_URL)"
        )


class AuditSink(Protocol):
    def begin(self, intent: AuditRecord) -> Hashable:
        """Record the intent and return what names it; AuditUnavailable when it cannot be recorded."""
        ...

    def end(self, ticket: Hashable, result: AuditResult, *, message: str, after: Mapping[str, Any]) -> None:
        """Record the outcome of the intent `ticket` names; AuditUnavailable when it cannot be recorded."""
        ...


class NoAuditSink:
    """The sink of an entry point that has no audit log (`python -m memory_core`): no write can begin."""

    def begin(self, intent: AuditRecord) -> Hashable:
        raise AuditUnavailable(
            f"refused, nothing written: this entry point has no audit log to record the "
            f"{intent.action.replace('_', ' ')} (run it as `mycel-memory`, which records in the dashboard's)"
        )

    def end(self, ticket: Hashable, result: AuditResult, *, message: str, after: Mapping[str, Any]) -> None:
        raise AuditUnavailable("this entry point has no audit log")


@dataclass(frozen=True, slots=True)
class Audited(Generic[T]):
    """A write that was made: its result, and why its outcome is missing from the log (None when recorded)."""

    value: T
    unrecorded: str | None = None

    def note(self) -> str | None:
        """What to tell the person who asked for the write when its outcome is not in the log."""
        if self.unrecorded is None:
            return None
        return (
            f"the write was made, but the audit log could not record its outcome ({self.unrecorded}); "
            "the Audit screen shows it as 'outcome unknown'"
        )


def audited_write(
    sink: AuditSink,
    intent: AuditRecord,
    write: Callable[[], T],
    *,
    outcome: Callable[[T], tuple[str, Mapping[str, Any]]],
    refusals: tuple[type[Exception], ...] = (),
) -> Audited[T]:
    """Record `intent`, then `write()`, then its outcome (`outcome(value)` gives the message and the state
    after). AuditUnavailable from the intent means nothing was written; a refusal (one of `refusals`) or a
    failure is recorded as such and raised again."""
    ticket = sink.begin(intent)
    try:
        value = write()
    except refusals as exc:
        _end_quietly(sink, ticket, AuditResult.REFUSED, str(exc))
        raise
    except Exception as exc:
        _end_quietly(sink, ticket, AuditResult.FAILED, f"{type(exc).__name__}: {exc}")
        raise
    message, after = outcome(value)
    try:
        sink.end(ticket, AuditResult.APPLIED, message=message, after=after)
    except AuditUnavailable as exc:
        return Audited(value, str(exc))
    return Audited(value)


def _end_quietly(sink: AuditSink, ticket: Hashable, result: AuditResult, message: str) -> None:
    # The write's own error is what the caller sees; an outcome that cannot be recorded stays "unknown".
    try:
        sink.end(ticket, result, message=message, after={})
    except AuditUnavailable:
        return


def shell_actor() -> str:
    """Who runs a command from a shell, as the audit log names them."""
    return f"cli:{os.environ.get('USER') or getpass.getuser()}"

"""Where an audited write leaves its trace: a sink the caller supplies (the dashboard's audit log for the
`mycel-memory` entry point), so the engine records without knowing Django. A write whose entry the sink
cannot record is not made."""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory_core.app.errors import AppError


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditRecord:
    """One audit row: `action` names what was done (an AuditEntry.Action value), `failed` its failure."""

    action: str
    actor: str
    target: str
    message: str
    after: Mapping[str, Any] = field(default_factory=dict)
    thread_id: str = ""
    failed: str | None = None


class AuditUnavailable(AppError):
    """The sink could not record an entry: the write it was for is not made."""


class AuditSink(Protocol):
    def record(self, entry: AuditRecord) -> None:
        """Keep `entry`, or raise AuditUnavailable saying why it could not."""


class NoAuditSink:
    """The sink of an entry point that has no audit log (`python -m memory_core`): refuses every write."""

    def record(self, entry: AuditRecord) -> None:
        if entry.failed:
            return  # the write failed already; that is the error the user sees
        raise AuditUnavailable(
            f"the {entry.action.replace('_', ' ')} was not written: this entry point has no audit log "
            "(run it as `mycel-memory`, which records in the dashboard's)"
        )


def shell_actor() -> str:
    """Who runs a command from a shell, as the audit log names them."""
    return f"cli:{os.environ.get('USER') or getpass.getuser()}"

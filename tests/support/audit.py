"""An audit sink that keeps its entries in a list: for tests of the engine's command line that do not
need the dashboard's database (the dashboard's own log, mycel_dashboard/web/audit.py, has its tests)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from memory_core.app.audit import AuditRecord, AuditResult


@dataclass
class KeptAuditLog:
    """Every intent in order, each with its outcome (None while unknown)."""

    entries: list[tuple[AuditRecord, AuditResult | None]] = field(default_factory=list)

    def begin(self, intent: AuditRecord) -> Hashable:
        self.entries.append((intent, None))
        return len(self.entries) - 1

    def end(self, ticket: Hashable, result: AuditResult, *, message: str, after: Mapping[str, Any]) -> None:
        index = int(str(ticket))
        intent, _ = self.entries[index]
        self.entries[index] = (replace(intent, message=message, after=dict(after) or intent.after), result)

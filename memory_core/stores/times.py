"""Mycel's timestamp spellings (reference §9): epoch floats, naive local ISO, SQLite UTC text."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


def from_epoch(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(float(value), tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def from_local_iso(value: Any) -> datetime | None:
    """Naive local ISO text (`datetime.now().isoformat()`), kept naive: Mycel recorded no zone."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def from_sqlite_utc(value: Any) -> datetime | None:
    """SQLite's CURRENT_TIMESTAMP / datetime('now'): UTC without a zone marker."""
    found = from_local_iso(value)
    if found is None:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)

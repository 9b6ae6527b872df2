"""The retention page's rows, from the very dict `mycel-memory retention --json` prints (one truth)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# A thread may drop thousands of checkpoints: the page lists the first ones, --json has them all.
SHOWN_IDS = 30


@dataclass(frozen=True, slots=True)
class KeptGroup:
    reason: str
    count: int
    ids: tuple[str, ...]  # the first SHOWN_IDS


@dataclass(frozen=True, slots=True)
class RetentionRow:
    thread_id: str
    store: str
    layout: str
    frees_bytes: int
    drops: int
    drop_ids: tuple[str, ...]  # the first SHOWN_IDS, oldest first
    keeps: tuple[KeptGroup, ...]
    unreachable: dict[str, Any]
    unreachable_count: int
    idle: bool | None


def retention_rows(data: dict[str, Any], *, sort: str) -> list[RetentionRow]:
    """Every thread that drops something, in the asked order (largest saving first by default)."""
    rows = [_row(t) for t in data["threads"] if t["drops"]]
    if sort == "thread":
        rows.sort(key=lambda r: r.thread_id)
    else:
        rows.sort(key=lambda r: (r.frees_bytes, r.thread_id), reverse=sort == "-frees")
    return rows


def _row(t: dict[str, Any]) -> RetentionRow:
    groups: dict[str, list[str]] = {}
    for kept in t["keeps"]:
        groups.setdefault(kept["reason"], []).append(kept["checkpoint_id"])
    lost = t["unreachable"]
    return RetentionRow(
        thread_id=t["thread_id"],
        store=t["store"],
        layout=t["layout"],
        frees_bytes=t["frees_bytes"],
        drops=len(t["drops"]),
        drop_ids=tuple(t["drops"][:SHOWN_IDS]),
        keeps=tuple(KeptGroup(why, len(ids), tuple(ids[:SHOWN_IDS])) for why, ids in groups.items()),
        unreachable=lost,
        unreachable_count=len(lost["file_operations"]) + len(lost["run_events"]) + len(lost["summaries"]),
        idle=t["idle"],
    )

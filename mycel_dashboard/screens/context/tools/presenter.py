"""The Tool-output pressure screen's rows (Django-free): `tools --json`'s very dict, with the links the page
adds: each heatmap cell and table row to the thread's timeline filtered to that tool, each re-request to
the call pages of the clear and of the ask-again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlencode

from memory_core.app.tool_pages import THREAD_TOTALS_SHOWN
from memory_core.ids import short_id

TOP_THREADS = THREAD_TOTALS_SHOWN  # heatmap columns by thread: the threads that sent the most characters
UNKNOWN_DAY = "unknown day"
COUNTS = ("sent_chars", "chars_removed", "results", "trimmed", "cleared", "spills", "re_requests")


class HeatBy(StrEnum):
    THREAD = "thread"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class Link:
    thread_id: str
    url: str  # "" when the id cannot be linked


@dataclass(frozen=True, slots=True)
class Cell:
    """One tool x (thread or day): its counts, colour value and the calls behind it."""

    tool: str
    column: str  # the thread id or the day ("" for an unknown day)
    label: str  # the column's label on the chart
    share: float  # the tool's characters over every character sent in that thread or day
    counts: dict[str, int]
    links: tuple[Link, ...]  # the threads' timelines filtered to the tool
    anchor: str  # the fallback table row

    @property
    def url(self) -> str:
        """Where a click goes: the one thread's calls, else the table row listing every thread's."""
        if len(self.links) == 1 and self.links[0].url:
            return self.links[0].url
        return f"#{self.anchor}"


@dataclass(frozen=True, slots=True)
class Heatmap:
    by: HeatBy
    tools: list[str]
    columns: list[tuple[str, str]]  # (key, label)
    rows: list[list[Cell | None]]  # per tool, per column
    hidden_threads: int  # threads beyond the top ones, left out of the chart

    @property
    def cells(self) -> list[Cell]:
        return [cell for row in self.rows for cell in row if cell is not None]


@dataclass(frozen=True, slots=True)
class AskRow:
    ask: dict[str, Any]
    thread_url: str
    cleared_call_url: str
    asked_call_url: str


def timeline_url(thread_url: str, tool: str, counts: dict[str, int]) -> str:
    """The thread's timeline filtered to the tool; to what pruning changed when it changed any of them."""
    if not thread_url:
        return ""
    query = {"tool": tool, "show": "changed"} if counts["trimmed"] or counts["cleared"] else {"tool": tool}
    return f"{thread_url}?{urlencode(query)}"


def heatmap(report: dict[str, Any], by: HeatBy, *, thread_url: Callable[[str], str]) -> Heatmap:
    """Tool x thread (the threads that sent the most) or tool x day, from the report's very figures."""
    tools = [t["tool"] for t in report["tools"]]
    if by is HeatBy.THREAD:
        ranked = [t["thread_id"] for t in report["thread_totals"]]
        keys = ranked[:TOP_THREADS]
        hidden = report["thread_totals_count"] - len(keys)
        columns = list(zip(keys, unique_labels([short_id(k) for k in keys]), strict=True))
    else:
        keys = [d["day"] or "" for d in report["day_totals"]]
        hidden = 0
        columns = [(k, k or UNKNOWN_DAY) for k in keys]
    position = {key: n for n, (key, _) in enumerate(columns)}
    rows: list[list[Cell | None]] = []
    for r, tool in enumerate(report["tools"]):
        row: list[Cell | None] = [None] * len(columns)
        entries = tool["threads"] if by is HeatBy.THREAD else tool["days"]
        for entry in entries:
            key = entry["thread_id"] if by is HeatBy.THREAD else entry["day"] or ""
            c = position.get(key)
            if c is None:
                continue
            counts = {name: entry[name] for name in COUNTS}
            ids = [key] if by is HeatBy.THREAD else entry["thread_ids"]
            row[c] = Cell(
                tool=tool["tool"],
                column=key,
                label=columns[c][1],
                share=entry["thread_sent_share"] if by is HeatBy.THREAD else entry["day_sent_share"],
                counts=counts,
                links=tuple(Link(i, timeline_url(thread_url(i), tool["tool"], counts)) for i in ids),
                anchor=f"cell-{r}-{c}",
            )
        rows.append(row)
    return Heatmap(by=by, tools=tools, columns=columns, rows=rows, hidden_threads=hidden)


def unique_labels(labels: list[str]) -> list[str]:
    """Labels a chart axis can tell apart (two long ids can shorten alike)."""
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def tool_sections(report: dict[str, Any], *, thread_url: Callable[[str], str]) -> list[dict[str, Any]]:
    """Each tool's figures with its threads, each linked to its filtered timeline."""
    return [
        {
            "data": tool,
            "threads": [
                (t, timeline_url(thread_url(t["thread_id"]), tool["tool"], t)) for t in tool["threads"]
            ],
        }
        for tool in report["tools"]
    ]


def ask_rows(
    report: dict[str, Any], *, thread_url: Callable[[str], str], call_url: Callable[[str, int], str]
) -> list[AskRow]:
    return [
        AskRow(
            ask=ask,
            thread_url=thread_url(ask["thread_id"]),
            cleared_call_url=call_url(ask["thread_id"], ask["cleared_call"]),
            asked_call_url=call_url(ask["thread_id"], ask["asked_call"]),
        )
        for ask in report["re_requests"]
    ]

"""The Tool-output pressure screen's document, summed thread by thread: the fleet's sums, and of each long
list only the entries a page shows with the list's length. A sum over a million threads holds the tools'
sums and a few hundred rows, never the threads; `mycel-memory tools --json` prints every list whole
(memory_core/app/tools.py, economics' fleet_pressure).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from memory_core.economics.tool_pressure import UNIT, ReRequest, Tally, ThreadPressure, share
from memory_core.leaders import Leaders

# What a page shows of the report's long lists (`tools --json` has them whole, and each one's length).
THREAD_TOTALS_SHOWN = 30  # the threads that sent the most: the heatmap's columns
TOOL_THREADS_SHOWN = 50  # per tool, its threads that sent the most of it
DAY_THREADS_SHOWN = 20  # per tool and day, the threads behind the cell
RE_REQUESTS_SHOWN = 100


@dataclass(slots=True)
class _Day:
    total: Tally = field(default_factory=Tally)
    thread_ids: Leaders[str] = field(default_factory=lambda: Leaders(DAY_THREADS_SHOWN))


@dataclass(slots=True)
class _Tool:
    total: Tally = field(default_factory=Tally)
    # (thread, its tally of the tool, every character the thread sent), most of the tool first
    threads: Leaders[tuple[str, Tally, int]] = field(default_factory=lambda: Leaders(TOOL_THREADS_SHOWN))
    days: dict[str | None, _Day] = field(default_factory=dict)


class ToolPages:
    """The screen's document, summed thread by thread."""

    def __init__(self) -> None:
        self.threads = 0
        self.calls = 0
        self.sent = 0
        self.thread_totals: Leaders[tuple[str, int]] = Leaders(THREAD_TOTALS_SHOWN)
        self.sent_by_day: dict[str | None, int] = {}
        self.tools: dict[str, _Tool] = {}
        self.re_requests: list[ReRequest] = []
        self.re_request_count = 0

    def add(self, thread: ThreadPressure) -> None:
        tid = thread.thread_id
        self.threads += 1
        self.calls += thread.calls
        self.sent += thread.sent_chars
        self.thread_totals.add((-thread.sent_chars, tid), (tid, thread.sent_chars))
        for day, chars in thread.sent_by_day.items():
            self.sent_by_day[day] = self.sent_by_day.get(day, 0) + chars
        for name, tally in thread.by_tool.items():
            tool = self.tools.setdefault(name, _Tool())
            tool.total.add(tally)
            tool.threads.add((-tally.sent_chars, tid), (tid, tally, thread.sent_chars))
        for (name, day), tally in thread.by_tool_day.items():
            found = self.tools[name].days.setdefault(day, _Day())
            found.total.add(tally)
            found.thread_ids.add((-thread.by_tool[name].sent_chars, tid), tid)
        self.re_request_count += len(thread.re_requests)
        self.re_requests.extend(thread.re_requests[: max(0, RE_REQUESTS_SHOWN - len(self.re_requests))])

    def add_all(self, threads: Iterable[ThreadPressure]) -> ToolPages:
        for thread in threads:
            self.add(thread)
        return self

    def page(self) -> dict[str, Any]:
        """`tools --json`'s document with each long list cut to its first entries, `<list>_count` its length."""
        return {
            "unit": UNIT,
            "threads": self.threads,
            "calls": self.calls,
            "sent_chars": self.sent,
            "thread_totals": [
                {"thread_id": t, "sent_chars": chars} for t, chars in self.thread_totals.values()
            ],
            "thread_totals_count": self.thread_totals.count,
            "day_totals": [{"day": day, "sent_chars": chars} for day, chars in _by_day(self.sent_by_day)],
            "tools": [
                self._tool(name, tool)
                for name, tool in sorted(self.tools.items(), key=lambda kv: (-kv[1].total.sent_chars, kv[0]))
            ],
            "re_requests": [ask.as_json() for ask in self.re_requests],
            "re_requests_count": self.re_request_count,
        }

    def _tool(self, name: str, tool: _Tool) -> dict[str, Any]:
        return {
            "tool": name,
            "sent_share": share(tool.total.sent_chars, self.sent),
            **tool.total.as_json(),
            "threads": [
                {"thread_id": tid, "thread_sent_share": share(tally.sent_chars, sent), **tally.as_json()}
                for tid, tally, sent in tool.threads.values()
            ],
            "threads_count": tool.threads.count,
            "days": [
                {
                    "day": day,
                    "day_sent_share": share(found.total.sent_chars, self.sent_by_day.get(day, 0)),
                    **found.total.as_json(),
                    "thread_ids": found.thread_ids.values(),
                    "thread_ids_count": found.thread_ids.count,
                }
                for day, found in _by_day(tool.days)
            ],
        }


def _by_day(values: dict[str | None, Any]) -> list[tuple[str | None, Any]]:
    """Days in order, the unknown day last."""
    return sorted(values.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))

"""Which tools fill the window: per tool name, what its results took of every request Mycel sent, what
pruning removed from them, which were spilled, and how often the agent asked again for what was cleared.

A request is the record's call (memory_core.call_record.calls): the summary in front, then messages[cut:i]
pruned at that call (memory_core.call_inputs: a result protect_recent shields goes whole). Every size is
in characters of message content as Mycel's estimate counts them (memory_core.tokens.content_chars; the
estimate is that number / 2), so `sent_share` is one tool's characters over every character sent, the
summary included and the system prompt (never stored) left out. A result's tool is the name of the AI
message's tool call with its `tool_call_id` (a spilled result loses its own `name`).

A re-request is a tool call, in the answer to a call whose request held an earlier result already
cleared, that asks for the same thing again: the same tool with the same arguments (canonical JSON), or
a read-like tool on the same path. The answer to the very call that first sent the result cleared
counts: that model had only the marker. Each ask is counted once, against the cleared result's tool, and
the content is then back in the window, so only a new clear makes the next ask a re-request.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_core.call_inputs import CallInput, call_inputs
from memory_core.call_record.calls import RecordedCall, sent_size
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType
from memory_core.spill_notice import spill_notice

UNIT = "characters of message content as Mycel's estimate counts them (the estimate is this / 2)"
UNKNOWN_TOOL = "(no tool call)"  # a result no AI message's tool call names

# Mycel main's and dev's file readers, and the argument naming the file (reference mycel.md §5).
READ_TOOLS = frozenset({"Read", "read_file"})
PATH_ARGS = ("file_path", "path")


@dataclass(slots=True)
class Tally:
    """What one tool's results did, over some calls (a thread, a day, the fleet)."""

    sent_chars: int = 0  # characters of its results as sent, summed over the calls
    chars_removed: int = 0  # characters pruning took from them, summed over the calls
    results: int = 0  # distinct results sent at least once
    trimmed: int = 0  # distinct results sent soft-trimmed at least once
    cleared: int = 0  # distinct results sent hard-cleared at least once
    spills: int = 0  # results Mycel spilled to a file
    re_requests: int = 0  # asks again after a clear

    def add(self, other: Tally) -> None:
        self.sent_chars += other.sent_chars
        self.chars_removed += other.chars_removed
        self.results += other.results
        self.trimmed += other.trimmed
        self.cleared += other.cleared
        self.spills += other.spills
        self.re_requests += other.re_requests

    def as_json(self) -> dict[str, int]:
        return {
            "sent_chars": self.sent_chars,
            "chars_removed": self.chars_removed,
            "results": self.results,
            "trimmed": self.trimmed,
            "cleared": self.cleared,
            "spills": self.spills,
            "re_requests": self.re_requests,
        }


@dataclass(frozen=True, slots=True)
class ReRequest:
    """The agent asked again for a result it had been sent cleared."""

    thread_id: str
    tool: str  # the cleared result's tool (the one counted)
    asked_tool: str
    kind: str  # "same arguments" or "re-read of the file"
    cleared_index: int  # the earlier result's message index
    cleared_call: int  # the first call whose request held it cleared
    asked_call: int  # the call whose answer asked again
    asked_index: int  # that answer's message index

    def as_json(self) -> dict[str, Any]:
        return {
            "thread_id": self.thread_id,
            "tool": self.tool,
            "asked_tool": self.asked_tool,
            "kind": self.kind,
            "cleared_index": self.cleared_index,
            "cleared_call": self.cleared_call,
            "asked_call": self.asked_call,
            "asked_index": self.asked_index,
        }


@dataclass(frozen=True, slots=True)
class ThreadPressure:
    """One thread's per-tool reduction: small, so a fleet of them is kept per head."""

    thread_id: str
    calls: int
    sent_chars: int  # every character sent over the thread's calls
    sent_by_day: Mapping[str | None, int]
    by_tool: Mapping[str, Tally]
    by_tool_day: Mapping[tuple[str, str | None], Tally]  # day: of the call (UTC), None when unknown
    re_requests: tuple[ReRequest, ...]


def thread_pressure_json(thread: ThreadPressure) -> dict[str, Any]:
    """One thread's reduction as the fleet index keeps it (its id left out: a row names its thread)."""
    return {
        "calls": thread.calls,
        "sent_chars": thread.sent_chars,
        "sent_by_day": [[day, chars] for day, chars in thread.sent_by_day.items()],
        "by_tool": [[tool, tally.as_json()] for tool, tally in thread.by_tool.items()],
        "by_tool_day": [[tool, day, tally.as_json()] for (tool, day), tally in thread.by_tool_day.items()],
        "re_requests": [
            {k: v for k, v in ask.as_json().items() if k != "thread_id"} for ask in thread.re_requests
        ],
    }


def thread_pressure_of(thread_id: str, data: dict[str, Any]) -> ThreadPressure:
    """The reduction `thread_pressure_json` kept."""
    return ThreadPressure(
        thread_id=thread_id,
        calls=data["calls"],
        sent_chars=data["sent_chars"],
        sent_by_day={day: chars for day, chars in data["sent_by_day"]},
        by_tool={tool: Tally(**tally) for tool, tally in data["by_tool"]},
        by_tool_day={(tool, day): Tally(**tally) for tool, day, tally in data["by_tool_day"]},
        re_requests=tuple(ReRequest(thread_id=thread_id, **ask) for ask in data["re_requests"]),
    )


def tool_names(messages: Sequence[Message]) -> dict[str, tuple[str, Mapping[str, Any]]]:
    """Each tool call id's (tool name, arguments), from the AI messages that made the calls."""
    named: dict[str, tuple[str, Mapping[str, Any]]] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id and call.id not in named:
                named[call.id] = (call.name, call.args)
    return named


def canonical_args(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def ask_keys(name: str, args: Mapping[str, Any]) -> tuple[tuple[str, ...], ...]:
    """What a tool call asks for: its tool and arguments, and for a reader the file it reads."""
    keys: tuple[tuple[str, ...], ...] = (("same arguments", name, canonical_args(args)),)
    if name in READ_TOOLS:
        path = next((args[k] for k in PATH_ARGS if isinstance(args.get(k), str) and args[k]), None)
        if path is not None:
            keys += (("re-read of the file", path),)
    return keys


def thread_pressure(
    thread_id: str,
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
    settings: MemorySettings,
    *,
    day_of: Callable[[str | None], str | None],
) -> ThreadPressure:
    """The thread's tools over its recorded calls; `settings` are the pruning settings the record used
    (its configured ones) and `day_of` turns a call's checkpoint id into its UTC day."""
    inputs = {c.index: c for c in call_inputs(messages, settings)}
    named = tool_names(messages)
    results = [j for j, m in enumerate(messages) if m.type is MessageType.TOOL]
    tool_of = {j: _tool_of(messages[j], named) for j in results}
    by_tool_positions: dict[str, list[int]] = {}
    for j in results:
        by_tool_positions.setdefault(tool_of[j], []).append(j)
    walk = _Walk(thread_id, messages, tool_of, by_tool_positions, named)
    for call in calls:
        found = inputs.get(call.index)
        if found is not None:
            walk.call(call, found, day_of(call.checkpoint_id))
    walk.spills(calls, day_of)
    return walk.result(len(calls))


def _tool_of(message: Message, named: Mapping[str, tuple[str, Mapping[str, Any]]]) -> str:
    if message.tool_call_id and message.tool_call_id in named:
        return named[message.tool_call_id][0]
    return message.name or UNKNOWN_TOOL


@dataclass
class _Walk:
    """The calls of one thread, oldest first, folded into tallies."""

    thread_id: str
    messages: Sequence[Message]
    tool_of: Mapping[int, str]
    positions: Mapping[str, list[int]]  # each tool's result indexes, ascending
    named: Mapping[str, tuple[str, Mapping[str, Any]]]
    sent_chars: int = 0
    sent_by_day: dict[str | None, int] = field(default_factory=dict)
    by_tool: dict[str, Tally] = field(default_factory=dict)
    by_tool_day: dict[tuple[str, str | None], Tally] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)  # results sent at least once
    pending: list[int] | None = None  # results pruning changes, not yet sent changed (ascending)
    open_clears: dict[tuple[str, ...], tuple[int, int]] = field(default_factory=dict)  # key -> (index, call)
    asks: list[ReRequest] = field(default_factory=list)
    prefix: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)  # raw, pruned sums

    def _tally(self, tool: str, day: str | None) -> tuple[Tally, Tally]:
        return (
            self.by_tool.setdefault(tool, Tally()),
            self.by_tool_day.setdefault((tool, day), Tally()),
        )

    def _sums(self, tool: str, numbers: CallInput) -> tuple[list[int], list[int]]:
        if tool not in self.prefix:
            raw, pruned = [0], [0]
            for j in self.positions[tool]:
                raw.append(raw[-1] + numbers.numbers.raw_chars[j])
                pruned.append(pruned[-1] + numbers.numbers.pruned_chars[j])
            self.prefix[tool] = (raw, pruned)
        return self.prefix[tool]

    def call(self, call: RecordedCall, numbers: CallInput, day: str | None) -> None:
        start = call.summary.compact_up_to_index if call.summary is not None else 0
        end = call.index
        chars, _, _ = sent_size(numbers, call.summary, lambda _text: 0)
        self.sent_chars += chars
        self.sent_by_day[day] = self.sent_by_day.get(day, 0) + chars
        t = numbers.numbers
        whole = {j for j in numbers.protected if start <= j < end}
        for tool, positions in self.positions.items():
            lo, hi = bisect_left(positions, start), bisect_left(positions, end)
            if lo == hi:
                continue
            raw, pruned = self._sums(tool, numbers)
            sent = pruned[hi] - pruned[lo]
            sent += sum(t.raw_chars[j] - t.pruned_chars[j] for j in whole if self.tool_of.get(j) == tool)
            total, per_day = self._tally(tool, day)
            for tally in (total, per_day):
                tally.sent_chars += sent
                tally.chars_removed += raw[hi] - raw[lo] - sent
            for j in positions[lo:hi]:
                if j not in self.seen:
                    self.seen.add(j)
                    total.results += 1
                    per_day.results += 1
        # Results sent pruned at this call for the first time: counted, and a clear opens a re-request.
        if self.pending is None:
            self.pending = [
                j for j, (soft, hard) in enumerate(zip(t.soft, t.hard, strict=True)) if soft or hard
            ]
        lo, hi = bisect_left(self.pending, start), bisect_left(self.pending, end)
        first = [j for j in self.pending[lo:hi] if j not in whole]
        if first:
            done = set(first)
            self.pending = [j for j in self.pending if j not in done]
        for j in first:
            total, per_day = self._tally(self.tool_of[j], day)
            if t.hard[j]:
                total.cleared += 1
                per_day.cleared += 1
                self._open(j, call.call)
            else:
                total.trimmed += 1
                per_day.trimmed += 1
        self._asks(call, day)

    def _open(self, index: int, call_number: int) -> None:
        call_id = self.messages[index].tool_call_id
        if not call_id or call_id not in self.named:
            return
        name, args = self.named[call_id]
        for key in ask_keys(name, args):
            self.open_clears[key] = (index, call_number)

    def _asks(self, call: RecordedCall, day: str | None) -> None:
        for tool_call in self.messages[call.index].tool_calls:
            for key in ask_keys(tool_call.name, tool_call.args):
                if key not in self.open_clears:
                    continue
                index, cleared_call = self.open_clears[key]
                tool = self.tool_of[index]
                self.asks.append(
                    ReRequest(
                        thread_id=self.thread_id,
                        tool=tool,
                        asked_tool=tool_call.name,
                        kind=key[0],
                        cleared_index=index,
                        cleared_call=cleared_call,
                        asked_call=call.call,
                        asked_index=call.index,
                    )
                )
                for tally in self._tally(tool, day):
                    tally.re_requests += 1
                # The content is back in the window: only a new clear opens it again.
                name, args = self.named[self.messages[index].tool_call_id or ""]
                for opened in ask_keys(name, args):
                    self.open_clears.pop(opened, None)
                break

    def spills(self, calls: Sequence[RecordedCall], day_of: Callable[[str | None], str | None]) -> None:
        indexes = [c.index for c in calls]
        for j, tool in self.tool_of.items():
            if spill_notice(self.messages[j].text) is None:
                continue
            # The day of the first call that had it in its input (None: no call did).
            k = bisect_left(indexes, j + 1)
            day = day_of(calls[k].checkpoint_id) if k < len(calls) else None
            for tally in self._tally(tool, day):
                tally.spills += 1

    def result(self, calls: int) -> ThreadPressure:
        return ThreadPressure(
            thread_id=self.thread_id,
            calls=calls,
            sent_chars=self.sent_chars,
            sent_by_day=dict(self.sent_by_day),
            by_tool=dict(self.by_tool),
            by_tool_day=dict(self.by_tool_day),
            re_requests=tuple(self.asks),
        )


@dataclass(frozen=True, slots=True)
class ToolLine:
    """One tool across the fleet, with the threads and days behind it (most sent first / by day)."""

    tool: str
    total: Tally
    sent_share: float
    threads: tuple[tuple[str, Tally], ...]
    days: tuple[tuple[str | None, Tally], ...]
    day_threads: Mapping[str | None, tuple[str, ...]]  # the threads behind each day


@dataclass(frozen=True, slots=True)
class FleetPressure:
    threads: int
    calls: int
    sent_chars: int
    sent_by_thread: Mapping[str, int]
    sent_by_day: Mapping[str | None, int]
    tools: tuple[ToolLine, ...]  # most characters sent first
    re_requests: tuple[ReRequest, ...]


def share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def fleet_pressure(threads: Iterable[ThreadPressure]) -> FleetPressure:
    """The fleet's tools: every thread's tallies summed, each tool's share of every character sent."""
    totals: dict[str, Tally] = {}
    per_thread: dict[str, dict[str, Tally]] = {}
    per_day: dict[str, dict[str | None, Tally]] = {}
    day_threads: dict[str, dict[str | None, list[str]]] = {}
    sent_by_thread: dict[str, int] = {}
    sent_by_day: dict[str | None, int] = {}
    asks: list[ReRequest] = []
    count = calls = 0
    for thread in threads:
        count += 1
        calls += thread.calls
        sent_by_thread[thread.thread_id] = thread.sent_chars
        for day, chars in thread.sent_by_day.items():
            sent_by_day[day] = sent_by_day.get(day, 0) + chars
        for tool, tally in thread.by_tool.items():
            totals.setdefault(tool, Tally()).add(tally)
            per_thread.setdefault(tool, {})[thread.thread_id] = tally
        for (tool, day), tally in thread.by_tool_day.items():
            per_day.setdefault(tool, {}).setdefault(day, Tally()).add(tally)
            day_threads.setdefault(tool, {}).setdefault(day, []).append(thread.thread_id)
        asks.extend(thread.re_requests)
    sent = sum(sent_by_thread.values())
    lines = [
        ToolLine(
            tool=tool,
            total=total,
            sent_share=share(total.sent_chars, sent),
            threads=tuple(sorted(per_thread[tool].items(), key=lambda kv: (-kv[1].sent_chars, kv[0]))),
            days=tuple(sorted(per_day.get(tool, {}).items(), key=lambda kv: (kv[0] is None, kv[0] or ""))),
            day_threads={
                day: _by_sent(ids, per_thread[tool]) for day, ids in day_threads.get(tool, {}).items()
            },
        )
        for tool, total in totals.items()
    ]
    lines.sort(key=lambda line: (-line.total.sent_chars, line.tool))
    return FleetPressure(
        threads=count,
        calls=calls,
        sent_chars=sent,
        sent_by_thread=sent_by_thread,
        sent_by_day=sent_by_day,
        tools=tuple(lines),
        re_requests=tuple(asks),
    )


def top_threads(report: FleetPressure, limit: int | None = None) -> list[tuple[str, int]]:
    """Threads by characters sent, most first (the heatmap's columns)."""
    ranked = sorted(report.sent_by_thread.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked if limit is None else ranked[:limit]


def _by_sent(thread_ids: list[str], tallies: Mapping[str, Tally]) -> tuple[str, ...]:
    return tuple(sorted(thread_ids, key=lambda t: (-tallies[t].sent_chars, t)))


def pressure_json(report: FleetPressure) -> dict[str, Any]:
    """`mycel-memory tools --json`, and the figures the Tool-output pressure screen shows."""
    return {
        "unit": UNIT,
        "threads": report.threads,
        "calls": report.calls,
        "sent_chars": report.sent_chars,
        "thread_totals": [
            {"thread_id": thread_id, "sent_chars": chars} for thread_id, chars in top_threads(report)
        ],
        "day_totals": [
            {"day": day, "sent_chars": chars}
            for day, chars in sorted(report.sent_by_day.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))
        ],
        "tools": [
            {
                "tool": line.tool,
                "sent_share": line.sent_share,
                **line.total.as_json(),
                "threads": [
                    {
                        "thread_id": thread_id,
                        "thread_sent_share": share(tally.sent_chars, report.sent_by_thread.get(thread_id, 0)),
                        **tally.as_json(),
                    }
                    for thread_id, tally in line.threads
                ],
                "days": [
                    {
                        "day": day,
                        "day_sent_share": share(tally.sent_chars, report.sent_by_day.get(day, 0)),
                        **tally.as_json(),
                        "thread_ids": list(line.day_threads.get(day, ())),
                    }
                    for day, tally in line.days
                ],
            }
            for line in report.tools
        ],
        "re_requests": [ask.as_json() for ask in report.re_requests],
    }

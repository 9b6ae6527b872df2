"""The Thread screen's timeline and checkpoint rail, assembled from memory_core results (no Django).

The timeline is a list of entries in stored order, or in the order the model received them; each tool
result carries the badges that say what Mycel's memory did to it and the config value responsible. A
filter narrows it to what memory changed, to errors or to one tool (pages then count matches only); left
unfiltered, long runs of messages memory left alone collapse to their first and last.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from memory_core import figures
from memory_core.messages import Message, MessageType
from memory_core.notices import NOTICE_LABELS, NoticeKind, notice_kind
from memory_core.pruning import PruneAction, PruneDecision, PruningResult
from memory_core.records import CheckpointRow, RunEvent, SummaryRow
from memory_core.spill_notice import spill_notice

PAGE_SIZE = 200  # messages per timeline page: a 2,000-message thread renders ten light pages
COLLAPSE_CHARS = 1200  # longer texts start collapsed
PREVIEW_CHARS = 600
INLINE_FULL_CHARS = 20_000  # longer texts load on demand instead of riding along in the page
COLLAPSE_RUN = 6  # this many consecutive messages memory left alone fold to their first and last


class View(StrEnum):
    STORED = "stored"
    SENT = "sent"


class BadgeKind(StrEnum):
    UNCHANGED = "unchanged"
    PROTECTED = "protected"
    SOFT_TRIMMED = "soft_trimmed"
    HARD_CLEARED = "hard_cleared"
    SPILLED = "spilled"
    SUMMARISED = "summarised"


class Show(StrEnum):
    """What a timeline filter keeps (the `show` URL parameter)."""

    CHANGED = "changed"
    TRIMMED = "trimmed"
    CLEARED = "cleared"
    SUMMARISED = "summarised"
    ERRORS = "errors"


SHOW_LABELS = {
    Show.CHANGED: "trimmed, cleared or summarised",
    Show.TRIMMED: "soft-trimmed",
    Show.CLEARED: "hard-cleared",
    Show.SUMMARISED: "summarised",
    Show.ERRORS: "errors",
}


@dataclass(frozen=True, slots=True)
class Badge:
    kind: BadgeKind
    label: str
    rule: str  # the config value responsible, in plain words
    link: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCallView:
    id: str | None
    name: str
    args_json: str


@dataclass(frozen=True, slots=True)
class SummaryCard:
    active: SummaryRow
    history: tuple[SummaryRow, ...]  # earlier, inactive summaries, newest first
    applied: bool  # False when Mycel would skip it (index beyond the message list)


@dataclass(frozen=True, slots=True)
class NoticeView:
    """A message Mycel dev wrote into the history itself, with what it means for the model."""

    kind: NoticeKind
    label: str
    explanation: str

    @property
    def as_user_turn(self) -> bool:
        return self.kind is not NoticeKind.RECOVERY_SUMMARY


_AS_USER_TURN = (
    "Written by Mycel dev, not the owner. It is stored as a user turn, so the model gets it as one at every "
    "later call, and it counts in the estimate."
)
_NOTICE_EXPLANATIONS = {
    NoticeKind.COMPACT: "Mycel dev compacted the history before a call of this run.",
    NoticeKind.COMPACT_BREAKER: (
        "Three automatic compactions in a row failed, so Mycel dev stopped compacting this thread."
    ),
    NoticeKind.PROMPT_TOO_LONG: "The provider refused the prompt as too long and recovery by compaction failed.",
    NoticeKind.OUTPUT_LIMIT: "The reply hit the output token limit; Mycel dev asked the model to go on.",
}
RECOVERY_SUMMARY_EXPLANATION = (
    "Summary written by prompt-too-long recovery: Mycel dev replaced the stored history with this summary and "
    "the messages it kept, so the older history survives only in earlier checkpoints. It is sent as a system "
    "message in the history; it is not Mycel's system prompt (that is never stored)."
)


def notice_of(message: Message) -> NoticeView | None:
    """How a screen shows one of Mycel dev's own notices (or its recovery summary); None for other messages."""
    kind = notice_kind(message)
    if kind is NoticeKind.NONE:
        return None
    if kind is NoticeKind.RECOVERY_SUMMARY:
        return NoticeView(kind, NOTICE_LABELS[kind], RECOVERY_SUMMARY_EXPLANATION)
    explanation = _NOTICE_EXPLANATIONS[kind]
    boundary = (message.metadata or {}).get("compact_boundary_index")
    if kind is NoticeKind.COMPACT and isinstance(boundary, int) and not isinstance(boundary, bool):
        explanation += f" Its boundary (compact_boundary_index) was {figures.count(boundary)}."
    return NoticeView(kind, NOTICE_LABELS[kind], f"{explanation} {_AS_USER_TURN}")


@dataclass(frozen=True, slots=True)
class TimelineEntry:
    kind: str  # human, ai, tool, system, other, or "summary" for the card at the compaction boundary
    index: int | None  # position in the stored list
    text: str = ""
    length: int = 0
    tool_calls: tuple[ToolCallView, ...] = ()
    tool_name: str | None = None
    tool_call_id: str | None = None
    badges: tuple[Badge, ...] = ()
    notes: tuple[str, ...] = ()
    call_number: int | None = None  # model call that produced this AI message
    input_tokens: int | None = None
    other_blocks: int = 0  # non-text content blocks (tool_use, images)
    status: str | None = None
    card: SummaryCard | None = None
    error: str | None = None  # why this message counts as an error (its status, or how its text starts)
    run_error: str | None = None  # the error that ended the run right after this message (events.db)
    collapse_opens: int = 0  # this entry opens a folded run of that many unchanged messages
    collapse_closes: bool = False  # and this one is the run's last folded message
    notice: NoticeView | None = None  # one of Mycel dev's own notices, shown as such

    @property
    def is_error(self) -> bool:
        return self.error is not None or self.run_error is not None

    @property
    def anchor(self) -> str:
        return "summary" if self.index is None else f"msg-{self.index}"

    @property
    def collapsed(self) -> bool:
        return self.length > COLLAPSE_CHARS

    @property
    def preview(self) -> str:
        return self.text[:PREVIEW_CHARS]

    @property
    def inline_full(self) -> bool:
        return self.length <= INLINE_FULL_CHARS


_SHOWN_BADGES = {
    Show.CHANGED: frozenset({BadgeKind.SOFT_TRIMMED, BadgeKind.HARD_CLEARED, BadgeKind.SUMMARISED}),
    Show.TRIMMED: frozenset({BadgeKind.SOFT_TRIMMED}),
    Show.CLEARED: frozenset({BadgeKind.HARD_CLEARED}),
    Show.SUMMARISED: frozenset({BadgeKind.SUMMARISED}),
}
# Badges that say memory sent the message as stored: a run of such messages is what collapses.
_UNCHANGED_BADGES = frozenset({BadgeKind.UNCHANGED, BadgeKind.PROTECTED})


@dataclass(frozen=True, slots=True)
class TimelineFilter:
    """Which messages the timeline keeps: what memory did to them (`show`), the tool they ran (`tool`), or
    both; the empty filter keeps every message."""

    show: Show | None = None
    tool: str | None = None

    def __bool__(self) -> bool:
        return self.show is not None or bool(self.tool)

    @property
    def label(self) -> str:
        parts = [SHOW_LABELS[self.show]] if self.show is not None else []
        if self.tool:
            parts.append(f"tool {self.tool}")
        return " · ".join(parts)

    def matches(self, entry: TimelineEntry) -> bool:
        if self.show is Show.ERRORS and not entry.is_error:
            return False
        wanted = _SHOWN_BADGES.get(self.show) if self.show is not None else None
        if wanted is not None and not any(b.kind in wanted for b in entry.badges):
            return False
        # A tool's results and the AI messages that called it.
        return (
            not self.tool
            or entry.tool_name == self.tool
            or any(c.name == self.tool for c in entry.tool_calls)
        )


@dataclass(frozen=True, slots=True)
class Timeline:
    view: View
    entries: tuple[TimelineEntry, ...]
    page: int
    pages: int
    total: int  # stored messages
    first_index: int
    last_index: int
    boundary: int | None  # compact_up_to_index of the active summary
    counts: tuple[tuple[str, str], ...] = ()  # (badge kind, "3 soft-trimmed") under the current config
    filters: TimelineFilter = field(default_factory=TimelineFilter)
    matched: int = 0  # messages the filter kept (all of the view's when unfiltered)
    considered: int = 0  # messages in this view: the stored ones, less the summarised ones when sent
    tools: tuple[str, ...] = ()  # every tool name of the thread's results, for the tool filter

    @property
    def range_label(self) -> str:
        """What this page holds: stored positions, or (filtered) positions among the matches."""
        if self.filters:
            start = (self.page - 1) * PAGE_SIZE
            return (
                f"Matches {figures.count(start + 1)}–{figures.count(min(self.matched, start + PAGE_SIZE))} "
                f"of {figures.count(self.matched)}"
            )
        return f"Messages {self.first_index}–{self.last_index} of {figures.count(self.total)}"

    @property
    def no_match(self) -> str:
        """What an empty filtered timeline says."""
        if self.filters.tool and self.filters.tool not in self.tools:
            return f"No tool named {self.filters.tool!r} ran in this thread."
        where = "as stored" if self.view is View.STORED else "sent to the model"
        hint = ""
        if self.view is View.SENT and self.filters.show in (Show.SUMMARISED, Show.CHANGED) and self.boundary:
            hint = " Summarised messages are not sent (the model got the summary): see the stored view."
        return f"No message {where} matches {self.filters.label}.{hint}"

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def page_of(index: int) -> int:
    """The 1-based timeline page holding stored message `index`."""
    return index // PAGE_SIZE + 1


def spill_of(text: str) -> tuple[int, str] | None:
    """(bytes, path) when a tool result is Mycel's spill-buffer preview, else None."""
    notice = spill_notice(text)
    return (notice.size, notice.path) if notice else None


def tool_names_by_call_id(messages: Sequence[Message]) -> dict[str, str]:
    """Tool name per call id; spilled results lose their `name`, so it comes from the calling AI message."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.id:
                names[call.id] = call.name
    return names


def _args_json(args: Mapping[str, Any]) -> str:
    try:
        return json.dumps(args, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(dict(args))


# How tool errors and Mycel's own error texts begin ("Error: task was interrupted…", "Error code: 500…").
_ERROR_START = re.compile(
    r"\s*(?:\[?error\]?[:\s]|exception:|traceback \(most recent call last\)|<tool_use_error>)", re.I
)


def error_of(message: Message) -> str | None:
    """Why a tool result or AI message counts as an error, else None."""
    if message.type is MessageType.TOOL and message.status == "error":
        return "the tool reported status error"
    if message.type in (MessageType.TOOL, MessageType.AI) and _ERROR_START.match(message.text[:200]):
        return "its text starts like an error"
    return None


def run_failure(events: Sequence[RunEvent], run_id: str) -> str | None:
    """The error the run `run_id` ended with, from its run events; None when it recorded none."""
    for event in reversed(events):
        if event.run_id == run_id and event.event_type == "error":
            data = event.data
            text = data.get("error") if isinstance(data, Mapping) else data
            return str(text) if text else "(no error text recorded)"
    return None


def _notes(message: Message) -> tuple[str, ...]:
    notes: list[str] = []
    meta = message.metadata or {}
    for key in ("source", "notification_type"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            notes.append(f"{key}: {value}")
    if meta.get("is_steer") is True:
        notes.append("steer")
    if message.type is MessageType.OTHER and message.raw_type:
        notes.append(f"type: {message.raw_type}")
    return tuple(notes)


def pruning_badge(decision: PruneDecision, view: View) -> Badge:
    action = decision.action
    rule = decision.rule
    original = decision.original_chars
    if action is PruneAction.SOFT_TRIMMED:
        after = len(decision.message.text)
        return Badge(
            BadgeKind.SOFT_TRIMMED,
            f"soft-trimmed {figures.count(original)} → {figures.count(after)} chars",
            rule,
        )
    if action is PruneAction.HARD_CLEARED:
        return Badge(BadgeKind.HARD_CLEARED, f"hard-cleared (was {figures.count(original)} chars)", rule)
    if action is PruneAction.PROTECTED:
        step = re.search(r"AI step #(\d+)", rule)
        by = f" by AI step #{step.group(1)} from the end" if step else ""
        return Badge(BadgeKind.PROTECTED, f"protected{by}", rule)
    return Badge(BadgeKind.UNCHANGED, "unchanged", rule)


def _message_entry(
    message: Message,
    *,
    index: int,
    decision: PruneDecision | None,
    view: View,
    call_number: int | None,
    tool_names: Mapping[str, str],
    boundary: int | None,
    spill_url: Callable[[str], str],
    run_error: str | None = None,
) -> TimelineEntry:
    shown = decision.message if (view is View.SENT and decision is not None) else message
    text = shown.text
    other_blocks = 0
    if not isinstance(shown.content, str):
        other_blocks = sum(
            1 for b in shown.content if not (isinstance(b, Mapping) and b.get("type") == "text")
        )
    badges: list[Badge] = []
    tool_name = None
    if message.type is MessageType.TOOL:
        tool_name = message.name or tool_names.get(message.tool_call_id or "")
        if boundary is not None and index < boundary:
            badges.append(
                Badge(
                    BadgeKind.SUMMARISED,
                    "summarised",
                    f"behind the compaction boundary (compact_up_to_index={boundary}): the model gets the summary",
                )
            )
        spill = spill_of(message.text)
        if spill is not None:
            size, path = spill
            link = spill_url(message.tool_call_id) if message.tool_call_id else None
            badges.append(
                Badge(
                    BadgeKind.SPILLED,
                    f"spilled ({figures.size(size)} to a file)",
                    f"tools.spill_buffer: the output was over the tool's threshold; saved to {path}",
                    link,
                )
            )
        if decision is not None:
            badges.append(pruning_badge(decision, view))
    elif boundary is not None and index < boundary:
        badges.append(Badge(BadgeKind.SUMMARISED, "summarised", f"compact_up_to_index={boundary}"))
    return TimelineEntry(
        kind=message.type.value,
        index=index,
        text=text,
        length=len(text),
        tool_calls=tuple(ToolCallView(c.id, c.name, _args_json(c.args)) for c in message.tool_calls),
        tool_name=tool_name,
        tool_call_id=message.tool_call_id,
        badges=tuple(badges),
        notes=_notes(message),
        call_number=call_number,
        input_tokens=message.input_tokens,
        other_blocks=other_blocks,
        status=message.status if message.status not in (None, "success") else None,
        error=error_of(message),
        run_error=run_error,
        notice=notice_of(message),
    )


def summary_card(summaries: Sequence[SummaryRow], message_count: int) -> SummaryCard | None:
    """The active summary with its inactive predecessors; None when the thread was never compacted."""
    active = [s for s in summaries if s.is_active]
    if not active:
        return None
    # Mycel reads the newest active row; there should be exactly one.
    current = max(active, key=lambda s: (s.created_at is not None, s.created_at or 0, s.compacted_at))
    history = tuple(
        sorted(
            (s for s in summaries if s is not current),
            key=lambda s: (s.created_at is not None, s.created_at or 0, s.compacted_at),
            reverse=True,
        )
    )
    applied = 0 < current.compact_up_to_index <= message_count
    return SummaryCard(active=current, history=history, applied=applied)


def call_numbers(messages: Sequence[Message]) -> dict[int, int]:
    """Stored index of each AI message → its 1-based model call number."""
    numbers: dict[int, int] = {}
    for index, message in enumerate(messages):
        if message.type is MessageType.AI:
            numbers[index] = len(numbers) + 1
    return numbers


def build_timeline(
    messages: Sequence[Message],
    *,
    pruning: PruningResult | None,
    card: SummaryCard | None,
    view: View,
    page: int | None,
    spill_url: Callable[[str], str],
    filters: TimelineFilter | None = None,
    run_error: str | None = None,
) -> Timeline:
    """One page of the timeline, stored or as sent to the model (pruned, with the summary applied),
    narrowed by `filters`; `run_error` is the error that ended the head's run, shown on its last message."""
    filters = filters or TimelineFilter()
    total = len(messages)
    decisions = pruning.decisions if pruning is not None else None
    boundary = card.active.compact_up_to_index if card is not None and card.applied else None
    numbers = call_numbers(messages)
    names = tool_names_by_call_id(messages)
    # In the sent view the messages behind the boundary are folded into the summary: the model never saw them.
    first_sent = boundary if (view is View.SENT and boundary is not None) else 0

    def entry(index: int) -> TimelineEntry:
        return _message_entry(
            messages[index],
            index=index,
            decision=decisions[index] if decisions is not None and index < len(decisions) else None,
            view=view,
            call_number=numbers.get(index),
            tool_names=names,
            boundary=boundary,
            spill_url=spill_url,
            run_error=run_error if index == total - 1 else None,
        )

    considered = total - min(first_sent, total)
    if filters:
        matching = [e for e in map(entry, range(first_sent, total)) if filters.matches(e)]
        pages = max(1, math.ceil(len(matching) / PAGE_SIZE))
        current = min(max(1, page or 1), pages)
        entries = matching[(current - 1) * PAGE_SIZE : current * PAGE_SIZE]
        start = (entries[0].index or 0) if entries else 0
        stop = ((entries[-1].index or 0) + 1) if entries else 0
        matched = len(matching)
    else:
        pages = max(1, math.ceil(total / PAGE_SIZE))
        # Default to the page where the model's view starts: that is what people came to see.
        default_page = page_of(boundary) if (view is View.SENT and boundary) else 1
        current = min(max(1, page or default_page), pages)
        start, stop = (current - 1) * PAGE_SIZE, min(total, current * PAGE_SIZE)
        entries = []
        for index in range(start, stop):
            if index == boundary and card is not None:
                entries.append(TimelineEntry(kind="summary", index=None, card=card))
            if index >= first_sent:
                entries.append(entry(index))
        entries = collapse_unchanged(entries)
        matched = considered
    tally: dict[str, int] = {}
    if decisions is not None:
        for decision in decisions:
            if decision.message.type is MessageType.TOOL:
                tally[decision.action.value] = tally.get(decision.action.value, 0) + 1
    counts = [(kind, f"{figures.count(n)} {kind.replace('_', '-')}") for kind, n in sorted(tally.items())]
    if boundary:
        counts.append((BadgeKind.SUMMARISED.value, f"{figures.count(boundary)} summarised"))
    tools = {m.name or names.get(m.tool_call_id or "") for m in messages if m.type is MessageType.TOOL}
    return Timeline(
        view=view,
        entries=tuple(entries),
        page=current,
        pages=pages,
        total=total,
        first_index=start,
        last_index=max(start, stop - 1),
        boundary=boundary,
        counts=tuple(counts),
        filters=filters,
        matched=matched,
        considered=considered,
        tools=tuple(sorted(t for t in tools if t)),
    )


def collapse_unchanged(entries: Sequence[TimelineEntry]) -> list[TimelineEntry]:
    """Mark every run of at least COLLAPSE_RUN consecutive messages that memory sent as stored (no trim,
    clear, summary or spill badge, no error, no summary card between) to fold all but its first and last."""
    marked = list(entries)
    start = 0
    while start < len(marked):
        stop = start
        while stop < len(marked) and _unchanged(marked[stop]):
            stop += 1
        if stop - start >= COLLAPSE_RUN:
            marked[start + 1] = replace(marked[start + 1], collapse_opens=stop - start - 2)
            marked[stop - 2] = replace(marked[stop - 2], collapse_closes=True)
        start = max(stop, start + 1)
    return marked


def _unchanged(entry: TimelineEntry) -> bool:
    return (
        entry.kind != "summary"
        and entry.notice is None  # a notice says what happened to the history: never folded away
        and not entry.is_error
        and all(badge.kind in _UNCHANGED_BADGES for badge in entry.badges)
    )


@dataclass(frozen=True, slots=True)
class RailItem:
    checkpoint: CheckpointRow
    lane: int  # 0 = the active line; forks get their own lanes
    active: bool
    on_active_line: bool
    fork_point: int  # number of children when more than one, else 0
    branch_start: bool  # first checkpoint of a fork branch


LINEAGE_FROM_ORDER = "Mycel dev stores no parent ids: lineage here comes from checkpoint order."


def previous_by_order(checkpoints: Sequence[CheckpointRow]) -> dict[str, str]:
    """Each checkpoint's predecessor in id order (uuid6 ids sort by time): the only lineage Mycel dev's
    checkpoints have, since it writes every parent_checkpoint_id as NULL."""
    ordered = sorted(c.checkpoint_id for c in checkpoints)
    return dict(zip(ordered[1:], ordered, strict=False))


def checkpoint_rail(
    checkpoints: Sequence[CheckpointRow], head_id: str | None, *, lineage_from_order: bool = False
) -> tuple[RailItem, ...]:
    """Checkpoints newest first, with forks as separate lanes and the active line (head → root) marked;
    `lineage_from_order` (Mycel dev) takes each checkpoint's predecessor as its parent."""
    if lineage_from_order:
        previous = previous_by_order(checkpoints)
        checkpoints = [
            c if c.parent_checkpoint_id else replace(c, parent_checkpoint_id=previous.get(c.checkpoint_id))
            for c in checkpoints
        ]
    by_id = {c.checkpoint_id: c for c in checkpoints}
    children: dict[str, list[str]] = {}
    for c in checkpoints:
        if c.parent_checkpoint_id:
            children.setdefault(c.parent_checkpoint_id, []).append(c.checkpoint_id)
    active_line: set[str] = set()
    cursor = head_id
    while cursor and cursor in by_id and cursor not in active_line:
        active_line.add(cursor)
        cursor = by_id[cursor].parent_checkpoint_id
    # uuid6 ids sort by time, so children come before their parents in this order.
    ordered = sorted(checkpoints, key=lambda c: c.checkpoint_id, reverse=True)
    lanes: dict[str, int] = {}
    next_lane = 1
    for c in ordered:
        if c.checkpoint_id in active_line:
            lanes[c.checkpoint_id] = 0
            continue
        kids = [k for k in children.get(c.checkpoint_id, []) if k in lanes and k not in active_line]
        if kids:
            lanes[c.checkpoint_id] = lanes[max(kids)]
        else:
            lanes[c.checkpoint_id] = next_lane
            next_lane += 1
    items: list[RailItem] = []
    for c in ordered:
        parent = c.parent_checkpoint_id
        lane = lanes[c.checkpoint_id]
        branch_start = parent is not None and parent in lanes and lanes[parent] != lane
        kids = children.get(c.checkpoint_id, [])
        items.append(
            RailItem(
                checkpoint=c,
                lane=lane,
                active=c.checkpoint_id == head_id,
                on_active_line=c.checkpoint_id in active_line,
                fork_point=len(kids) if len(kids) > 1 else 0,
                branch_start=branch_start,
            )
        )
    return tuple(items)

"""The Thread screen's breaker card: Mycel dev turned automatic compaction off for this thread (no Django).

The head's `memory_compaction_state` says whether the breaker is open (ThreadRow.breaker_open); when it
opened and after which failures comes from the reconstructed calls where they say so, else from the
compact_breaker notice dev stored at the end of that run (reference mycel-dev.md §4.3, §4.4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.call_record.calls import RecordedCall
from memory_core.messages import Message, MessageType
from memory_core.notices import NoticeKind, notice_kind

# What Mycel dev does to close it, and what its own notice tells the user to do.
CLOSES = (
    "A successful prompt-too-long recovery closes it: that compaction ignores the breaker and resets it when "
    "it succeeds. A successful automatic compaction cannot happen while it is open, and would only reset the "
    "count. Mycel's notice says: clear the thread or start a new one."
)


@dataclass(frozen=True, slots=True)
class BreakerCard:
    failure_count: int
    opened_at_call: int | None  # the call after which the breaker was open (reconstruction or notice)
    opened_from: str  # where opened_at_call comes from, in plain words
    failed_calls: tuple[int, ...]  # the calls whose compaction attempt failed, when the calls say so
    notice_index: int | None  # the compact_breaker notice in the stored history
    calls_since: int  # model calls made with compaction off
    closes: str = CLOSES


def breaker_card(
    *,
    breaker_open: bool,
    failure_count: int | None,
    messages: Sequence[Message],
    calls: Sequence[RecordedCall],
) -> BreakerCard | None:
    """The card for a thread whose head says the breaker is open; None otherwise."""
    if not breaker_open:
        return None
    notice = next((i for i, m in enumerate(messages) if notice_kind(m) is NoticeKind.COMPACT_BREAKER), None)
    failed: list[int] = []
    previous = 0
    for call in calls:
        if call.attempted and call.breaker_failures > previous:
            failed.append(call.call)
        previous = call.breaker_failures
    opened = next((c.call for c in calls if c.breaker_open), None)
    opened_from = "the reconstructed calls"
    if opened is None and notice is not None:
        # Dev stores the notice after the run's last message: the breaker opened at or before the
        # run's last call ahead of it.
        before = [c.call for c in calls if c.index < notice]
        ai_before = sum(1 for m in messages[:notice] if m.type is MessageType.AI)
        opened = before[-1] if before else (ai_before or None)
        opened_from = "the compact_breaker notice (the last call of its run)"
    calls_since = sum(1 for c in calls if opened is not None and c.call > opened)
    return BreakerCard(
        failure_count=failure_count or 0,
        opened_at_call=opened,
        opened_from=opened_from if opened is not None else "",
        failed_calls=tuple(failed),
        notice_index=notice,
        calls_since=calls_since,
    )

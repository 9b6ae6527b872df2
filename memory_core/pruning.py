"""Mycel's pruning (layer 1, SessionPruner; reference §3.2): which tool results it trims or clears, and why.

Mycel prunes at every model call on the full stored list; nothing of it is saved. These functions redo
that decision, message by message, with the rule that made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from memory_core.memory_settings import MemorySettings
from memory_core.messages import Content, Message, MessageType

SOFT_TRIM_MARKER = "\n\n[...trimmed...]\n\n"


class PruneAction(StrEnum):
    UNCHANGED = "unchanged"
    PROTECTED = "protected"  # a result Mycel would have trimmed or cleared, kept only by protect_recent
    SOFT_TRIMMED = "soft_trimmed"
    HARD_CLEARED = "hard_cleared"

    @property
    def mycel_action(self) -> str:
        """The name in Mycel's own terms: a protected result is simply returned unchanged by Mycel."""
        return _MYCEL_ACTIONS[self]

    @property
    def changes_content(self) -> bool:
        return self in (PruneAction.SOFT_TRIMMED, PruneAction.HARD_CLEARED)


_MYCEL_ACTIONS = {
    PruneAction.UNCHANGED: "unchanged",
    PruneAction.PROTECTED: "unchanged",
    PruneAction.SOFT_TRIMMED: "soft_trim",
    PruneAction.HARD_CLEARED: "hard_clear",
}


@dataclass(frozen=True, slots=True)
class PruneDecision:
    """What Mycel does to one stored message before a model call."""

    index: int
    action: PruneAction
    message: Message  # as Mycel would send it
    original_chars: int | None  # len of the stored string content; None for block lists
    rule: str
    in_protected_window: bool = False  # a result of one of the last protect_recent tool-calling AI steps

    @property
    def content(self) -> Content:
        return self.message.content


@dataclass(frozen=True, slots=True)
class PruningResult:
    decisions: tuple[PruneDecision, ...]
    protected_tool_call_ids: frozenset[str]

    @property
    def messages(self) -> tuple[Message, ...]:
        """The list Mycel would go on with (its compaction and the model see this)."""
        return tuple(d.message for d in self.decisions)

    def count(self, action: PruneAction) -> int:
        return sum(1 for d in self.decisions if d.action is action)


def protected_steps(messages: Sequence[Message], *, protect_recent: int) -> dict[str, int]:
    """Tool-call ids Mycel protects, each with its AI step number counted from the end (1 = newest).

    Mycel counts only AI messages with tool calls, newest first, and stops after protect_recent of them;
    empty or missing call ids are never protected.
    """
    steps: dict[str, int] = {}
    count = 0
    for message in reversed(messages):
        if count >= protect_recent:
            break
        if message.type is not MessageType.AI or not message.tool_calls:
            continue
        count += 1
        for call in message.tool_calls:
            if call.id and call.id not in steps:
                steps[call.id] = count
    return steps


def trimmed_content(
    content: str, *, soft_trim_chars: int, hard_clear_threshold: int
) -> tuple[PruneAction, str]:
    """What Mycel's pruner makes of an unprotected string tool result (Mycel's arithmetic, to the letter).

    Note Python slicing: with soft_trim_chars 1 the "tail" content[-0:] is the whole string, as in Mycel.
    """
    n = len(content)
    if n <= soft_trim_chars:
        return PruneAction.UNCHANGED, content
    if n > hard_clear_threshold:
        return PruneAction.HARD_CLEARED, f"[Tool output cleared \u2014 {n} chars]"
    half = soft_trim_chars // 2
    return PruneAction.SOFT_TRIMMED, content[:half] + SOFT_TRIM_MARKER + content[-half:]


def prune_decisions(messages: Sequence[Message], *, settings: MemorySettings) -> PruningResult:
    """Mycel's pruning of `messages` (the full list of one model call), with the rule behind each outcome."""
    steps = protected_steps(messages, protect_recent=settings.protect_recent)
    return PruningResult(
        decisions=tuple(_decide(i, m, steps, settings) for i, m in enumerate(messages)),
        protected_tool_call_ids=frozenset(steps),
    )


def _decide(
    index: int, message: Message, steps: Mapping[str, int], settings: MemorySettings
) -> PruneDecision:
    content = message.content
    chars = len(content) if isinstance(content, str) else None
    if message.type is not MessageType.TOOL:
        return PruneDecision(index, PruneAction.UNCHANGED, message, chars, "not a tool message")
    step = steps.get(message.tool_call_id) if message.tool_call_id else None
    protected = step is not None
    if not isinstance(content, str):
        return PruneDecision(
            index, PruneAction.UNCHANGED, message, None, "list content is never pruned", protected
        )
    soft, hard = settings.soft_trim_chars, settings.hard_clear_threshold
    action, new_content = trimmed_content(content, soft_trim_chars=soft, hard_clear_threshold=hard)
    n = len(content)
    if protected:
        window = (
            f"protect_recent={settings.protect_recent}: result of tool-calling AI step #{step} from the end"
        )
        if action is PruneAction.UNCHANGED:
            return PruneDecision(
                index, PruneAction.UNCHANGED, message, n, f"{window}; short anyway ({n} \u2264 {soft})", True
            )
        would = "cleared" if action is PruneAction.HARD_CLEARED else "trimmed"
        return PruneDecision(index, PruneAction.PROTECTED, message, n, f"{window} (would be {would})", True)
    if action is PruneAction.UNCHANGED:
        return PruneDecision(index, action, message, n, f"soft_trim_chars={soft}: {n} \u2264 {soft}")
    if action is PruneAction.HARD_CLEARED:
        rule = f"hard_clear_threshold={hard}: {n} > {hard}"
    else:
        rule = f"soft_trim_chars={soft}: {n} > {soft}, kept the first and last {soft // 2} chars"
    return PruneDecision(index, action, message.with_content(new_content), n, rule)

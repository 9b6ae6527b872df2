"""What the model received at one call: the pruned messages with the active summary in front (reference §3.9)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.compaction import summary_message
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.pruning import PruneDecision, prune_decisions
from memory_core.records import SummaryRow
from memory_core.tokens import estimate_tokens


@dataclass(frozen=True, slots=True)
class ActiveSummary:
    """The summary Mycel holds in its cache: its text and how many leading messages it replaces."""

    summary_text: str
    compact_up_to_index: int

    def applies_to(self, count: int) -> bool:
        """Mycel dev puts it in front only with a text and 1 <= compact_up_to_index <= len(pruned list)."""
        return bool(self.summary_text) and 1 <= self.compact_up_to_index <= count

    @classmethod
    def from_row(cls, row: SummaryRow) -> ActiveSummary:
        return cls(summary_text=row.summary_text, compact_up_to_index=row.compact_up_to_index)


@dataclass(frozen=True, slots=True)
class ViewItem:
    message: Message  # as sent
    origin: int | None  # index in the stored list; None for the summary message
    decision: PruneDecision | None  # None for the summary message

    @property
    def is_summary(self) -> bool:
        return self.origin is None


@dataclass(frozen=True, slots=True)
class ModelView:
    items: tuple[ViewItem, ...]
    summary_applied: bool
    summary_note: str | None  # why a given summary was not applied
    stored_count: int

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(item.message for item in self.items)

    @property
    def estimated_tokens(self) -> int:
        """Mycel's estimate of what was sent (system prompt not included, as in Mycel)."""
        return estimate_tokens(self.messages)


def newest_active(summaries: Sequence[SummaryRow]) -> SummaryRow | None:
    """The summary row Mycel loads for a thread: the newest active one (there should be exactly one)."""
    active = [s for s in summaries if s.is_active]
    if not active:
        return None
    return max(active, key=lambda s: (s.created_at is not None, s.created_at or 0, s.compacted_at))


def summary_skip_reason(summary: ActiveSummary, message_count: int) -> str | None:
    """Why Mycel would not apply this summary to a call with `message_count` messages (None: it applies)."""
    if not summary.summary_text:
        return "the summary text is empty"
    index = summary.compact_up_to_index
    if index <= 0:
        return f"compact_up_to_index {index} is not positive"
    if index > message_count:
        return f"compact_up_to_index {index} is beyond the {message_count} messages (Mycel skips it silently)"
    return None


def model_view(
    messages: Sequence[Message], *, settings: MemorySettings, summary: ActiveSummary | None
) -> ModelView:
    """The messages Mycel sent for a call whose stored input is `messages`, each with its origin.

    Pruning is computed on the full list; the summary replaces the first compact_up_to_index messages
    only when 0 < index <= len(messages), exactly as Mycel applies its cached summary.
    """
    decisions = prune_decisions(messages, settings=settings).decisions
    note = summary_skip_reason(summary, len(messages)) if summary is not None else None
    if summary is None or note is not None:
        items = tuple(ViewItem(d.message, d.index, d) for d in decisions)
        return ModelView(items=items, summary_applied=False, summary_note=note, stored_count=len(messages))
    head = ViewItem(summary_message(summary.summary_text), None, None)
    kept = tuple(ViewItem(d.message, d.index, d) for d in decisions[summary.compact_up_to_index :])
    return ModelView(items=(head, *kept), summary_applied=True, summary_note=None, stored_count=len(messages))

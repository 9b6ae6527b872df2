"""The demo model node's memory: the engine's Mycel rules applied to the LangChain messages of the fake loop.

Mycel prunes and compacts only the request it sends to the model (reference §3); the checkpoints keep
the full history. The demo model node does the same, through `memory_core.compaction` and
`memory_core.model_view`, so the `summaries` rows it writes and the `usage_metadata.input_tokens` it
reports agree with what the dashboard's engine says about the stored messages. Only the summariser is
fake here: it writes a short digest instead of calling a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from langchain_core.messages import BaseMessage, SystemMessage

from memory_core.compaction import CompactionPlan, plan_compaction, summary_text_for
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, message_from_dict
from memory_core.model_view import ActiveSummary, ViewItem
from memory_core.model_view import model_view as engine_model_view
from memory_core.tokens import estimate_tokens


@dataclass(frozen=True, slots=True)
class SavedSummary:
    """One row Mycel's summary store would have saved at a model call."""

    summary_text: str
    compact_up_to_index: int
    compacted_at: int
    is_split_turn: bool
    split_turn_prefix: str | None


class SettingsSegment(NamedTuple):
    """The memory settings in force from model call `first_call` (1-based, in the order calls ran) on."""

    first_call: int
    settings: MemorySettings
    model: str  # the concrete model those calls went to


@dataclass(slots=True)
class MemoryState:
    """Per-thread cache, like one MemoryMiddleware instance (the summary survives between calls).

    `save_failures` are the 1-based ordinals of compactions whose summary save fails ("database is
    locked"): Mycel logs it and goes on with the summary in its cache, so no row is written.
    """

    settings: MemorySettings
    save_failures: frozenset[int] = frozenset()
    active: ActiveSummary | None = None
    saved: list[SavedSummary] = field(default_factory=list)
    compacted_at: list[int] = field(default_factory=list)  # every compaction, stored or not
    not_stored: list[int] = field(default_factory=list)  # compacted_at of the failed saves


def switched_settings(settings: MemorySettings, context_limit: int) -> MemorySettings:
    """The settings after a model switch to `context_limit` (Mycel's `set_context_limit`, reference §3.5).

    Mycel keeps keep_recent_tokens already lowered by the old limit's 0.4 cap: the cap only ever
    lowers it, so a bigger window does not restore it.
    """
    return replace(
        settings, context_limit=context_limit, keep_recent_tokens=settings.effective_keep_recent_tokens
    )


def engine_messages(messages: Sequence[BaseMessage]) -> tuple[Message, ...]:
    """The engine's typed messages for LangChain messages (their `model_dump()` is the checkpoint dict)."""
    return tuple(message_from_dict(m.model_dump()) for m in messages)


def estimated_tokens(messages: Sequence[BaseMessage]) -> int:
    """Mycel's trigger estimate of LangChain messages."""
    return estimate_tokens(engine_messages(messages))


def _digest(messages: Sequence[Message]) -> str:
    counts = {kind: sum(m.type is kind for m in messages) for kind in MessageType}
    first = next((m for m in messages if m.type is MessageType.HUMAN), None)
    opening = f"\n- First request: {first.text[:120]}" if first is not None else ""
    return (
        "## Compacted context\n"
        f"- Requests so far: {counts[MessageType.HUMAN]} from the user, {counts[MessageType.AI]} assistant "
        f"replies, {counts[MessageType.TOOL]} tool results.{opening}\n"
        "- Outstanding: continue from the most recent request."
    )


def _prefix_digest(prefix: Sequence[Message]) -> str:
    opening = prefix[0].content if isinstance(prefix[0].content, str) else ""
    return f"Turn prefix summary: the user asked for {opening[:100]}"


def fake_summary(plan: CompactionPlan) -> tuple[str, str | None]:
    """The demo summariser's text for a compaction and its split-turn prefix (None when not split).

    It stands in for Mycel's summarisation calls; tests use it for a summary whose row was never saved.
    """
    prefix = _prefix_digest(plan.turn_prefix) if plan.split_turn else None
    return summary_text_for(_digest(plan.to_summarize), prefix), prefix


def _as_sent(item: ViewItem, originals: Sequence[BaseMessage]) -> BaseMessage:
    if item.origin is None:
        return SystemMessage(content=item.message.text)
    original = originals[item.origin]
    if item.decision is not None and item.decision.action.changes_content:
        return original.model_copy(update={"content": item.message.content})
    return original


def model_view(messages: Sequence[BaseMessage], state: MemoryState) -> list[BaseMessage]:
    """What Mycel would send to the model for `messages`, saving a summary row when it compacts."""
    stored = engine_messages(messages)
    plan = plan_compaction(stored, settings=state.settings)
    if plan.would_compact and plan.compact_up_to_index is not None:
        text, prefix = fake_summary(plan)
        state.active = ActiveSummary(summary_text=text, compact_up_to_index=plan.compact_up_to_index)
        state.compacted_at.append(len(messages))
        if len(state.compacted_at) in state.save_failures:
            state.not_stored.append(len(messages))
        else:
            state.saved.append(
                SavedSummary(
                    summary_text=text,
                    compact_up_to_index=plan.compact_up_to_index,
                    compacted_at=len(messages),
                    is_split_turn=plan.split_turn,
                    split_turn_prefix=prefix,
                )
            )
    view = engine_model_view(stored, settings=state.settings, summary=state.active)
    return [_as_sent(item, messages) for item in view.items]

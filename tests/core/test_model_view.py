"""The model view: pruned messages with the active summary applied the way Mycel applies its cache."""

from __future__ import annotations

from datetime import datetime

from memory_core.compaction import SUMMARY_HEADER
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, MessageType, message_from_dict
from memory_core.model_view import ActiveSummary, model_view
from memory_core.pruning import PruneAction
from memory_core.records import SummaryRow

MESSAGES: tuple[Message, ...] = tuple(
    message_from_dict(raw)
    for raw in [
        {"type": "human", "content": "fix the build", "id": "h1"},
        {"type": "ai", "content": "", "id": "a1", "tool_calls": [{"id": "c1", "name": "Bash"}]},
        {"type": "tool", "content": "e" * 20000, "id": "t1", "tool_call_id": "c1"},
        {"type": "ai", "content": "", "id": "a2", "tool_calls": [{"id": "c2", "name": "Bash"}]},
        {"type": "tool", "content": "f" * 5000, "id": "t2", "tool_call_id": "c2"},
        {"type": "human", "content": "and now?", "id": "h2"},
    ]
)
MEMORY = MemorySettings(protect_recent=1)


def test_without_summary_every_stored_message_is_sent_pruned() -> None:
    view = model_view(MESSAGES, settings=MEMORY, summary=None)
    assert [item.origin for item in view.items] == list(range(6))
    assert not view.summary_applied
    assert view.items[2].decision is not None and view.items[2].decision.action is PruneAction.HARD_CLEARED
    assert view.items[2].message.content == "[Tool output cleared \u2014 20000 chars]"
    assert view.items[4].decision is not None and view.items[4].decision.action is PruneAction.PROTECTED


def test_summary_replaces_the_first_messages() -> None:
    view = model_view(MESSAGES, settings=MEMORY, summary=ActiveSummary("what happened", 3))
    assert view.summary_applied
    assert view.items[0].is_summary
    assert view.items[0].message.type is MessageType.SYSTEM
    assert view.items[0].message.content == SUMMARY_HEADER + "what happened"
    assert [item.origin for item in view.items[1:]] == [3, 4, 5]
    assert view.estimated_tokens == (len(SUMMARY_HEADER) + 13 + 0 + 5000 + 8) // 2


def test_summary_beyond_the_history_is_skipped_silently_like_mycel() -> None:
    view = model_view(MESSAGES[:2], settings=MEMORY, summary=ActiveSummary("s", 3))
    assert not view.summary_applied
    assert view.summary_note is not None and "beyond" in view.summary_note
    assert len(view.items) == 2


def test_summary_at_the_very_end_sends_only_the_summary() -> None:
    view = model_view(MESSAGES, settings=MEMORY, summary=ActiveSummary("s", 6))
    assert [item.origin for item in view.items] == [None]


def test_empty_or_non_positive_summaries_are_not_applied() -> None:
    assert not model_view(MESSAGES, settings=MEMORY, summary=ActiveSummary("", 2)).summary_applied
    assert not model_view(MESSAGES, settings=MEMORY, summary=ActiveSummary("s", 0)).summary_applied


def test_active_summary_from_a_stored_row() -> None:
    row = SummaryRow(
        summary_id="t_1",
        thread_id="t",
        summary_text="text",
        compact_up_to_index=4,
        compacted_at=6,
        is_split_turn=False,
        split_turn_prefix=None,
        is_active=True,
        created_at=datetime(2026, 1, 1),
        store="summary",
    )
    assert ActiveSummary.from_row(row) == ActiveSummary("text", 4)

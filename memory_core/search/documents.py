"""What is indexed: one document per message text, per tool call's arguments, per summary and per queued
item, each redacted first (memory_core/secrets.py's rules: messages at the stores' border, the others here)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory_core.messages import Message, MessageType, text_of
from memory_core.records import QueueItem, SummaryRow
from memory_core.secrets import redact_text

# What an index holds was redacted by the rule of its day: when the rule (or what is indexed of a message)
# changes, this moves, and an index made under another is emptied and built again (search/engine.py), so a
# secret an older rule let through does not stay in it. 2: a named secret inside another name's value;
# 3: message texts as the stores' border masks them (`*` to their length, not "[redacted]"); 4: a message at
# the time of the checkpoint that first held it, not its thread's head's.
INDEXING_RULES = "4"


class DocumentKind(StrEnum):
    HUMAN = "human"
    AI = "ai"
    TOOL = "tool"
    TOOL_ARGS = "tool-args"
    SYSTEM = "system"
    OTHER = "other"
    SUMMARY = "summary"
    QUEUE = "queue"


@dataclass(frozen=True, slots=True)
class SearchDocument:
    thread_id: str
    index: int  # the message's index in the thread's newest checkpoint (a summary: where it starts)
    kind: DocumentKind
    tool: str | None
    text: str
    at: datetime | None  # a message's: the checkpoint that first held it; a summary's or queued item's own


_KIND_OF = {
    MessageType.HUMAN: DocumentKind.HUMAN,
    MessageType.AI: DocumentKind.AI,
    MessageType.TOOL: DocumentKind.TOOL,
    MessageType.SYSTEM: DocumentKind.SYSTEM,
}
# The index's snippet marks: never allowed in the text, so a mark always means a match.
_MARKS = re.compile("[\x01\x02\x00]")


def clean_text(text: str) -> str:
    """A text read beside the checkpoints (a summary, a queued item), redacted, without the index's marks."""
    return _unmarked(redact_text(text))


def _unmarked(text: str) -> str:
    return _MARKS.sub(" ", text) if "\x00" in text or "\x01" in text or "\x02" in text else text


def canonical_args(name: str, args: Any) -> str:
    """A tool call as indexed: its name, then its arguments as canonical JSON. The stores' border has
    already hidden secret keys' values and masked the secrets inside every string (stores/redact.py)."""
    return f"{name} {json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)}"


def message_documents(
    thread_id: str, messages: Iterable[Message], *, first_index: int, times: Sequence[datetime | None]
) -> Iterator[SearchDocument]:
    """Documents of `messages`, the first of which sits at `first_index` in its thread's list, each at its
    time in `times` (when the checkpoint that first held it was written). Their texts and arguments were
    redacted at the stores' border (message_from_plain), so only the marks go here."""
    for (index, message), at in zip(enumerate(messages, start=first_index), times, strict=True):
        kind = _KIND_OF.get(message.type, DocumentKind.OTHER)
        tool = message.name if kind is DocumentKind.TOOL else None
        text = text_of(message.content)
        if text.strip():
            yield SearchDocument(thread_id, index, kind, tool, _unmarked(text), at)
        for call in message.tool_calls:
            yield SearchDocument(
                thread_id,
                index,
                DocumentKind.TOOL_ARGS,
                call.name,
                _unmarked(canonical_args(call.name, call.args)),
                at,
            )


def summary_documents(summaries: Iterable[SummaryRow]) -> Iterator[SearchDocument]:
    for row in summaries:
        text = "\n".join(part for part in (row.summary_text, row.split_turn_prefix or "") if part)
        if text.strip():
            yield SearchDocument(
                row.thread_id,
                row.compact_up_to_index,
                DocumentKind.SUMMARY,
                None,
                clean_text(text),
                row.created_at,
            )


def queue_documents(items: Iterable[QueueItem], index_of: dict[str, int]) -> Iterator[SearchDocument]:
    """Queued items sit after the thread's messages: their index is the thread's message count."""
    for item in items:
        if item.content.strip():
            yield SearchDocument(
                item.thread_id,
                index_of.get(item.thread_id, 0),
                DocumentKind.QUEUE,
                None,
                clean_text(item.content),
                item.created_at,
            )

"""What is indexed: one document per message text, per tool call's arguments, per summary and per queued
item, each redacted first (memory_core/secrets.py's rule, plus key-shaped words inside free text)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory_core.messages import Message, MessageType, text_of
from memory_core.records import QueueItem, SummaryRow
from memory_core.secrets import _SECRET_VALUE, REDACTED, is_secret_key

# What an index holds was redacted by the rule of its day: when the rule (or what is indexed of a message)
# changes, this moves, and an index made under another is emptied and built again (search/engine.py), so a
# secret an older rule let through does not stay in it. 2: a named secret inside another name's value.
INDEXING_RULES = "2"


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
    at: datetime | None  # the checkpoint's time (a summary's or queued item's own)


_KIND_OF = {
    MessageType.HUMAN: DocumentKind.HUMAN,
    MessageType.AI: DocumentKind.AI,
    MessageType.TOOL: DocumentKind.TOOL,
    MessageType.SYSTEM: DocumentKind.SYSTEM,
}
# `api_key=sk-…`, `"password": "hunter2"`, `Authorization: Bearer x`: a secret-looking name, then its value.
_NAMED_VALUE = re.compile(
    r"""(?P<name>[A-Za-z_][\w\-]{1,63})(?P<sep>["']?\s*[:=]\s*["']?)(?P<value>[^\s"',;}&]+)"""
)
# Every name `is_secret_key` accepts contains one of these (key, token, auth, pass, pwd, secret, …).
_SECRET_HINTS = ("key", "token", "auth", "pass", "pwd", "secret", "cookie", "bearer", "credential", "jwt")
_NOT_LETTERS = re.compile("[^a-z0-9]")
_HINTED = re.compile("|".join(_SECRET_HINTS))  # on the lowered text: one scan for all the stems
_BEARER = re.compile(r"(?i)\bbearer\s+\S+")
# The very rule `is_secret_value` applies to a whole string, found anywhere in a text (one regex pass: a
# callback per word made indexing three times slower).
_KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9_\-])" + _SECRET_VALUE.pattern.removeprefix("^"))
# The same rule without the word boundary: a cheaper scan that every key-shaped word also matches.
_KEY_START = re.compile(_SECRET_VALUE.pattern.removeprefix("^"))
# The index's snippet marks: never allowed in the text, so a mark always means a match.
_MARKS = re.compile("[\x01\x02\x00]")


def redact_text(text: str) -> str:
    """Free text with secrets hidden: every key-shaped word (sk-…, ghp_…, AKIA…) and every value written
    after a secret-looking name (`api_key=…`, `"password": "…"`, `Authorization: Bearer …`)."""

    def named(match: re.Match[str]) -> str:
        value = match.group("value")
        if not is_secret_key(match.group("name")):
            # The value may hold a named secret of its own (`"env": "X_API_KEY=abc"`, `url=…?token=abc`),
            # which this match consumed: it is read again alone, a shorter text each time.
            inner = _NAMED_VALUE.sub(named, value) if ":" in value or "=" in value else value
            return match.group(0) if inner == value else f"{match.group('name')}{match.group('sep')}{inner}"
        # "Bearer <token>": the scheme is a word, the credential the word after it.
        return (
            f"{match.group('name')}{match.group('sep')}{REDACTED}"
            if value.lower() != "bearer"
            else match.group(0)
        )

    # Each pass runs only when the text holds what any of its matches needs: most texts name no secret,
    # and these plain scans cost a fraction of the passes (the key-shaped one checks a word boundary at
    # every position).
    lower = text.lower()
    if _may_name_a_secret(lower):
        if ":" in text or "=" in text:  # every `name=value` separator has one
            text = _NAMED_VALUE.sub(named, text)
        if "bearer" in lower:
            text = _BEARER.sub(f"Bearer {REDACTED}", text)
    if _KEY_START.search(text):
        text = _KEY_SHAPED.sub(REDACTED, text)
    return text


def _may_name_a_secret(lower: str) -> bool:
    # is_secret_key reads a name's letters and digits only (`p-a-s-s` is `pass`): the stems are looked for
    # with the rest dropped too, else such a name's value was left in the text.
    letters = lower.replace("_", "").replace("-", "") if lower.isascii() else _NOT_LETTERS.sub("", lower)
    return _HINTED.search(letters) is not None


def clean_text(text: str) -> str:
    text = redact_text(text)
    return _MARKS.sub(" ", text) if "\x00" in text or "\x01" in text or "\x02" in text else text


def canonical_args(name: str, args: Any) -> str:
    """A tool call as indexed: its name, then its arguments as canonical JSON. The stores' border has
    already hidden secret keys' values (memory_core/stores/redact.py); `clean_text` then hides key-shaped
    values and `name=value` secrets inside the text."""
    return f"{name} {json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)}"


def message_documents(
    thread_id: str, messages: Iterable[Message], *, first_index: int, at: datetime | None
) -> Iterator[SearchDocument]:
    """Documents of `messages`, the first of which sits at `first_index` in its thread's list."""
    for index, message in enumerate(messages, start=first_index):
        kind = _KIND_OF.get(message.type, DocumentKind.OTHER)
        tool = message.name if kind is DocumentKind.TOOL else None
        text = text_of(message.content)
        if text.strip():
            yield SearchDocument(thread_id, index, kind, tool, clean_text(text), at)
        for call in message.tool_calls:
            yield SearchDocument(
                thread_id,
                index,
                DocumentKind.TOOL_ARGS,
                call.name,
                clean_text(canonical_args(call.name, call.args)),
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

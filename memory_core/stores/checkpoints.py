"""LangGraph's SQLite checkpoints, read without ever decoding more blobs than asked for."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memory_core.messages import Message, message_from_dict
from memory_core.stores.decode import UnreadableBlob, decode_metadata, decode_typed
from memory_core.stores.redact import masked_texts, redact
from memory_core.stores.sqlite.connect import ReadOnlyDB

_GREGORIAN_EPOCH = datetime(1582, 10, 15, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class CheckpointMeta:
    """A checkpoint row without its payload: enough for lists, rails and joins."""

    checkpoint_id: str
    parent_checkpoint_id: str | None
    type: str | None
    size: int
    metadata: Mapping[str, Any]  # redacted
    metadata_problem: str | None = None

    @property
    def step(self) -> int | None:
        value = self.metadata.get("step")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def source(self) -> str | None:
        value = self.metadata.get("source")
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True)
class DecodedCheckpoint:
    messages: tuple[Message, ...]
    channels: Mapping[str, Any]  # every other channel value, redacted plain data
    ts: datetime | None


def time_of_checkpoint_id(checkpoint_id: str) -> datetime | None:
    """The creation time inside LangGraph's uuid6 checkpoint ids (60-bit count of 100 ns since 1582)."""
    if len(checkpoint_id) != 36:
        return None
    try:
        value = int(checkpoint_id.replace("-", ""), 16)
    except ValueError:
        return None
    if (value >> 76) & 0xF != 6:
        return None
    ticks = ((value >> 80) << 12) | ((value >> 64) & 0xFFF)
    try:
        return _GREGORIAN_EPOCH + timedelta(microseconds=ticks // 10)
    except OverflowError:
        return None


def checkpoint_id_at(at: datetime) -> str:
    """The smallest uuid6 checkpoint id of the 100 ns tick `at` falls in: ids greater than it were made later
    (time_of_checkpoint_id's inverse, to ask a store for what moved since a time)."""
    since = at - _GREGORIAN_EPOCH
    ticks = max(((since.days * 86_400 + since.seconds) * 1_000_000 + since.microseconds) * 10, 0)
    value = ((ticks >> 12) << 80) | (6 << 76) | ((ticks & 0xFFF) << 64)
    text = f"{value:032x}"
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def parse_iso(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def meta_from_row(row: Sequence[Any]) -> CheckpointMeta:
    checkpoint_id, parent, type_, size, raw_metadata = row
    problem = None
    try:
        metadata = redact(decode_metadata(raw_metadata))
    except UnreadableBlob as exc:
        metadata, problem = {}, str(exc)
    return CheckpointMeta(
        checkpoint_id=str(checkpoint_id),
        parent_checkpoint_id=str(parent) if parent else None,
        type=type_,
        size=int(size or 0),
        metadata=metadata,
        metadata_problem=problem,
    )


_META_COLUMNS = "checkpoint_id, parent_checkpoint_id, type, length(checkpoint), metadata"


def list_checkpoint_meta(db: ReadOnlyDB, thread_id: str) -> list[CheckpointMeta]:
    """Every checkpoint of a thread (Mycel's namespace ''), oldest first; no payload is read."""
    rows = db.rows(
        f"SELECT {_META_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
        (thread_id,),
    )
    return [meta_from_row(r) for r in rows]


def list_checkpoint_skeleton(db: ReadOnlyDB, thread_id: str) -> list[CheckpointMeta]:
    """Like list_checkpoint_meta without metadata: the metadata column sits after the payload in each
    record, so reading it walks every overflow page of every checkpoint (the whole thread's bytes)."""
    rows = db.rows(
        "SELECT checkpoint_id, parent_checkpoint_id, type, length(checkpoint), NULL FROM checkpoints "
        "WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
        (thread_id,),
    )
    return [meta_from_row(r) for r in rows]


_IDS_PER_QUERY = 500


def checkpoint_metadata(
    db: ReadOnlyDB, thread_id: str, only: Sequence[str] | None = None
) -> dict[str, tuple[Mapping[str, Any], str | None]]:
    """Per checkpoint id (all, or `only` these): redacted metadata and why it could not be read, if so."""
    if only is not None and len(only) <= _IDS_PER_QUERY:
        marks = ", ".join("?" for _ in only)
        rows = db.rows(
            "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            f"AND checkpoint_id IN ({marks})",
            (thread_id, *only),
        )
    else:
        rows = db.rows(
            "SELECT checkpoint_id, metadata FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread_id,),
        )
    out: dict[str, tuple[Mapping[str, Any], str | None]] = {}
    for checkpoint_id, raw in rows:
        try:
            out[str(checkpoint_id)] = (redact(decode_metadata(raw)), None)
        except UnreadableBlob as exc:
            out[str(checkpoint_id)] = ({}, str(exc))
    return out


def get_checkpoint_meta(db: ReadOnlyDB, thread_id: str, checkpoint_id: str) -> CheckpointMeta | None:
    row = db.one(
        f"SELECT {_META_COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
        (thread_id, checkpoint_id),
    )
    return meta_from_row(row) if row else None


def head_checkpoint_id(db: ReadOnlyDB, thread_id: str) -> str | None:
    """The active checkpoint: the greatest id, exactly as the saver's own get_tuple picks it."""
    row = db.one(
        "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread_id,),
    )
    return str(row[0]) if row else None


def read_payload(db: ReadOnlyDB, thread_id: str, checkpoint_id: str) -> tuple[str | None, bytes | None]:
    row = db.one(
        "SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
        (thread_id, checkpoint_id),
    )
    if row is None:
        return None, None
    return row[0], row[1]


def read_head_payloads(
    db: ReadOnlyDB, heads: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str | None, bytes | None]]:
    """(thread id, checkpoint id, type, payload) for many (thread id, checkpoint id) pairs in one query."""
    return [
        (str(r[0]), str(r[1]), r[2], r[3])
        for r in db.rows(
            "SELECT c.thread_id, c.checkpoint_id, c.type, c.checkpoint FROM json_each(?) AS j "
            "JOIN checkpoints c ON c.thread_id = j.value ->> 0 AND c.checkpoint_ns = '' "
            "AND c.checkpoint_id = j.value ->> 1",
            (json.dumps(list(heads)),),
        )
    ]


def messages_from_value(value: Any, *, redacted: bool = True) -> tuple[Message, ...]:
    if not isinstance(value, list):
        raise UnreadableBlob("the messages channel is not a list")
    return tuple(message_from_plain(item, redacted=redacted) for item in value)


# Every key message_from_dict reads: redacting only these builds the very same Message (redaction is per key,
# and a cleaned key equals one of these ASCII names only if it was that name), while a message's
# additional_kwargs, invalid_tool_calls and provider metadata (often most of its bytes) are never walked.
_MESSAGE_FIELDS = frozenset(
    {"type", "__class__", "role", "content", "id", "name", "tool_calls", "tool_call_id", "usage_metadata"}
    | {"metadata", "status"}
)


def _fields_read(item: Mapping[Any, Any]) -> dict[Any, Any]:
    fields = {k: v for k, v in item.items() if k in _MESSAGE_FIELDS}
    response = item.get("response_metadata")
    if isinstance(response, Mapping) and "model_name" in response:
        fields["response_metadata"] = {"model_name": response["model_name"]}
    return fields


def message_from_plain(item: Any, *, redacted: bool = True) -> Message:
    """A Message from one decoded item: a message dict, a ("role", text) pair or a bare string.

    `redacted=False` is only for numbers that never leave stores/ (the series counts characters).
    """
    if isinstance(item, Mapping):
        if not redacted:
            return message_from_dict(item)
        fields = redact(_fields_read(item))
        # Secrets inside the texts too (a key a tool printed), masked to their length: tool outputs and
        # arguments are where they turn up.
        for name in ("content", "tool_calls"):
            if name in fields:
                fields[name] = masked_texts(fields[name])
        return message_from_dict(fields)
    if isinstance(item, str):
        raw: dict[str, Any] = {"type": "human", "content": item}
    elif isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], str):
        raw = {"role": item[0], "content": item[1]}
    else:
        raw = {"type": "unknown", "content": str(item)}
    if redacted:
        raw["content"] = masked_texts(raw["content"])
    return message_from_dict(raw)


def decode_checkpoint(type_: str | None, blob: bytes | None, *, redacted: bool = True) -> DecodedCheckpoint:
    """The messages and other channels of one checkpoint payload; raise UnreadableBlob.

    `redacted=False` skips redaction and the other channels: only for the series' numbers.
    """
    value = decode_typed(type_, blob)
    if not isinstance(value, dict):
        raise UnreadableBlob("the checkpoint payload is not a map")
    channels = value.get("channel_values", {})
    if not isinstance(channels, dict):
        raise UnreadableBlob("channel_values is not a map")
    messages = messages_from_value(channels.get("messages", []), redacted=redacted)
    if not redacted:
        return DecodedCheckpoint(messages=messages, channels={}, ts=None)
    others = {str(k): redact(v) for k, v in channels.items() if k != "messages"}
    return DecodedCheckpoint(messages=messages, channels=others, ts=parse_iso(value.get("ts")))

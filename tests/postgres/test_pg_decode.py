"""The shared safe decoder on Postgres payloads (a checkpoint's JSON plus its channel blobs), with blobs
written by LangGraph's own serializer: channels assembled, inline values kept, pickle still refused."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory_core.stores.checkpoints import decode_checkpoint
from memory_core.stores.decode import (
    POSTGRES_CHECKPOINT,
    UnreadableBlob,
    count_checkpoint_messages,
    decode_typed,
    pack_postgres_checkpoint,
)

SERDE = JsonPlusSerializer()


def _checkpoint(inline: dict[str, object]) -> bytes:
    return json.dumps(
        {"v": 4, "id": "x", "ts": "2026-01-01T00:00:00+00:00", "channel_values": inline}
    ).encode()


def test_channels_come_from_blobs_and_inline_values() -> None:
    messages = SERDE.dumps_typed([HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")])
    breaker = SERDE.dumps_typed({"failure_count": 3, "breaker_open": True})
    payload = pack_postgres_checkpoint(
        _checkpoint({"branch:to:model": None, "note": "inline"}),
        [("messages", *messages), ("memory_compaction_state", *breaker), ("__start__", "empty", None)],
    )
    decoded = decode_checkpoint(POSTGRES_CHECKPOINT, payload)
    assert [(m.type.value, m.id, m.text) for m in decoded.messages] == [
        ("human", "h1", "hi"),
        ("ai", "a1", "hello"),
    ]
    assert decoded.channels["memory_compaction_state"] == {"failure_count": 3, "breaker_open": True}
    assert decoded.channels["note"] == "inline"
    assert "__start__" not in decoded.channels
    assert count_checkpoint_messages(POSTGRES_CHECKPOINT, payload) == 2


def test_a_pickle_blob_is_refused_and_damage_is_said() -> None:
    pickled = pack_postgres_checkpoint(_checkpoint({}), [("messages", "pickle", b"\x80\x04K\x01.")])
    with pytest.raises(UnreadableBlob, match="pickle payloads are refused"):
        decode_typed(POSTGRES_CHECKPOINT, pickled)
    with pytest.raises(UnreadableBlob, match="damaged Postgres checkpoint"):
        decode_typed(POSTGRES_CHECKPOINT, b"\xc1 not msgpack")
    not_json = pack_postgres_checkpoint(b"{not json", [])
    with pytest.raises(UnreadableBlob, match="damaged Postgres checkpoint"):
        decode_typed(POSTGRES_CHECKPOINT, not_json)
    assert count_checkpoint_messages(POSTGRES_CHECKPOINT, pickled) is None

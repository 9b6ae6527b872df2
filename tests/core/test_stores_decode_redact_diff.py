"""Safe decoding, redaction and the checkpoint diff, on real LangGraph serializer output."""

from __future__ import annotations

import datetime
import uuid

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory_core.diff import diff_states
from memory_core.messages import Message, MessageType
from memory_core.records import CheckpointRow, CheckpointState
from memory_core.stores.checkpoints import (
    CheckpointMeta,
    decode_checkpoint,
    messages_from_value,
    time_of_checkpoint_id,
)
from memory_core.stores.decode import UnreadableBlob, count_checkpoint_messages, decode_typed
from memory_core.stores.redact import REDACTED, is_secret_key, redact
from memory_core.stores.series import WriteRow, build_series

SERDE = JsonPlusSerializer()


def test_langgraph_messages_decode_to_plain_dicts_without_importing_classes() -> None:
    type_, blob = SERDE.dumps_typed(
        [
            HumanMessage(content="hi", id="h1"),
            AIMessage(
                content="yo",
                id="a1",
                usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
            ),
        ]
    )
    value = decode_typed(type_, blob)
    assert value[0]["__class__"] == "HumanMessage" and value[0]["__module__"].startswith("langchain_core")
    messages = messages_from_value(value)
    assert [m.type for m in messages] == [MessageType.HUMAN, MessageType.AI]
    assert messages[1].input_tokens == 5


def test_other_extension_types_become_plain_values() -> None:
    when = datetime.datetime(2026, 11, 30, 9, 4, 6, tzinfo=datetime.UTC)
    type_, blob = SERDE.dumps_typed({"when": when, "uid": uuid.UUID(int=7), "tags": {"a"}})
    value = decode_typed(type_, blob)
    assert value["when"] == when.isoformat()
    assert value["uid"] == str(uuid.UUID(int=7))
    assert value["tags"] == ["a"]


@pytest.mark.parametrize(
    ("type_", "blob"),
    [("pickle", b"\x80\x04K\x01."), ("msgpack", b"\x92\x01"), ("strange", b"x"), ("json", b"{nope")],
)
def test_undecodable_or_refused_blobs_raise_unreadable(type_: str, blob: bytes) -> None:
    with pytest.raises(UnreadableBlob):
        decode_typed(type_, blob)


def test_null_and_bytes_types() -> None:
    assert decode_typed("null", b"") is None
    assert decode_typed("bytes", b"\x00\x01") == b"\x00\x01"


def test_legacy_json_constructor_objects_become_messages() -> None:
    blob = (
        b'{"channel_values": {"messages": [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", '
        b'"messages", "HumanMessage"], "kwargs": {"content": "old", "type": "human"}}]}}'
    )
    decoded = decode_checkpoint("json", blob)
    assert [(m.type, m.text) for m in decoded.messages] == [(MessageType.HUMAN, "old")]


def test_light_count_skips_message_bodies() -> None:
    type_, blob = SERDE.dumps_typed(
        {"channel_values": {"messages": [HumanMessage("a"), ToolMessage("b", tool_call_id="c")]}}
    )
    assert count_checkpoint_messages(type_, blob) == 2
    assert count_checkpoint_messages("msgpack", b"\xc1") is None


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "API_KEY",
        "apiKey",
        "x-api-key",
        "OPENAI_API_KEY",
        "access_token",
        "refreshToken",
        "token",
        "client_secret",
        "password",
        "Authorization",
        "cookie",
        "private_key",
        "credentials",
        "aws_secret_access_key",
    ],
)
def test_secret_looking_keys_are_recognised(key: str) -> None:
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "max_tokens",
        "model",
        "base_url",
        "tool_call_id",
        "run_id",
    ],
)
def test_ordinary_keys_are_kept(key: str) -> None:
    assert not is_secret_key(key)


def test_redaction_reaches_nested_values_and_lists() -> None:
    data = {
        "model": "m",
        "api_key": "sk-1",
        "nested": [{"headers": {"Authorization": "Bearer x"}}],
        "usage": {"input_tokens": 3},
    }
    assert redact(data) == {
        "model": "m",
        "api_key": REDACTED,
        "nested": [{"headers": {"Authorization": REDACTED}}],
        "usage": {"input_tokens": 3},
    }


def test_checkpoint_id_time_is_read_from_the_uuid6() -> None:
    found = time_of_checkpoint_id("1f1eca68-7262-6b2d-8026-8cd29f43b9b9")
    assert found is not None and found.isoformat().startswith("2026-11-30T10:12:20")
    assert time_of_checkpoint_id("not-a-uuid") is None
    assert time_of_checkpoint_id(str(uuid.UUID(int=1))) is None


def _state(*messages: Message, **channels: object) -> CheckpointState:
    row = CheckpointRow("c", None, 0, "loop", None, None, None, {}, len(messages), 0)
    return CheckpointState(checkpoint=row, messages=messages, channels=channels)


def test_diff_matches_by_id_then_by_position() -> None:
    a = _state(
        Message(MessageType.HUMAN, "q", id="h1"),
        Message(MessageType.AI, "old answer", id="a1"),
        Message(MessageType.TOOL, "gone", id="t1"),
        Message(MessageType.HUMAN, "no id"),
    )
    b = _state(
        Message(MessageType.HUMAN, "q", id="h1"),
        Message(MessageType.AI, "new answer", id="a1"),
        Message(MessageType.TOOL, "fresh", id="t2"),
        Message(MessageType.HUMAN, "no id, edited"),
        Message(MessageType.AI, "more", id="a2"),
        __pregel_tasks=[1],
    )
    diff = diff_states(a, b)
    assert diff.unchanged == 1
    assert [(c.before_index, c.after_index, c.after.text) for c in diff.changed] == [
        (1, 1, "new answer"),
        (3, 3, "no id, edited"),
    ]
    assert [(i, m.id) for i, m in diff.removed] == [(2, "t1")]
    assert [(i, m.id) for i, m in diff.added] == [(2, "t2"), (4, "a2")]
    assert diff.channels_changed == ("__pregel_tasks",)
    assert diff_states(b, b).is_empty


def _meta(checkpoint_id: str, parent: str | None) -> CheckpointMeta:
    return CheckpointMeta(checkpoint_id, parent, "msgpack", 0, {})


def test_series_rebuild_follows_add_messages_rules() -> None:
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES
    from langgraph.types import Overwrite

    h1, a1 = HumanMessage("q" * 10, id="h1"), AIMessage("a" * 20, id="a1")
    payloads = {
        "1": SERDE.dumps_typed({"channel_values": {"messages": [h1, a1]}}),
        # Rebuilt states are only checked at the leaf; here the leaf is what add_messages would give.
        "5": SERDE.dumps_typed({"channel_values": {"messages": [HumanMessage("z" * 4, id="z")]}}),
    }
    writes = [
        WriteRow("1", "t1", "", 0, *SERDE.dumps_typed([AIMessage("b" * 30, id="a1")])),  # same id replaces
        WriteRow("2", "t2", "", 0, *SERDE.dumps_typed([RemoveMessage(id="h1")])),
        WriteRow("3", "t3", "", 0, *SERDE.dumps_typed(Overwrite([HumanMessage("x" * 6, id="x"), h1]))),
        WriteRow(
            "4",
            "t4",
            "",
            0,
            *SERDE.dumps_typed([RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("z" * 4, id="z")]),
        ),
    ]
    metas = [_meta("1", None), _meta("2", "1"), _meta("3", "2"), _meta("4", "3"), _meta("5", "4")]
    series = build_series(metas, writes, lambda c: payloads.get(c, ("msgpack", b"\xc1")), count=None)
    got = {k: (p.messages, p.estimated_tokens) for k, p in series.points.items()}
    assert got == {"1": (2, 15), "2": (2, 20), "3": (1, 15), "4": (2, 8), "5": (1, 2)}
    assert (series.decoded, series.fallbacks) == (2, 0)

"""The first index's fast path (the stores' border redacting only the fields a Message keeps, by exact
type; each text redaction pass run only when the text could match it) gives the very documents of the
plain path: every message redacted whole by the general walk, every text through every pass."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core import memo, secrets
from memory_core.messages import Message, message_from_dict
from memory_core.search import documents
from memory_core.search.documents import SearchDocument, message_documents
from memory_core.secrets import REDACTED, is_secret_key
from memory_core.secrets import redact as redact_with
from memory_core.stores.checkpoints import message_from_plain
from memory_core.stores.decode import decode_typed
from memory_core.stores.reader import MycelReader
from memory_core.stores.redact import encodable, masked_texts, redact
from tests.core.store_builders import point_locations
from tests.core.test_search import SECRET, plant_secret_thread
from tests.dashboard.planting import plant_thread


def _plain_clean(text: str) -> str:
    def named(match: re.Match[str]) -> str:
        name, sep, value = match.group("name", "sep", "value")
        if not is_secret_key(name):
            return f"{name}{sep}{secrets._NAMED_VALUE.sub(named, value)}"  # a named secret inside the value
        return match.group(0) if value.lower() == "bearer" else f"{name}{sep}{REDACTED}"

    text = secrets._NAMED_VALUE.sub(named, text)
    text = secrets._BEARER.sub(f"Bearer {REDACTED}", text)
    text = secrets._KEY_SHAPED.sub(REDACTED, text)
    return documents._MARKS.sub(" ", text)


def _plain_message(item: Any) -> Message:
    if isinstance(item, Mapping):
        fields = redact_with(item, clean=encodable)
        # The border's second rule: secrets inside the texts, masked to their length.
        fields.update({k: masked_texts(fields[k]) for k in ("content", "tool_calls") if k in fields})
        return message_from_dict(fields)
    return message_from_plain(item)


def _both_paths(
    reader: MycelReader, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, list[SearchDocument], list[SearchDocument]]]:
    rows = list(reader.list_threads().value)
    fast = {
        row.thread_id: list(
            message_documents(row.thread_id, messages, first_index=0, times=[row.updated_at] * len(messages))
        )
        for row, messages in reader.head_messages(rows, [])
        if messages is not None
    }
    at = {row.thread_id: row.updated_at for row in rows}
    heads = [(row.thread_id, row.head_checkpoint_id) for row in rows if row.head_checkpoint_id]
    payloads = list(reader.backend.head_payloads(heads, []))
    with monkeypatch.context() as patched:
        patched.setattr(documents, "clean_text", _plain_clean)
        for thread_id, _, (kind, blob) in payloads:
            value = decode_typed(kind, blob)
            messages = tuple(_plain_message(item) for item in value["channel_values"].get("messages", []))
            plain = list(
                message_documents(thread_id, messages, first_index=0, times=[at[thread_id]] * len(messages))
            )
            yield thread_id, fast.pop(thread_id), plain
    assert not fast  # every thread was compared


def test_the_sample_home_indexes_the_same_documents(sample_home: Path, monkeypatch: pytest.MonkeyPatch):
    memo.reset()
    reader = MycelReader(point_locations(sample_home), facts_folder=sample_home / "cache")
    compared = 0
    for thread_id, fast, plain in _both_paths(reader, monkeypatch):
        assert fast == plain, thread_id
        compared += len(fast)
    assert compared > 50


def test_planted_secrets_give_the_same_documents_and_stay_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    memo.reset()
    home = tmp_path / "mycel"
    home.mkdir()
    plant_secret_thread(home)
    plant_thread(
        home / "leon.db",
        "t-spelled",
        [
            # is_secret_key reads letters only: `p-a-s-s` names a password (this value once stayed)
            HumanMessage(content="p-a-s-s=hunter2spelled and A_U_T_H: tok3nspelled", id="h1"),
            AIMessage(
                content=[{"type": "text", "text": "marks \x01inside\x02 and ghp_abcdefghij1234 there"}],
                id="a1",
                tool_calls=[
                    {
                        "id": "c1",
                        "name": "Bash",
                        # A named secret inside another name's value: the outer match once consumed it.
                        "args": {
                            "command": "export X_API-KEY=argspelled1",
                            "env": "PASS=nestspelled",
                            "n": [1],
                        },
                    }
                ],
                additional_kwargs={"client_secret": "kwargs-secret-1"},
                response_metadata={"model_name": "m-1", "api_key": "meta-secret-1"},
                usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6},
            ),
            ToolMessage(
                content="Authorization: bearer   tokbearer99 done, see url=https://x.example/?token=urlspelled",
                tool_call_id="c1",
                name="Bash",
                id="t1",
            ),
        ],
    )
    reader = MycelReader(point_locations(home), facts_folder=home / "cache")
    texts = []
    for thread_id, fast, plain in _both_paths(reader, monkeypatch):
        assert fast == plain, thread_id
        texts += [d.text for d in fast]
    joined = "\n".join(texts)
    assert "https://x.example" in joined and "marks  inside  and" in joined
    for needle in (SECRET, "hunter2", "leak-arg", "leak-bearer", "spelled", "ghp_", "tokbearer99", "\x01"):
        assert needle not in joined, needle


@pytest.mark.parametrize(
    ("text", "kept", "hidden"),
    [
        ('{"env": "X_API_KEY=abc123"}', '{"env": "X_API_KEY=', "abc123"),
        ("url=https://x.example/a?token=abc123&page=2", "url=https://x.example/a?token=", "abc123"),
        ("env: PASSWORD=abc123 then cwd=/tmp", "then cwd=/tmp", "abc123"),
        ("a=b=c:d", "a=b=c:d", "[redacted]"),  # nothing secret: kept as written
    ],
)
def test_a_named_secret_inside_another_names_value_is_hidden(text: str, kept: str, hidden: str):
    redacted = secrets.redact_text(text)
    assert kept in redacted and hidden not in redacted, redacted


NESTED: list[Any] = [
    {
        "api_key": "x",
        "nested": {"Authorization": {"deep": 1}, "ok": ["a", "\ud800b", ("t", {"password": 2})]},
    },
    {1: "int key", None: True, b"raw": 1.5, "k\udcffey": "v\ud801"},
    MappingProxyType({"token": "t", "tokens": 3, "list": [[{"secret": "s"}]]}),
    ("tuple", {"cookie": "c"}),
    "\ud83d alone",
    None,
    7,
]


@pytest.mark.parametrize("value", NESTED)
def test_the_borders_walk_redacts_as_the_general_one(value: Any):
    assert redact(value) == redact_with(value, clean=encodable)
    assert type(redact(value)) is type(redact_with(value, clean=encodable))

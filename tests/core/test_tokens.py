"""Mycel's two estimates, and the offline tiktoken counter with its content-hash cache."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from memory_core import tokens
from memory_core.messages import Message, MessageType, message_from_dict
from memory_core.tokens import (
    OFFLINE_ENCODING,
    TokenCounter,
    default_counter,
    encoding_available_offline,
    estimate_message_tokens,
    estimate_tokens,
)

BLOCKS: list[Any] = [
    {"type": "text", "text": "abc"},
    "de",
    {"type": "image_url", "image_url": {"url": "x"}},
    {"type": "text", "text": "f"},
]


def _msg(content: Any) -> Message:
    return message_from_dict({"type": "human", "content": content})


def test_trigger_estimate_sums_characters_before_halving() -> None:
    # 3 + 2 + 0 + 1 = 6 chars in blocks, 5 in the string: (6 + 5) // 2 = 5
    assert estimate_tokens([_msg(BLOCKS), _msg("12345")]) == 5


def test_compactor_estimate_floors_every_block() -> None:
    # 3//2 + 2//2 + 0 + 1//2 = 2, while the trigger estimate of the same message is 6 // 2 = 3
    assert estimate_message_tokens(_msg(BLOCKS)) == 2
    assert estimate_tokens([_msg(BLOCKS)]) == 3
    assert estimate_message_tokens(_msg("x" * 7)) == 3


def test_blocks_without_text_count_nothing() -> None:
    content = [{"type": "tool_use", "id": "t", "input": {"cmd": "ls" * 50}}, {"type": "text"}]
    assert estimate_tokens([_msg(content)]) == 0
    assert estimate_message_tokens(_msg(content)) == 0


def test_cjk_and_emoji_are_counted_as_python_characters() -> None:
    assert estimate_tokens([_msg("\u4e2d\u6587\U0001f600x")]) == 2


def _block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_offline_encoding_loads_and_counts_with_no_network(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import tiktoken.registry

    _block_network(monkeypatch)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.delitem(tiktoken.registry.ENCODINGS, OFFLINE_ENCODING, raising=False)
    tokens.forget_encodings()
    try:
        counter = default_counter()
        assert counter.encoding_name == OFFLINE_ENCODING
        assert counter.count("Hello, world! \u4f60\u597d") > 0
        assert counter.count("<|endoftext|>") > 1  # special-token text counts as ordinary text
    finally:
        tokens.forget_encodings()


def test_downloadable_encodings_are_used_only_from_a_verified_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert not encoding_available_offline("o200k_base")
    cached = tokens.cached_encoding_file("o200k_base")
    assert cached is not None
    Path(cached).write_bytes(b"corrupt")
    assert not encoding_available_offline("o200k_base")  # tiktoken would re-download it: refuse
    tokens.forget_encodings()
    try:
        counter = default_counter("o200k_base")
        assert counter.encoding_name == OFFLINE_ENCODING
        assert counter.fallback_reason is not None and "o200k_base" in counter.fallback_reason
    finally:
        tokens.forget_encodings()


def test_disabled_tiktoken_cache_means_nothing_downloadable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert not encoding_available_offline("cl100k_base")
    assert encoding_available_offline(OFFLINE_ENCODING)


def test_cache_hit_does_not_tokenize_again(monkeypatch: pytest.MonkeyPatch) -> None:
    counter = TokenCounter(OFFLINE_ENCODING)
    text = "def main():\n    return 42\n" * 20
    first = counter.count(text)
    calls: list[str] = []
    real = tokens._load_encoder(OFFLINE_ENCODING)

    def spy(name: str) -> Any:
        def encode(value: str) -> list[int]:
            calls.append(value)
            return real(value)

        return encode

    monkeypatch.setattr(tokens, "_load_encoder", spy)
    assert counter.count(text) == first
    assert calls == []
    assert (counter.hits, counter.misses) == (1, 1)
    assert counter.count(text + "!") >= first
    assert len(calls) == 1


def test_cache_stays_bounded() -> None:
    counter = TokenCounter(OFFLINE_ENCODING, max_entries=10)
    for n in range(25):
        counter.count(f"text number {n}")
    assert counter.cache_size <= 10
    assert counter.count("text number 24") == counter.count_uncached("text number 24")


def test_count_message_uses_the_readable_text() -> None:
    counter = default_counter()
    message = Message(type=MessageType.AI, content=({"type": "text", "text": "hello"}, " world"))
    assert counter.count_message(message) == counter.count("hello world")
    assert counter.count("") == 0

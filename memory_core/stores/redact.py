"""Redaction at the border: no secret-looking value leaves stores/ (checkpoint metadata holds api_key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_core.secrets import REDACTED, is_secret_key, redact_text
from memory_core.secrets import redact as redact_with

__all__ = ["REDACTED", "encodable", "encodable_data", "is_secret_key", "masked_texts", "redact"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_LEAVES = frozenset({int, float, bool, type(None), bytes})


def redact(value: Any) -> Any:
    """A copy of plain data with the value of every secret-looking key, at any depth, replaced.

    Lone surrogates (JSON can spell them as "\\ud800") become U+FFFD too: no page or log can encode them.
    """
    # Exactly `redact_with(value, clean=encodable)` (tests/core/test_search_fast_path.py), walked by exact type
    # with the leaves inline: decoded checkpoints are plain dicts, lists and leaves, and the general walk's
    # Mapping ABC checks and calls per leaf were most of the time a head's decoding took. Anything
    # else (a tuple, a Mapping that is not a dict) takes the general walk.
    kind = type(value)
    if kind is dict:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if type(key) is str:
                clean_key = key if key.isascii() else _SURROGATE.sub("\ufffd", key)
                if is_secret_key(key):
                    out[clean_key] = REDACTED
                    continue
            else:
                clean_key = encodable(key)
            leaf = type(item)
            if leaf is str:
                out[clean_key] = item if item.isascii() else _SURROGATE.sub("\ufffd", item)
            elif leaf in _PLAIN_LEAVES:
                out[clean_key] = item
            else:
                out[clean_key] = redact(item)
        return out
    if kind is str:
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if kind is list:
        return [redact(item) for item in value]
    if kind in _PLAIN_LEAVES:
        return value
    return redact_with(value, clean=encodable)


def encodable(value: Any) -> Any:
    """A string with every lone surrogate replaced by U+FFFD, so it encodes as UTF-8; other values as given."""
    if not isinstance(value, str) or value.isascii():
        return value
    return _SURROGATE.sub("\ufffd", value)


def encodable_data(value: Any) -> Any:
    """Plain data (parsed JSON) with `encodable` applied to every string, keys included."""
    if isinstance(value, Mapping):
        return {encodable(k): encodable_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encodable_data(v) for v in value]
    return encodable(value)


def masked_texts(value: Any) -> Any:
    """Plain data with the secrets inside its strings masked to their own length (the text rule of
    memory_core/secrets.py): a tool output's `OPENAI_API_KEY=sk-…` leaves as `OPENAI_API_KEY=***…`, and
    every figure Mycel's rules take from a text's length (pruning, the estimate) stays as it was."""
    kind = type(value)
    if kind is str:
        return redact_text(value, keep_length=True)
    if kind is dict:
        return {key: masked_texts(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [masked_texts(item) for item in value]
    return value

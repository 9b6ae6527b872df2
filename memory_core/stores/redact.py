"""Redaction at the border: no secret-looking value leaves stores/ (checkpoint metadata holds api_key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_core.secrets import REDACTED, is_secret_key
from memory_core.secrets import redact as redact_with

__all__ = ["REDACTED", "encodable", "encodable_data", "is_secret_key", "redact"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def redact(value: Any) -> Any:
    """A copy of plain data with the value of every secret-looking key, at any depth, replaced.

    Lone surrogates (JSON can spell them as "\\ud800") become U+FFFD too: no page or log can encode them.
    """
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

"""Redaction at the border: no secret-looking value leaves stores/ (checkpoint metadata holds api_key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

REDACTED = "[redacted]"

_SECRET_PARTS = (
    "apikey",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "privatekey",
    "credential",
    "authorization",
    "cookie",
    "accesskey",
    "sessionkey",
    "signingkey",
    "bearer",
)
_SECRET_EXACT = frozenset({"token", "auth", "pwd", "pass", "key", "jwt"})
_NOT_LETTERS = re.compile(r"[^a-z0-9]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def is_secret_key(key: object) -> bool:
    """True for keys such as api_key, X-Api-Key, accessToken, client_secret, password, cookie."""
    return isinstance(key, str) and _is_secret_name(key)


@lru_cache(maxsize=8192)
def _is_secret_name(key: str) -> bool:
    compact = _NOT_LETTERS.sub("", key.lower())
    if compact in _SECRET_EXACT:
        return True
    # access_token, refresh_token, id_token… but not input_tokens / max_tokens (token counts).
    if compact.endswith("token"):
        return True
    return any(part in compact for part in _SECRET_PARTS)


def redact(value: Any) -> Any:
    """A copy of plain data with the value of every secret-looking key, at any depth, replaced.

    Lone surrogates (JSON can spell them as "\\ud800") become U+FFFD too: no page or log can encode them.
    """
    if isinstance(value, Mapping):
        return {encodable(k): (REDACTED if is_secret_key(k) else redact(v)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return encodable(value)


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

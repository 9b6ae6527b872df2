"""Which keys and values are secrets: one rule for the stores' border and the config display."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

REDACTED = "[redacted]"

# Matched inside the key with case and separators dropped, so api_key, API-KEY, X-Api-Key and apiKey agree.
_SECRET_WORDS = (
    "apikey",
    "accesskey",
    "privatekey",
    "sessionkey",
    "signingkey",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "credential",
    "authorization",
    "cookie",
    "bearer",
)
_SECRET_NAMES = frozenset({"token", "auth", "pwd", "pass", "key", "jwt"})
_NOT_LETTERS = re.compile(r"[^a-z0-9]")
_SECRET_VALUE = re.compile(r"^(sk-|sk_|xox[abp]-|ghp_|gho_|AKIA)[A-Za-z0-9_\-]{4,}")


def is_secret_key(name: object) -> bool:
    """True for api_key, X-Api-Key, accessToken, client_secret, password, cookies…; False for max_tokens."""
    return isinstance(name, str) and _is_secret_name(name)


@lru_cache(maxsize=8192)
def _is_secret_name(name: str) -> bool:
    letters = _NOT_LETTERS.sub("", name.lower())
    # access_token, refreshToken, id_token… but not input_tokens / max_tokens (token counts).
    return letters in _SECRET_NAMES or letters.endswith("token") or any(w in letters for w in _SECRET_WORDS)


def is_secret_value(value: object) -> bool:
    """True for a string shaped like a provider key (sk-…, ghp_…, AKIA…) whatever key it sits under."""
    return isinstance(value, str) and _SECRET_VALUE.match(value) is not None


def _as_is(value: Any) -> Any:
    return value


def redact(
    value: Any,
    *,
    placeholder: str = REDACTED,
    keep_unset: bool = False,
    hide_secret_values: bool = False,
    clean: Callable[[Any], Any] = _as_is,
) -> Any:
    """A copy of plain data with every secret-looking key's value, at any depth, replaced by `placeholder`.

    `keep_unset` shows None and "" as they are; `hide_secret_values` also hides key-shaped strings;
    `clean` is applied to every other key and leaf.
    """

    def walk(item: Any) -> Any:
        if isinstance(item, Mapping):
            return {clean(k): _hidden(k, v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        if hide_secret_values and is_secret_value(item):
            return placeholder
        return clean(item)

    def _hidden(key: Any, item: Any) -> Any:
        if not is_secret_key(key) or (keep_unset and item in (None, "")):
            return walk(item)
        return placeholder

    return walk(value)

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


# -- secrets inside free text (tool outputs, messages, tool arguments as text) ---------------------------

# `api_key=sk-…`, `"password": "hunter2"`, `Authorization: Bearer x`: a secret-looking name, then its value.
_NAMED_VALUE = re.compile(
    r"""(?P<name>[A-Za-z_][\w\-]{1,63})(?P<sep>["']?\s*[:=]\s*["']?)(?P<value>[^\s"',;}&]+)"""
)
# Every name `is_secret_key` accepts contains one of these (key, token, auth, pass, pwd, secret, …).
_SECRET_HINTS = ("key", "token", "auth", "pass", "pwd", "secret", "cookie", "bearer", "credential", "jwt")
_BEARER = re.compile(r"(?i)\b(?P<scheme>bearer\s+)(?P<value>\S+)")
# The very rule `is_secret_value` applies to a whole string, found anywhere in a text (one regex pass: a
# callback per word made indexing three times slower).
_KEY_SHAPED = re.compile(r"(?<![A-Za-z0-9_\-])" + _SECRET_VALUE.pattern.removeprefix("^"))
# The same rule without the word boundary: a cheaper scan that every key-shaped word also matches, run only
# when the start of one of its prefixes is there (`_may_hold_a_key`: plain substring scans, four times cheaper).
_KEY_START = re.compile(_SECRET_VALUE.pattern.removeprefix("^"))
MASK = "*"


def redact_text(text: str, *, keep_length: bool = False) -> str:
    """Free text with secrets hidden: every key-shaped word (sk-…, ghp_…, AKIA…) and every value written
    after a secret-looking name (`api_key=…`, `"password": "…"`, `Authorization: Bearer …`), also inside
    another name's value (`"env": "X_API_KEY=…"`).

    Each is replaced by REDACTED, or with `keep_length` by as many MASK characters: the text keeps its
    length, so Mycel's character arithmetic on it (pruning, the estimate) decides as on the original.
    """
    # Each pass runs only when the text holds what any of its matches needs: most texts name no secret,
    # and these plain scans cost a fraction of the passes (the key-shaped one checks a word boundary at
    # every position). Such a text returns before anything else is made.
    lower = text.lower()
    names_one = _may_name_a_secret(lower)
    if not names_one and not _may_hold_a_key(text):
        return text
    return _hidden_in(text, lower, names_one, keep_length)


def _hidden_in(text: str, lower: str, names_one: bool, keep_length: bool) -> str:
    def hidden(value: str) -> str:
        return MASK * len(value) if keep_length else REDACTED

    def named(match: re.Match[str]) -> str:
        name, sep, value = match.group("name", "sep", "value")
        if not is_secret_key(name):
            # The value may hold a named secret of its own (`"env": "X_API_KEY=abc"`, `url=…?token=abc`),
            # which this match consumed: it is read again alone, a shorter text each time.
            inner = _NAMED_VALUE.sub(named, value) if ":" in value or "=" in value else value
            return match.group(0) if inner == value else f"{name}{sep}{inner}"
        # "Bearer <token>": the scheme is a word, the credential the word after it (the next pass).
        return match.group(0) if value.lower() == "bearer" else f"{name}{sep}{hidden(value)}"

    def bearer(match: re.Match[str]) -> str:
        return (
            f"{match.group('scheme')}{hidden(match.group('value'))}" if keep_length else f"Bearer {REDACTED}"
        )

    if names_one:
        if ":" in text or "=" in text:  # every `name=value` separator has one
            text = _NAMED_VALUE.sub(named, text)
        if "bearer" in lower:
            text = _BEARER.sub(bearer, text)
    if _may_hold_a_key(text):
        text = _KEY_SHAPED.sub((lambda m: hidden(m.group(0))) if keep_length else REDACTED, text)
    return text


def _may_name_a_secret(lower: str) -> bool:
    # is_secret_key reads a name's letters and digits only (`p-a-s-s` is `pass`): the stems are looked for
    # with the rest dropped too, else such a name's value was left in the text.
    letters = lower.replace("_", "").replace("-", "") if lower.isascii() else _NOT_LETTERS.sub("", lower)
    # Ten substring scans, spelled out (a generator's frames cost more than the scans of a short text), take
    # half the time of one regex alternation over a long one.
    return (
        "key" in letters
        or "token" in letters
        or "auth" in letters
        or "pass" in letters
        or "pwd" in letters
        or "secret" in letters
        or "cookie" in letters
        or "bearer" in letters
        or "credential" in letters
        or "jwt" in letters
    )


def _may_hold_a_key(text: str) -> bool:
    if not ("sk" in text or "xox" in text or "gh" in text or "AKIA" in text):
        return False
    return _KEY_START.search(text) is not None

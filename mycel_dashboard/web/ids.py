"""Mycel's ids in URLs. Thread, checkpoint and tool-call ids are arbitrary strings (`user/42`, `a?b#c`,
`..`, CJK, control characters, thousands of characters), and the WSGI server decodes %2F before Django
routes, so percent-encoding alone cannot carry a slash. An id made only of URL-safe characters appears
as itself (readable links); any other is written `~` + base64url of its UTF-8 bytes. Both round-trip.
"""

from __future__ import annotations

import base64
import re

_PLAIN = re.compile(r"[A-Za-z0-9_.:@-]+")
_ENCODED = "~"
# gunicorn refuses request lines over 8,190 bytes (its largest setting, gunicorn_conf.py): a link must
# leave room for a checkpoint id and a query string, so a longer encoded id is not linked at all (the
# page says why). A 4,000-character ASCII id still fits.
MAX_URL_ID = 6_000


class IdTooLong(ValueError):
    pass


def id_to_url(value: str) -> str:
    if _PLAIN.fullmatch(value) and value not in {".", ".."}:
        encoded = value
    else:
        encoded = _ENCODED + base64.urlsafe_b64encode(value.encode("utf-8", "surrogatepass")).decode()
        encoded = encoded.rstrip("=")
    if len(encoded) > MAX_URL_ID:
        raise IdTooLong(f"this id is too long to put in a link ({len(value):,} characters)")
    return encoded


def id_from_url(value: str) -> str:
    if not value.startswith(_ENCODED):
        return value
    body = value[len(_ENCODED) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
        return raw.decode("utf-8", "surrogatepass")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError(f"not an encoded id: {value[:40]!r}") from exc


class IdConverter:
    """The `<id:…>` path converter: any string, one path segment."""

    regex = r"[^/]+"

    def to_python(self, value: str) -> str:
        return id_from_url(value)

    def to_url(self, value: str) -> str:
        return id_to_url(value)

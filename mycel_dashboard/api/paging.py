"""Paging for the API's lists: `?limit=` and either `?offset=` or an opaque `?cursor=`.

A cursor names the last item of the page it follows (by its key), not a position: new threads arrive
at the top of the list and new calls at the end, so a page read by cursor neither repeats nor skips
items when the stores move between two requests; an offset does.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_LIMIT = 100
MAX_LIMIT = 1000


class BadPaging(ValueError):
    """A paging value the API refuses (answered 400)."""


@dataclass(frozen=True, slots=True)
class Paging:
    limit: int
    offset: int
    after: Any  # the key of the item the page follows (from a cursor), else None
    by_cursor: bool


def _whole(name: str, text: str, *, minimum: int, maximum: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"
        raise BadPaging(f"{name} must be a whole number {bound}, not {text[:40]!r}")
    return value


def encode_cursor(key: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps({"after": key}).encode()).decode().rstrip("=")


def _decode_cursor(text: str) -> Any:
    try:
        data = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict) or "after" not in data:
        raise BadPaging("cursor is not one this API gave (use the response's `next` URL)")
    return data["after"]


def paging_of(query: Any) -> Paging:
    """The paging a request's query string asks for; BadPaging for a bad value."""
    limit_text, offset_text, cursor = query.get("limit"), query.get("offset"), query.get("cursor")
    limit = DEFAULT_LIMIT if limit_text is None else _whole("limit", limit_text, minimum=1, maximum=MAX_LIMIT)
    if cursor is not None and offset_text is not None:
        raise BadPaging("give cursor or offset, not both")
    offset = 0 if offset_text is None else _whole("offset", offset_text, minimum=0)
    after = _decode_cursor(cursor) if cursor is not None else None
    return Paging(limit=limit, offset=offset, after=after, by_cursor=cursor is not None)


@dataclass(frozen=True, slots=True)
class Page:
    items: list[Any]
    count: int  # every item of the list, on every page
    next_cursor: str | None


def page_of(items: Sequence[Any], paging: Paging, key: Callable[[Any], Any]) -> Page:
    """The page of `items` `paging` asks for; BadPaging when the cursor's item is no longer listed."""
    start = paging.offset
    if paging.by_cursor:
        keys = [key(item) for item in items]
        if paging.after not in keys:
            raise BadPaging("the cursor's item is no longer listed: start again without a cursor")
        start = keys.index(paging.after) + 1
    chosen = list(items[start : start + paging.limit])
    more = start + paging.limit < len(items)
    return Page(chosen, len(items), encode_cursor(key(chosen[-1])) if more and chosen else None)

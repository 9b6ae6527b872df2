"""Where each channel value sits inside a msgpack checkpoint, measured without decoding anything.

A SQLite checkpoint is one msgpack map (LangGraph's serde); its `channel_values` map holds every channel's
value whole. This walker reads only msgpack's type bytes and lengths: strings, binaries and ext payloads
(LangGraph's messages are ext types) are skipped by their declared length, so no class is ever built and
no byte of a value is interpreted. It is what a per-channel storage figure needs, and nothing more.
"""

from __future__ import annotations

import struct


class SpanError(ValueError):
    """The bytes are not the msgpack map this walker expects (truncated, damaged, another shape)."""


# Fixed-size types: first byte -> bytes that follow it.
_FIXED = {
    0xC0: 0, 0xC2: 0, 0xC3: 0,  # nil, false, true
    0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,  # uint 8..64
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8,  # int 8..64
    0xCA: 4, 0xCB: 8,  # float 32, 64
    0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17,  # fixext 1..16: type byte + data
}  # fmt: skip
# Types whose length is in the next 1, 2 or 4 bytes, and how many bytes sit between length and data.
_SIZED = {
    0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0),  # str 8..32
    0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0),  # bin 8..32
    0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),  # ext 8..32: the ext's type byte, then data
}  # fmt: skip
_LENGTH = {1: ">B", 2: ">H", 4: ">I"}
MAX_DEPTH = 512  # deeper nesting is refused rather than walked (a damaged or hostile checkpoint)


def _length(data: bytes, at: int, size: int) -> int:
    if at + size > len(data):
        raise SpanError("truncated msgpack length")
    return int(struct.unpack_from(_LENGTH[size], data, at)[0])


def _container(data: bytes, at: int) -> tuple[str, int, int] | None:
    """("map" | "array", item count, where the items start) when a container starts at `at`."""
    first = data[at]
    if 0x80 <= first <= 0x8F:
        return "map", first & 0x0F, at + 1
    if 0x90 <= first <= 0x9F:
        return "array", first & 0x0F, at + 1
    if first in (0xDC, 0xDD, 0xDE, 0xDF):
        size = 2 if first in (0xDC, 0xDE) else 4
        kind = "array" if first in (0xDC, 0xDD) else "map"
        return kind, _length(data, at + 1, size), at + 1 + size
    return None


def skip(data: bytes, at: int, depth: int = 0) -> int:
    """Where the value starting at `at` ends."""
    if at >= len(data):
        raise SpanError("truncated msgpack value")
    if depth > MAX_DEPTH:
        raise SpanError(f"msgpack nested deeper than {MAX_DEPTH} levels")
    first = data[at]
    if first <= 0x7F or first >= 0xE0:  # positive / negative fixint
        end = at + 1
    elif 0xA0 <= first <= 0xBF:  # fixstr
        end = at + 1 + (first & 0x1F)
    elif first in _FIXED:
        end = at + 1 + _FIXED[first]
    elif first in _SIZED:
        size, extra = _SIZED[first]
        end = at + 1 + size + extra + _length(data, at + 1, size)
    else:
        found = _container(data, at)
        if found is None:
            raise SpanError(f"unknown msgpack type byte 0x{first:02x}")
        kind, count, end = found
        for _ in range(count * (2 if kind == "map" else 1)):
            end = skip(data, end, depth + 1)
    if end > len(data):
        raise SpanError("truncated msgpack value")
    return end


def _text(data: bytes, at: int) -> tuple[str | None, int]:
    """A str key's text and where it ends; None for a key that is not a string."""
    if at >= len(data):
        raise SpanError("truncated msgpack map")
    first = data[at]
    if 0xA0 <= first <= 0xBF:
        start, size = at + 1, first & 0x1F
    elif first in (0xD9, 0xDA, 0xDB):
        width = _SIZED[first][0]
        start, size = at + 1 + width, _length(data, at + 1, width)
    else:
        return None, skip(data, at)
    if start + size > len(data):
        raise SpanError("truncated msgpack key")
    return data[start : start + size].decode("utf-8", "replace"), start + size


def _map_items(data: bytes, at: int) -> list[tuple[str | None, int, int]]:
    """(key, value start, value end) of the map starting at `at`."""
    found = _container(data, at) if at < len(data) else None
    if found is None or found[0] != "map":
        raise SpanError("expected a msgpack map")
    _, count, cursor = found
    items: list[tuple[str | None, int, int]] = []
    for _ in range(count):
        key, cursor = _text(data, cursor)
        end = skip(data, cursor, 1)
        items.append((key, cursor, end))
        cursor = end
    return items


def channel_value_spans(data: bytes) -> dict[str, int]:
    """Each `channel_values` entry's value length in bytes, by channel (key bytes not included).

    The whole checkpoint is then exactly: these lengths + the keys' and maps' msgpack framing + every
    other top-level field (`framing_bytes` says how much that is). Raises SpanError on anything else.
    """
    for key, start, _end in _map_items(data, 0):
        if key == "channel_values":
            return {str(k): end - begin for k, begin, end in _map_items(data, start)}
    return {}


def framing_bytes(data: bytes) -> int:
    """The bytes of the checkpoint that belong to no channel value: len(data) - sum(channel_value_spans)."""
    return len(data) - sum(channel_value_spans(data).values())

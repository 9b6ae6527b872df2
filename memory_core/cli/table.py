"""Plain-text tables for the terminal: cells escaped, long ids shortened, CJK counted as two columns."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

# Longer ids are shown as their first 20 and last 8 characters (`--json` always has them whole).
ID_WIDTH = 40
_HEAD, _TAIL = 20, 8
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """`text` with every control, format or separator character escaped (\\n, \\x1b, \\u200b): data never
    moves the cursor, rings the bell or recolours the terminal."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else _escape(ch) for ch in text)


def _escape(ch: str) -> str:
    if ch in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def short_id(text: str) -> str:
    """An id as the table shows it: escaped, and over ID_WIDTH characters cut to its head … tail."""
    shown = printable(text)
    return shown if len(shown) <= ID_WIDTH else f"{shown[:_HEAD]}…{shown[-_TAIL:]}"


def one_line(text: str, width: int = 80) -> str:
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _width(text: str) -> int:
    # CJK characters (分身 in branch names) take two terminal columns.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Columns padded to their widest cell; every cell escaped (see `printable`)."""
    cells = [[printable(str(c)) for c in headers]] + [[printable(str(c)) for c in row] for row in rows]
    widths = [max(_width(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        padded = (cell + " " * (width - _width(cell)) for cell, width in zip(row, widths, strict=True))
        print("  ".join(padded).rstrip())

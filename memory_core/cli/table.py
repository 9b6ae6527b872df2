"""Plain-text tables for the terminal: cells escaped, long ids shortened, CJK counted as two columns."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Any

from memory_core.ids import ID_WIDTH, printable, short_id

__all__ = ["ID_WIDTH", "one_line", "print_table", "printable", "short_id"]


def one_line(text: str, width: int = 80) -> str:
    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _width(text: str) -> int:
    if text.isascii():
        return len(text)
    # CJK characters (分身 in branch names) take two terminal columns.
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Columns padded to their widest cell; every cell escaped (see `printable`)."""
    cells = [[printable(str(c)) for c in headers]] + [[printable(str(c)) for c in row] for row in rows]
    widths = [max(_width(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        padded = (cell + " " * (width - _width(cell)) for cell, width in zip(row, widths, strict=True))
        print("  ".join(padded).rstrip())

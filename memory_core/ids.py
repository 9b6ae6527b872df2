"""How Mycel's ids (and any text from the data) are shown where a whole one does not fit: escaped, and
long ones cut to head … tail. The CLI's tables and the dashboard's lists use the same rule."""

from __future__ import annotations

# Longer ids are shown as their first 20 and last 8 characters (`--json` and link titles have them whole).
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
    """An id as a table shows it: escaped, and over ID_WIDTH characters cut to its head … tail."""
    shown = printable(text)
    return shown if len(shown) <= ID_WIDTH else f"{shown[:_HEAD]}…{shown[-_TAIL:]}"

"""The Search screen's page data (Django-free): each hit's snippet cut into plain and marked pieces (the
template escapes both and wraps the marked ones in <mark>), its kind in words and where it links."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from memory_core.app.search import SearchHit

KIND_LABELS = {
    "human": "Human message",
    "ai": "AI message",
    "tool": "Tool result",
    "tool-args": "Tool call",
    "system": "System message",
    "other": "Message",
    "summary": "Summary",
    "queue": "Queued item",
}


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    marked: bool


@dataclass(frozen=True, slots=True)
class HitRow:
    rank: int
    thread_id: str
    index: int
    kind: str
    kind_label: str
    tool: str | None
    pieces: tuple[Piece, ...]
    at: datetime | None
    url: str  # "" when the thread's id cannot travel in a URL


def pieces_of(hit: SearchHit) -> tuple[Piece, ...]:
    pieces: list[Piece] = []
    position = 0
    for start, end in hit.marks:
        if start > position:
            pieces.append(Piece(hit.snippet[position:start], False))
        pieces.append(Piece(hit.snippet[start:end], True))
        position = end
    if position < len(hit.snippet):
        pieces.append(Piece(hit.snippet[position:], False))
    return tuple(pieces)


def hit_rows(hits: tuple[SearchHit, ...], thread_url: Callable[[str], str]) -> list[HitRow]:
    """Rows for the page; `thread_url` gives a thread page's URL ("" when it has none). A message or summary
    links to its place in the timeline (`#msg-N` opens a folded run), a queued item to the queue panel."""
    rows = []
    for hit in hits:
        base = thread_url(hit.thread_id)
        anchor = "#panel-queue" if hit.kind == "queue" else f"#msg-{hit.index}"
        rows.append(
            HitRow(
                rank=hit.rank,
                thread_id=hit.thread_id,
                index=hit.index,
                kind=hit.kind,
                kind_label=KIND_LABELS.get(hit.kind, hit.kind),
                tool=hit.tool,
                pieces=pieces_of(hit),
                at=hit.at,
                url=base + anchor if base else "",
            )
        )
    return rows

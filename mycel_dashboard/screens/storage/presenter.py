"""The Storage screen's page data (Django-free): the ranking's page, each store's card, a thread's bytes
card (the Thread page shows the same card), and its growth in words (sizes as memory_core/figures.py
writes them). Every figure comes from
memory_core/app/storage.py, the very function `mycel-memory storage --json` prints."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core import figures as fig
from memory_core.app.storage import (
    DEFAULT_TURNS_AHEAD,
    StorageReport,
    StorageSort,
    StoreTotals,
    ThreadStorage,
    thread_row,
)
from memory_core.footprint.facts import TableSpace
from memory_core.footprint.growth import FITTED, bytes_per_checkpoint
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import problem_text
from mycel_dashboard.screens.storage.charts import checkpoint_bytes_figure
from mycel_dashboard.web.ids import IdTooLong, id_to_url

PER_PAGE = 50


def growth_words(row: ThreadStorage, turns_ahead: int) -> str:
    """ "+12.3 KB per turn, projected 4.56 MB after 50 more turns" (and how the pace was found)."""
    pace = f"{fig.delta_size(row.growth_bytes_per_turn)} per turn"
    if row.pace.basis != FITTED:
        pace += f" ({row.pace.basis}: the mean per turn)" if row.turns else " (no checkpoints)"
    return f"{pace}, projected {fig.size(row.projected_bytes)} after {fig.count(turns_ahead)} more turns"


def thread_param(thread_id: str) -> str | None:
    """The `?thread=` value for a thread (the URL form of its id); None when too long to link."""
    try:
        return id_to_url(thread_id)
    except IdTooLong:
        return None


@dataclass(frozen=True, slots=True)
class RankedRow:
    rank: int
    row: ThreadStorage
    param: str | None  # ?thread= value; None: not linkable
    growth_words: str


@dataclass(frozen=True, slots=True)
class RankingPage:
    rows: tuple[RankedRow, ...]
    sort: StorageSort
    number: int
    pages: int
    threads: int

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None


def page_offset(page: int, *, per_page: int = PER_PAGE) -> int:
    """Where page `page` (1-based) of the ranking starts."""
    return (max(1, page) - 1) * per_page


def last_page(threads: int, *, per_page: int = PER_PAGE) -> int:
    return max(1, -(-threads // per_page))


def ranking_page(report: StorageReport, *, per_page: int = PER_PAGE) -> RankingPage:
    """The report's page of threads (it holds one page, ranked by its sort, from its offset)."""
    start = report.offset
    rows = tuple(
        RankedRow(rank, row, thread_param(row.thread_id), growth_words(row, report.turns_ahead))
        for rank, row in enumerate(report.threads[:per_page], start=start + 1)
    )
    pages = last_page(report.thread_count, per_page=per_page)
    return RankingPage(rows, report.sort, start // per_page + 1, pages, report.thread_count)


@dataclass(frozen=True, slots=True)
class StoreCard:
    """One SQLite file or PostgreSQL schema as its card shows it."""

    store: str
    engine: str | None
    location: str | None
    figures: tuple[tuple[str, str, str], ...]  # (what, how much, the exact bytes for its title)
    tables: tuple[TableSpace, ...]  # biggest first
    estimated: tuple[str, ...]
    measured_by: str | None


def store_cards(report: StorageReport) -> tuple[StoreCard, ...]:
    """Stores holding threads first, then the biggest files."""
    totals = sorted(report.stores, key=lambda s: (-s.thread_bytes, -(s.space.file_bytes if s.space else 0)))
    return tuple(_store_card(s) for s in totals)


def _store_card(totals: StoreTotals) -> StoreCard:
    space = totals.space
    threads = (
        "Threads' bytes",
        f"{fig.size(totals.thread_bytes)} in {fig.count(totals.threads)} thread{'s' if totals.threads != 1 else ''}",
        fig.size_exact(totals.thread_bytes),
    )
    if space is None:
        return StoreCard(totals.store, None, None, (threads,), (), ("its space could not be measured",), None)
    sqlite = space.engine == "sqlite"
    figures = [_sized("File" if sqlite else "Schema (all relations)", space.file_bytes)]
    if totals.threads or space.engine == "postgresql":
        figures.append(threads)
    if sqlite:
        figures.append(_sized("WAL", space.wal_bytes))
    figures.append(_sized("Free pages", space.free_bytes))
    tables = tuple(sorted(space.tables, key=lambda t: (-t.bytes, t.name)))
    return StoreCard(
        totals.store,
        space.engine,
        space.location,
        tuple(figures),
        tables,
        space.estimated,
        space.measured_by,
    )


def _sized(what: str, n: int | None) -> tuple[str, str, str]:
    return (what, fig.size(n), fig.size_exact(n))


@dataclass(frozen=True, slots=True)
class ThreadBytesCard:
    """A thread's bytes per checkpoint and its growth, as the Thread page and the Storage screen show it."""

    thread_id: str
    param: str | None
    row: ThreadStorage
    growth_words: str
    figure: dict[str, Any] | None


def thread_bytes_card(
    reader: MycelReader,
    thread_id: str,
    problems: list[str],
    *,
    turns_ahead: int = DEFAULT_TURNS_AHEAD,
    row: ThreadStorage | None = None,
) -> ThreadBytesCard | None:
    """The card from the reader's bytes of the thread (None when no store holds it); `row`, when the
    caller has the report's, keeps the thread's share."""
    found = reader.thread_bytes(thread_id)
    problems.extend(problem_text(p) for p in found.problems if not p.expected_absence)
    if found.value is None:
        return None
    if row is None:
        row = thread_row(found.value, name=None, fleet_bytes=0, turns_ahead=turns_ahead)
    return ThreadBytesCard(
        thread_id=thread_id,
        param=thread_param(thread_id),
        row=row,
        growth_words=growth_words(row, turns_ahead),
        figure=checkpoint_bytes_figure(bytes_per_checkpoint(found.value)),
    )

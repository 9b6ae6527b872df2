"""The Cost screen's rows: the report's lines with the links and words the page shows (Django-free)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

from memory_core import figures
from memory_core.app.cost import FleetCost
from memory_core.economics.cost import CallUsage, CostReport, Line, PricedAs


@dataclass(frozen=True, slots=True)
class Row:
    line: Line
    url: str = ""  # the thread's page ("" when the id cannot be linked)
    priced: PricedAs | None = None

    @property
    def cost(self) -> str:
        return money(self.line.cost_usd)

    @property
    def exact(self) -> str:
        return exact(self.line.cost_usd)

    @property
    def reasoning(self) -> str:
        return money(self.line.reasoning_usd)

    @property
    def prices(self) -> tuple[tuple[str, str, str], ...]:
        """(kind, to the cent, exact) of the USD per million tokens the cache gives, by kind."""
        if self.priced is None:
            return ()
        p = self.priced.price
        return tuple(
            (kind, figures.money(value), figures.money_exact(value))
            for kind, value in (
                ("input", p.input),
                ("output", p.output),
                ("cache read", p.cache_read),
                ("cache write", p.cache_write),
            )
        )


@dataclass(frozen=True, slots=True)
class NoUsageRow:
    call: CallUsage
    url: str  # the call's page, or the checkpoint's page for an abandoned branch ("" if not linkable)
    where: str  # "call 3", "abandoned branch, message msg_…"


def money(value: Decimal | None) -> str:
    """A cost as the page writes it: to the cent, "<$0.01" under it (figures.money); "—" without a price."""
    return figures.money(value)


def exact(value: Decimal | None) -> str:
    """The exact cost, for the title: "$0.3091455" ("" without a price)."""
    return figures.money_exact(value) if value is not None else ""


@dataclass(frozen=True, slots=True)
class CostPage:
    report: CostReport
    total: Row
    days: tuple[Row, ...]
    threads: tuple[Row, ...]
    models: tuple[Row, ...]
    without_usage: tuple[NoUsageRow, ...]


def cost_page(
    report: CostReport,
    *,
    thread_url: Callable[[str], str],
    call_url: Callable[[str, int], str],
    checkpoint_url: Callable[[str, str], str],
) -> CostPage:
    without: list[NoUsageRow] = []
    for call in report.without_usage:
        if call.call is not None:
            without.append(NoUsageRow(call, call_url(call.thread_id, call.call), f"call {call.call}"))
        else:
            url = checkpoint_url(call.thread_id, call.checkpoint_id) if call.checkpoint_id else ""
            without.append(NoUsageRow(call, url, f"{call.branch}, message {call.message_id or '(no id)'}"))
    return CostPage(
        report=report,
        total=Row(report.total),
        days=tuple(Row(d) for d in report.days),
        threads=tuple(Row(t, thread_url(t.name)) for t in report.threads),
        models=tuple(Row(m.line, priced=m.priced) for m in report.models),
        without_usage=tuple(without),
    )


@dataclass(frozen=True, slots=True)
class ThreadPager:
    """Where the per-thread table's page sits among the period's threads, costliest first."""

    first: int  # 1-based rank of the page's first thread (0: none shown)
    last: int
    count: int  # threads with usage in the period
    previous_url: str  # "" on the first page
    next_url: str  # "" on the last


def thread_pager(found: FleetCost, page: int, params: Mapping[str, str]) -> ThreadPager:
    """The per-thread table's pager: the report's threads are one page from `threads_offset` (the index's
    report; the walked report holds every thread, on one page)."""
    report = found.report
    first = found.threads_offset + 1 if report.threads else 0
    last = found.threads_offset + len(report.threads)

    def url(number: int) -> str:
        return "?" + urlencode({**{k: v for k, v in params.items() if k != "page"}, "page": number})

    return ThreadPager(
        first=first,
        last=last,
        count=report.thread_count,
        previous_url=url(page - 1) if found.threads_offset > 0 else "",
        next_url=url(page + 1) if last < report.thread_count else "",
    )

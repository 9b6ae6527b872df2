"""The prompt-cache cost of pruning over the stores: one thread call by call, or every thread's totals.

The one function behind `mycel-memory cache` and the Context screen's cache tab. The current side is the
record (memory_core/app/fleet_calls.py), the proposed one a replay under the proposed settings
(memory_core/whatif.py); both go through memory_core/economics/prompt_cache.py's `request_prefixes`.
A call's model is the cost report's (response, else checkpoint, else thread: stores/cost_facts.py) and
its price the pricing cache's, looked up by memory_core/economics/cost.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from memory_core.app.calls import ThreadCalls
from memory_core.app.cost import Pricing, list_thread_calls
from memory_core.app.fleet_calls import FleetProgress, progress_json, recorded_thread, reduce_fleet
from memory_core.app.kept_reports import Kept, KeptReport
from memory_core.call_record.evidence import Configured
from memory_core.economics.cost import PriceBook
from memory_core.economics.prompt_cache import (
    ASSUMPTION,
    Tally,
    ThreadPrefixes,
    Totals,
    call_json,
    priced_totals,
    request_prefixes,
    tally_from_json,
    tally_json,
    totals_json,
    unit_of,
)
from memory_core.leaders import Leaders
from memory_core.memo import Key, Memo, digest
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.model_view import newest_active
from memory_core.records import StoreProblem, ThreadRow
from memory_core.replay import simulated_summary_chars
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from memory_core.whatif import ThreadSide, thread_side

# The Config what-if's tallies, per head and side (the fleet report's are kept by reduce_fleet).
_TALLIES: Memo[Tally] = Memo("economics.prompt_cache_tallies", max_entries=24_000)


@dataclass(frozen=True, slots=True)
class ThreadCache:
    """One thread under its current config (the record) and, when given, a proposed one (a replay)."""

    row: ThreadRow
    current: ThreadPrefixes
    proposed: ThreadPrefixes | None
    proposed_settings: MemorySettings | None
    problems: tuple[StoreProblem, ...]


def _models(reader: MycelReader, row: ThreadRow) -> dict[int, str | None]:
    return {c.call: c.model for c in list_thread_calls(reader, row).value if c.call is not None}


def side_prefixes(
    record: ThreadCalls,
    proposed: MemorySettings | None,
    *,
    models: dict[int, str | None],
    book: PriceBook | None,
) -> ThreadPrefixes:
    """The record's prefixes (proposed None), or a replay's under `proposed` (the same calls, the same
    models: one per AI message)."""
    if proposed is None:
        calls, settings = record.calls, record.configured.settings
    else:
        active = newest_active(record.summaries)
        chars = simulated_summary_chars(active.summary_text if active else None)
        calls = thread_side(record.messages, settings=proposed, summary_chars=chars, rules=record.rules).calls
        settings = proposed
    return request_prefixes(
        record.messages, calls, settings, counter=default_counter(), models=models, book=book
    )


# A proposal as a function of the thread's current settings (flags override only what they name).
Propose = Callable[[MemorySettings], MemorySettings]


def _proposed(record: ThreadCalls, propose: Propose | None) -> MemorySettings | None:
    return None if propose is None else _proposed_over(record.configured.settings, propose)


def _proposed_over(current: MemorySettings, propose: Propose) -> MemorySettings | None:
    settings = propose(current)
    return None if settings == current else settings


def thread_cache(
    reader: MycelReader, row: ThreadRow, *, book: PriceBook | None, propose: Propose | None = None
) -> ThreadCache:
    """One thread call by call: shared prefix, cause, re-written tokens and their price; with `propose`,
    the same under the proposed settings (the current side again when they change nothing)."""
    record = recorded_thread(reader, row)
    models = _models(reader, row)
    proposed = _proposed(record, propose)
    current = side_prefixes(record, None, models=models, book=book)
    if propose is None:
        return ThreadCache(row, current, None, None, record.problems)
    then = current if proposed is None else side_prefixes(record, proposed, models=models, book=book)
    return ThreadCache(row, current, then, proposed or record.configured.settings, record.problems)


@dataclass(frozen=True, slots=True)
class ThreadTotals:
    thread_id: str
    current: Totals
    proposed: Totals | None


@dataclass(frozen=True, slots=True)
class FleetCache:
    threads: tuple[ThreadTotals, ...]  # most rewritten first (a page's: the first THREADS_SHOWN)
    current: Totals
    proposed: Totals | None
    unit: str
    progress: FleetProgress
    thread_count: int  # every thread of the report, however many `threads` holds
    kept: Kept | None = None  # the index's sum it was read from (None: a walk of the fleet)


THREADS_SHOWN = 100  # the threads a page lists, most rewritten first; `cache --all --json` lists all


def _rewrites_order(thread: tuple[str, Tally]) -> tuple[int, str]:
    """Most tokens rewritten first."""
    return (-sum(tokens for *_, tokens in thread[1].rows), thread[0])


def fleet_cache(
    reader: MycelReader,
    *,
    book: PriceBook | None,
    propose: Propose | None = None,
    deadline: float | None = None,
) -> FleetCache:
    """Every thread's totals per cause and the fleet's, current (and proposed) side; with `deadline`,
    over the threads analysed by then (memory_core/app/fleet_calls.py `reduce_fleet`)."""

    def proposal_of(configured: Configured) -> str | None:
        proposed = None if propose is None else _proposed_over(configured.settings, propose)
        return None if proposed is None else digest(proposed)

    def tallies(row: ThreadRow, record: ThreadCalls) -> tuple[Tally, Tally | None]:
        models = _models(reader, row)
        now = side_prefixes(record, None, models=models, book=None).tally
        proposed = _proposed(record, propose)
        if propose is None:
            return now, None
        return now, now if proposed is None else side_prefixes(
            record, proposed, models=models, book=None
        ).tally

    found = reduce_fleet(
        reader,
        ("prompt cache", default_counter().encoding_name, propose is not None),
        tallies,
        vary=proposal_of,
        deadline=deadline,
    )
    rows: list[ThreadTotals] = []
    now_all, then_all = Tally(), Tally()
    for row, (now, then) in found.threads:
        now_all = now_all.plus(now)
        if then is not None:
            then_all = then_all.plus(then)
        rows.append(
            ThreadTotals(
                row.thread_id,
                priced_totals(now, book),
                priced_totals(then, book) if then is not None else None,
            )
        )
    rows.sort(key=lambda t: (-t.current.rewritten_tokens, t.thread_id))
    return FleetCache(
        threads=tuple(rows),
        current=priced_totals(now_all, book),
        proposed=priced_totals(then_all, book) if propose is not None else None,
        unit=unit_of(default_counter()),
        progress=found.progress,
        thread_count=len(rows),
    )


def page_cache(fleet: FleetCache) -> FleetCache:
    """What a page lists of the report: the first THREADS_SHOWN threads, the count of them all kept."""
    return replace(fleet, threads=fleet.threads[:THREADS_SHOWN])


def _reduce(reader: MycelReader, row: ThreadRow, record: ThreadCalls) -> Any:
    return tally_json(side_prefixes(record, None, models=_models(reader, row), book=None).tally)


def _sum(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    # The fleet's tally and the first THREADS_SHOWN threads by rewrites, summed thread by thread.
    fleet = Tally()
    first: Leaders[tuple[str, Tally]] = Leaders(THREADS_SHOWN)
    for thread_id, rows in reductions:
        tally = tally_from_json(rows)
        fleet = fleet.plus(tally)
        first.add(_rewrites_order((thread_id, tally)), (thread_id, tally))
    return {
        "current": tally_json(fleet),
        "threads": [[thread_id, tally_json(tally)] for thread_id, tally in first.values()],
        "thread_count": first.count,
    }


KEPT = KeptReport("prompt cache", _reduce, _sum)


def cache_for_page(
    reader: MycelReader, *, book: PriceBook | None, kept: Kept | None, deadline: float | None
) -> FleetCache:
    """The screen's fleet report from the index's sum when there is one, else from a walk within
    `deadline`; its first THREADS_SHOWN threads."""
    if kept is not None:
        return kept_cache(kept, book)
    return page_cache(fleet_cache(reader, book=book, deadline=deadline))


def kept_cache(kept: Kept, book: PriceBook | None) -> FleetCache:
    """The current side of the fleet report from the index's sum (priced now: the sum is price-free)."""
    documents = kept.documents
    return FleetCache(
        threads=tuple(
            ThreadTotals(thread_id, priced_totals(tally_from_json(rows), book), None)
            for thread_id, rows in documents["threads"]
        ),
        current=priced_totals(tally_from_json(documents["current"]), book),
        proposed=None,
        unit=unit_of(default_counter()),
        progress=kept.progress,
        thread_count=documents["thread_count"],
        kept=kept,
    )


def _pricing_json(pricing: Pricing) -> dict[str, object]:
    return {"path": str(pricing.path), "notes": list(pricing.notes), "priced": pricing.book is not None}


def thread_json(cache: ThreadCache, pricing: Pricing) -> dict[str, Any]:
    """`cache THREAD_ID --json`, and every figure of the cache screen's thread view."""
    book = pricing.book
    return {
        "thread_id": cache.row.thread_id,
        "unit": cache.current.unit,
        "assumption": ASSUMPTION,
        "pricing": _pricing_json(pricing),
        "calls": [call_json(c) for c in cache.current.calls],
        "totals": {
            "current": totals_json(cache.current.totals(book)),
            "proposed": None if cache.proposed is None else totals_json(cache.proposed.totals(book)),
        },
        "proposed": None
        if cache.proposed is None or cache.proposed_settings is None
        else {
            "settings": asdict(cache.proposed_settings),
            "calls": [call_json(c) for c in cache.proposed.calls],
        },
    }


def fleet_json(fleet: FleetCache, pricing: Pricing) -> dict[str, Any]:
    """`cache --all --json`, and every figure of the cache screen's fleet view."""
    return {
        "unit": fleet.unit,
        "assumption": ASSUMPTION,
        "pricing": _pricing_json(pricing),
        "threads": [
            {
                "thread_id": t.thread_id,
                "current": totals_json(t.current),
                "proposed": None if t.proposed is None else totals_json(t.proposed),
            }
            for t in fleet.threads
        ],
        "thread_count": fleet.thread_count,
        "totals": {
            "current": totals_json(fleet.current),
            "proposed": None if fleet.proposed is None else totals_json(fleet.proposed),
        },
        **progress_json(fleet.progress),
        **(fleet.kept.note() if fleet.kept is not None else {}),
    }


def side_rewrites(
    store: object, thread_id: str, head: str | None, messages: Sequence[Message], side: ThreadSide
) -> int:
    """Tokens one what-if side re-writes over every call, kept per head and side (a slider move
    recomputes only the proposal, and only once per value)."""

    def compute() -> Tally:
        return request_prefixes(messages, side.calls, side.settings, counter=default_counter()).tally

    if head is None:
        tally = compute()
    else:
        key = Key(
            store=store,
            thread=thread_id,
            head=head,
            settings=digest(side.settings),
            what=("whatif", side.calls, default_counter().encoding_name),
        )
        tally = _TALLIES.get_or_compute(key, compute)
    return sum(tokens for _, _, _, tokens in tally.rows)

"""The Tool-output pressure screen's document summed thread by thread (memory_core/app/tool_pages.py) equals
the whole report cut as the page describes it (tests/support/tools_cut.py), on fleets big enough to cut
every list: more threads, threads per tool and per day, and re-requests than a page shows; ties in size."""

from __future__ import annotations

import random

import pytest

from memory_core.app.tool_pages import (
    DAY_THREADS_SHOWN,
    RE_REQUESTS_SHOWN,
    THREAD_TOTALS_SHOWN,
    TOOL_THREADS_SHOWN,
    ToolPages,
)
from memory_core.economics.tool_pressure import (
    ReRequest,
    Tally,
    ThreadPressure,
    fleet_pressure,
    pressure_json,
)
from tests.support.tools_cut import page_tools

TOOLS = ("Read", "Bash", "Grep", "(no tool call)")
DAYS = ("2026-12-01", "2026-12-02", None)


def _tally(rng: random.Random) -> Tally:
    return Tally(*(rng.choice((0, 10, 100, rng.randint(0, 5_000))) for _ in range(7)))


def _thread(rng: random.Random, number: int) -> ThreadPressure:
    thread_id = f"t-{number:05d}"
    tools = rng.sample(TOOLS, rng.randint(0, 3))
    by_tool = {tool: _tally(rng) for tool in tools}
    by_tool_day = {(tool, day): _tally(rng) for tool in tools for day in rng.sample(DAYS, rng.randint(1, 2))}
    asks = tuple(
        ReRequest(thread_id, rng.choice(TOOLS), "Read", "same arguments", n, n + 1, n + 2, n + 3)
        for n in range(rng.choice((0, 0, 1, 2)))
    )
    sent_by_day = {day: rng.randint(0, 9_000) for day in rng.sample(DAYS, rng.randint(0, 2))}
    return ThreadPressure(
        thread_id,
        rng.randint(0, 20),
        rng.choice((0, 500, rng.randint(0, 90_000))),
        sent_by_day,
        by_tool,
        by_tool_day,
        asks,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_page_summed_thread_by_thread_equals_the_whole_report_cut(seed: int) -> None:
    rng = random.Random(seed)
    threads = [_thread(rng, n) for n in range(600)]
    whole = pressure_json(fleet_pressure(threads))
    assert ToolPages().add_all(threads).page() == page_tools(whole)
    # The fleet is big enough that every cut cuts.
    assert len(whole["thread_totals"]) > THREAD_TOTALS_SHOWN
    assert len(whole["re_requests"]) > RE_REQUESTS_SHOWN
    assert max(len(tool["threads"]) for tool in whole["tools"]) > TOOL_THREADS_SHOWN
    assert max(len(day["thread_ids"]) for tool in whole["tools"] for day in tool["days"]) > DAY_THREADS_SHOWN


def test_an_empty_fleet_has_an_empty_page() -> None:
    assert ToolPages().page() == page_tools(pressure_json(fleet_pressure([])))

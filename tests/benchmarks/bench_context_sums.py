"""Context sums benchmark: the memory the builder's sum of each Context report takes per thread, the
calibration sum against the naive way, in the same run.

Run: .venv/bin/python tests/benchmarks/bench_context_sums.py [--threads N]   (not collected by pytest).

Each thread of Mycel's sample home (tests/data/mycel-home) is reduced once, as the record pass keeps it
(memory_core/app/kept_reports.py), and its reductions are repeated under new ids to N threads; each sum
then reads them from one iterator, as the builder reads them from the index. Peak memory is Python's own
(tracemalloc) above what the reductions themselves take. The naive way is the builder's sum before
2026-12-07: every thread's figures held, the whole report computed and cut for the page. The sums thread by
thread (memory_core/app/calibration_pages.py, tool_pages.py, prompt_cache.py with memory_core/leaders.py)
must give the same documents, which the run checks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from memory_core.app import calibration, prompt_cache, tools  # noqa: E402
from memory_core.app.kept_reports import thread_reductions  # noqa: E402
from memory_core.economics.calibration import (  # noqa: E402
    available_encodings,
    calibration_json,
    calibration_report,
    thread_calibration_of,
)
from memory_core.economics.prompt_cache import Tally, tally_from_json, tally_json  # noqa: E402
from memory_core.economics.tool_pressure import fleet_pressure, pressure_json, thread_pressure_of  # noqa: E402
from memory_core.stores.locations import resolve_locations  # noqa: E402
from memory_core.stores.reader import MycelReader  # noqa: E402
from tests.support.calibration_cut import page_calibration  # noqa: E402
from tests.support.mycel_env import MYCEL_ENV  # noqa: E402
from tests.support.sample_data import SAMPLE_HOME  # noqa: E402
from tests.support.tools_cut import page_tools  # noqa: E402

REPORTS = (calibration.KEPT, tools.KEPT, prompt_cache.KEPT)


def naive_calibration(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    """Every thread's calibration held, the whole report cut for each page."""
    threads = [thread_calibration_of(thread_id, data) for thread_id, data in reductions]
    encodings = available_encodings()
    models = sorted({c.model for t in threads for c in t.calls})
    pages = {
        model or "": page_calibration(
            calibration_json(calibration_report(threads, encodings=encodings, model=model))
        )
        for model in (None, *models)
    }
    return {"models": models, "pages": pages}


def naive_tools(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    """Every thread's tallies held in the whole report, then cut."""
    report = fleet_pressure(thread_pressure_of(thread_id, data) for thread_id, data in reductions)
    return {"page": page_tools(pressure_json(report))}


def naive_cache(reductions: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    """Every thread's tally held and ranked, then the first shown."""
    threads = [(thread_id, tally_from_json(rows)) for thread_id, rows in reductions]
    fleet = Tally()
    for _, tally in threads:
        fleet = fleet.plus(tally)
    ranked = sorted(threads, key=lambda t: (-sum(tokens for *_, tokens in t[1].rows), t[0]))
    return {
        "current": tally_json(fleet),
        "threads": [
            [thread_id, tally_json(tally)] for thread_id, tally in ranked[: prompt_cache.THREADS_SHOWN]
        ],
        "thread_count": len(threads),
    }


NAIVE = {
    calibration.KEPT.name: naive_calibration,
    tools.KEPT.name: naive_tools,
    prompt_cache.KEPT.name: naive_cache,
}


def sample_reductions() -> dict[str, list[Any]]:
    """Each report's reductions of every thread of the sample home, read through the real record pass."""
    home = Path(tempfile.mkdtemp(prefix="bench-context-sums-")) / "home"
    shutil.copytree(SAMPLE_HOME, home)
    for name in MYCEL_ENV:
        os.environ.pop(name, None)
    os.environ.update(HOME=str(home), LEON_DB_PATH=str(home / "leon.db"), MYCEL_CONFIG_HOME=str(home))
    reader = MycelReader(resolve_locations())
    found: dict[str, list[Any]] = {}
    for row in reader.list_threads().value or ():
        for name, payload in thread_reductions(reader, row, REPORTS):
            found.setdefault(name, []).append(payload)
    shutil.rmtree(home.parent, ignore_errors=True)
    return found


def measured(
    total: Callable[[Iterator[tuple[str, Any]]], dict[str, Any]], items: list[tuple[str, Any]]
) -> tuple[float, float, dict[str, Any]]:
    """(peak bytes per thread, seconds, documents) of one sum over `items`."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    began = time.perf_counter()
    documents = total(iter(items))
    seconds = time.perf_counter() - began
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak / len(items), seconds, documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20_000)
    args = parser.parse_args()
    reductions = sample_reductions()
    print(
        f"Context sums over {args.threads:,} threads (the sample home's {len(reductions['calibration'])} threads' reductions, repeated)"
    )
    for report in REPORTS:
        base = reductions[report.name]
        # Each copy decoded anew, as the index hands the builder a fresh payload per row.
        items = [(f"t{i:07d}", json.loads(json.dumps(base[i % len(base)]))) for i in range(args.threads)]
        per_thread, seconds, documents = measured(report.sum, items)
        naive, naive_s, expected = measured(NAIVE[report.name], items)
        assert documents == expected, (
            f"{report.name}: the sum thread by thread differs from the whole report cut"
        )
        print(
            f"  {report.name:<13} peak {per_thread:7,.0f} B/thread ({per_thread * 1e6 / 2**20:6,.0f} MB a million) "
            f"in {seconds:5.2f} s; naive {naive:7,.0f} B/thread ({naive * 1e6 / 2**20:6,.0f} MB) in {naive_s:5.2f} s: "
            f"{per_thread / naive:.2f}x the memory, {seconds / naive_s:.2f}x the time, same documents"
        )


if __name__ == "__main__":
    main()

"""The threads the Config page works on, at any fleet size.

A fleet smaller than DASHBOARD_FLEET_INDEX_FROM threads is listed whole, as before. A bigger one is never
walked: the page reads the rows of the most recently active threads (the what-if's sample and the
picker), and of the thread asked for; the longest thread (the default) and the threads per model come from
the fleet index when it is built, and the count from the checkpoints' keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory_core.app.fleet_index import FleetIndexStore, IndexQuery, look, store_name
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.config.whatif import default_thread

# Threads the picker offers at fleet size (most recently active first); any other is reached by its id.
PICKER_THREADS = 100


@dataclass(frozen=True, slots=True)
class ConfigThreads:
    threads: list[ThreadRow]  # every thread, or at fleet size the newest ones and the one asked for
    all_threads: int
    longest: str | None  # the default thread: the one with the most messages
    model_counts: dict[str | None, int] | None  # threads per model; None: count `threads`
    problems: tuple[StoreProblem, ...]

    @property
    def sampled(self) -> bool:
        return len(self.threads) < self.all_threads


def config_threads(
    reader: MycelReader,
    chosen_id: str | None,
    *,
    index: FleetIndexStore,
    index_from: int,
    model_counts: Callable[[str], dict[str | None, int]],
) -> ConfigThreads:
    problems: list[StoreProblem] = []
    total, newest = reader.backend.newest_heads(
        problems, limit=PICKER_THREADS, offset=0, by_id=False, descending=True
    )
    if total < index_from:
        listed = reader.list_threads()
        rows = list(listed.value)
        return ConfigThreads(rows, len(rows), default_thread(rows), None, listed.problems)
    freshness = look(reader, index)
    problems.extend(freshness.problems)
    longest = counts = None
    if freshness.ready:
        store = store_name(reader)
        _, _, first = index.page(store, IndexQuery(sort="messages", descending=True, limit=1))
        longest = first[0].thread_id if first and first[0].row.messages else None
        counts = model_counts(store)
    wanted = [thread for thread, _, _ in newest]
    for extra in (chosen_id, longest):
        if extra is not None and extra not in wanted:
            wanted.append(extra)
    found = reader.read_thread_rows(wanted)
    problems.extend(found.problems)
    rows = list(found.value)
    return ConfigThreads(rows, total, longest or default_thread(rows), counts, tuple(problems))

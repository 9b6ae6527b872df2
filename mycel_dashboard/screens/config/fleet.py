"""The threads the Config page works on, at any fleet size.

A fleet smaller than DASHBOARD_FLEET_INDEX_FROM threads is listed whole, as before. A bigger one is never
walked: once the fleet index is built, the rows of the most recently active threads (the what-if's sample
and the picker), of the longest (the default) and of the one asked for, the count and the threads per
model all come from it; before, the newest rows are read from the store and the count from the
checkpoints' keys.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory_core.app.fleet_index import FleetIndexStore, IndexQuery, index_rows, look, store_name
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
    freshness = look(reader, index)
    state = freshness.state
    if freshness.ready and state is not None and state.total >= index_from:
        return _from_index(reader, chosen_id, index, model_counts, freshness.problems)
    problems: list[StoreProblem] = list(freshness.problems)
    total, newest = reader.backend.newest_heads(
        problems, limit=PICKER_THREADS, offset=0, by_id=False, descending=True
    )
    if total < index_from:
        listed = reader.list_threads()
        rows = list(listed.value)
        return ConfigThreads(rows, len(rows), default_thread(rows), None, listed.problems)
    wanted = [thread for thread, _, _ in newest]
    if chosen_id is not None and chosen_id not in wanted:
        wanted.append(chosen_id)
    found = reader.read_thread_rows(wanted)
    problems.extend(found.problems)
    rows = list(found.value)
    return ConfigThreads(rows, total, default_thread(rows), None, tuple(problems))


def _from_index(
    reader: MycelReader,
    chosen_id: str | None,
    index: FleetIndexStore,
    model_counts: Callable[[str], dict[str | None, int]],
    problems: list[StoreProblem],
) -> ConfigThreads:
    """The picker's newest threads, the longest and the one asked for, as the index keeps them (its look
    has just caught up the heads that moved): one page of the index, never the fleet's rows."""
    store = store_name(reader)
    total, _, newest = index.page(store, IndexQuery(sort="updated", descending=True, limit=PICKER_THREADS))
    _, _, first = index.page(store, IndexQuery(sort="messages", descending=True, limit=1))
    longest = first[0].thread_id if first and first[0].row.messages else None
    rows = [t.row for t in newest]
    extra = [
        t
        for t in dict.fromkeys((chosen_id, longest))
        if t is not None and t not in {r.thread_id for r in rows}
    ]
    rows += [t.row for t in index_rows(index, store, extra)]
    return ConfigThreads(rows, total, longest or default_thread(rows), model_counts(store), tuple(problems))

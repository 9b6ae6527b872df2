"""The fleet index: per-thread facts the Threads list sorts and filters by, kept in the dashboard's own
database (FleetIndexStore, implemented by mycel_dashboard/web/fleet_index.py), never in Mycel's.

Each thread's facts are kept under (store, thread, head checkpoint, checkpoint count) and the index's
version (the rules that compute them, the token counter, the config they were computed under). Checkpoints
are only ever appended, so facts under an unmoved head never go stale. A look at the fleet asks the store
one question, which threads have a root checkpoint newer than the index's watermark (less a margin, for
transactions that committed late), and recomputes only those whose head or count differs. The first build,
a new version and a fleet that moved a lot are left to the builder (`build`), one at a time across every
instance (FleetIndexStore.builder_lock); meanwhile the list answers from what SQL alone can sort.

What the index does not follow without a head moving (a thread's name, queue, sandbox, summaries and the
bytes of pending writes) is caught up by the builder's full pass, which also drops deleted threads.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from memory_core.app.fleet import rows_json
from memory_core.app.storage import StorageSort
from memory_core.app.thread_settings import project_folder, thread_memory_settings, thread_model
from memory_core.economics.calibration import available_encodings
from memory_core.economics.cost import CallUsage, UsageGroup
from memory_core.family import registered_only_rows
from memory_core.footprint.growth import Footprint, footprint
from memory_core.memo import Key, Memo, digest
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.pruning import prune_decisions
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.checkpoints import checkpoint_id_at, time_of_checkpoint_id
from memory_core.stores.reader import MycelReader
from memory_core.stores.runtime_config import layer_paths, read_json_file
from memory_core.stores.sqlite.connect import EVERY_ROW
from memory_core.tokens import default_counter, estimate_tokens

log = logging.getLogger(__name__)

# Bump when what `indexed_facts` computes changes: every thread is then computed again by the builder.
INDEX_RULES = 3  # 2: the record pass keeps the Context reports' reductions; 3: each thread's footprint
# A look recomputes up to this many moved threads itself; a fleet that moved more is the builder's work.
INLINE_MOVED = 200
# Checkpoints committed this long after their id was made are still found (ids carry their creation time).
LATE_COMMIT = timedelta(minutes=5)
# The builder's full pass runs again this often, to follow what moves no head (names, deletions).
RECONCILE_EVERY = timedelta(minutes=30)
# Checkpoint files seen quiet by a look (it found nothing moved): while a file's fingerprint stays the same
# no thread can have moved, so the next look asks nothing (on a 1,000,000-thread leon.db the question scans
# every checkpoint's key: ~0.7 s).
_QUIET: Memo[bool] = Memo("fleet_index.quiet_heads", max_entries=64)
# The newest checkpoint row a look of this process saw when it left nothing behind, per store and version:
# where the store can tell the rows written after it (SQLite's rowids), the next look reads only those, not
# every checkpoint's key (~70 ms over 100,000 threads, ~0.7 s over 1,000,000).
_MARKS: Memo[Hashable] = Memo("fleet_index.row_marks", max_entries=64)
CHUNK = 500  # threads computed and saved per step of a build (its progress moves by this much)
BUILD_ROW_CAP = EVERY_ROW  # the builder reads the whole fleet: no row cap decides what it holds

# The flags the index keeps (the list's, less what only the record of the calls tells: re-compaction).
FLAGS = ("compacted", "pruned", "queued", "sandbox", "breaker_open")
# The list's flag the record pass tells (RecordTally.recompacting): filtered by as of the records read.
RECOMPACTS = "recompacts"


@dataclass(frozen=True, slots=True)
class RecordTally:
    """What a thread's record of model calls (memory_core.app.thread.thread_facts) adds to the index: the
    figures the metrics and alerts need, read at `head`. Computed after the head's facts, by the record pass
    (memory_core.app.fleet_records); kept when the head moves on, until the pass reads the new head."""

    head: str  # the head checkpoint the record was read at
    calls: int
    calls_without_usage: int  # calls the provider answered with no usage_metadata stored
    compactions: int  # calls Mycel compacted before
    compactions_not_stored: int  # of those, the ones whose summary Mycel did not store
    trimmed_results: int  # tool results trimmed or cleared at the last call
    recompacting: bool  # Mycel main compacted again at each of the last calls (reference §3.4)
    fill_sent: float | None  # what the last call sent (Mycel's estimate) over its context limit
    provider_tokens: int  # the provider's input tokens, summed over the calls that have them
    estimated_tokens: int  # Mycel's estimate of what those same calls sent
    # Every branch's calls as the Cost report counts them (memory_core.app.cost.list_thread_calls): those
    # with usage summed per (model, day, branch kind), priced when read; those without, one by one.
    usage: tuple[UsageGroup, ...] = ()  # in usage_order
    unmetered: tuple[CallUsage, ...] = ()  # in the record's order
    # The Cost page's order of threads, all days (its figures are summed from `usage` when read): the calls
    # with usage, their tokens, and their cost at the pricing cache of the index's version, unpriced calls 0.
    usage_calls: int = 0
    tokens: int = 0
    cost_order: Decimal = Decimal(0)
    # Each kept report's reduction of the record (memory_core/app/kept_reports.py): (report, JSON payload).
    reports: tuple[tuple[str, Any], ...] = ()


def usage_order(group: UsageGroup) -> tuple[bool, str, bool, date, bool]:
    """The one order a thread's usage groups are kept in (wherever they were read from)."""
    return (group.model is None, group.model or "", group.day is None, group.day or date.min, group.abandoned)


@dataclass(frozen=True, slots=True)
class IndexedThread:
    """One thread's facts as the index keeps them."""

    row: ThreadRow  # the list's row, as the reader derived it
    estimated_tokens: int | None  # Mycel's estimate of the head's messages; None when unreadable
    context_limit: int  # the limit the thread's settings resolve to
    pruned: bool  # a tool result is trimmed or cleared under the thread's settings
    version: str
    record: RecordTally | None = None  # None until the record pass has read one of its heads
    # Its bytes and pace as the Storage report ranks them; None when no checkpoint store holds it or the
    # read failed (the report counts those).
    footprint: Footprint | None = None

    @property
    def thread_id(self) -> str:
        return self.row.thread_id

    @property
    def fill(self) -> float | None:
        if self.estimated_tokens is None or self.context_limit <= 0:
            return None
        return self.estimated_tokens / self.context_limit

    @property
    def flags(self) -> tuple[str, ...]:
        row = self.row
        present = (row.summaries > 0, self.pruned, row.queued > 0, bool(row.sandbox_state), row.breaker_open)
        return tuple(flag for flag, on in zip(FLAGS, present, strict=True) if on)


@dataclass(frozen=True, slots=True)
class IndexState:
    """Where the index of one store stands."""

    store: str
    version: str
    complete: bool = False  # a full pass finished under `version`
    watermark: str | None = None  # the newest head id the index has seen
    done: int = 0  # threads computed in the running (or last) pass
    total: int = 0  # threads the running (or last) pass found
    started_at: datetime | None = None
    finished_at: datetime | None = None
    error: str = ""  # why the last pass stopped, if it failed


@dataclass(frozen=True, slots=True)
class IndexQuery:
    """One page of the index: `sort` is a column of the Threads list (thread, name, model, messages,
    checkpoints, updated, bytes, fill, flags)."""

    sort: str = "updated"
    descending: bool = True
    offset: int = 0
    limit: int = 50
    needle: str = ""  # part of the id or name, lower case
    flag: str | None = None  # a flag of the Threads list; RECOMPACTS reads the record pass's tallies
    thread_ids: frozenset[str] | None = None  # only these (a family)
    context_limit: int | None = None  # one limit for every thread (fill sorts by the estimate alone)


@dataclass(frozen=True, slots=True)
class KeptState:
    """Where one kept report (memory_core/app/kept_reports.py) of one store stands in the index."""

    generation: int  # reductions written (or dropped) so far: a sum as of another one is behind
    summed_generation: int | None  # the generation the documents were summed at (None: never)
    summed_at: datetime | None
    analysed: int  # the threads the documents sum
    documents: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class FootprintSums:
    """The indexed footprints summed per store label (the Storage report's totals)."""

    threads: int
    bytes: int
    projected_bytes: int  # every thread's Pace.projected_bytes at the asked turns, summed


class FleetIndexStore(Protocol):
    """Where the index lives (the dashboard's database); every method is one short transaction."""

    def state(self, store: str) -> IndexState | None: ...

    def save_state(self, state: IndexState) -> None: ...

    def indexed_heads(
        self, store: str, thread_ids: Iterable[str] | None
    ) -> dict[str, tuple[str | None, int, str]]:
        """(head id, checkpoint count, version) by thread, of these threads (every one when None)."""
        ...

    def put(self, store: str, threads: Sequence[IndexedThread]) -> None: ...

    def drop_except(self, store: str, keep: set[str]) -> int:
        """Forget threads the store no longer holds; how many."""
        ...

    def page(self, store: str, query: IndexQuery) -> tuple[int, int, list[IndexedThread]]:
        """(threads matching, threads indexed, one page of them in order), sorted and paged in SQL."""
        ...

    def records_due(self, store: str, limit: int) -> list[str]:
        """Threads whose record tally was not read at their indexed head under the index's version of
        them (newest activity first)."""
        ...

    def records_pending(self, store: str) -> int:
        """How many threads `records_due` would name."""
        ...

    def put_records(self, store: str, tallies: Sequence[tuple[IndexedThread, RecordTally]]) -> None:
        """Keep each tally whose thread is still indexed at the tally's head, under the thread's version."""
        ...

    def report_state(self, store: str, report: str) -> KeptState | None: ...

    def reductions(self, store: str, report: str) -> Iterator[tuple[str, Any]]:
        """(thread id, payload) of every thread the index keeps the report's reduction of (RecordTally.reports)."""
        ...

    def save_sum(
        self, store: str, report: str, generation: int, analysed: int, documents: dict[str, Any]
    ) -> None:
        """Keep a report's documents, summed from its reductions as of `generation`."""
        ...

    def footprint_sums(self, store: str, turns_ahead: int) -> tuple[dict[str, FootprintSums], int]:
        """(the footprints summed per store label, threads indexed with a checkpoint but no footprint)."""
        ...

    def footprints(
        self, store: str, sort: StorageSort, turns_ahead: int, offset: int, limit: int
    ) -> list[tuple[str, str | None, Footprint]]:
        """(thread id, name, footprint) of one page of threads in the Storage report's order (rank_key)."""
        ...

    def builder_lock(self, store: str) -> AbstractContextManager[bool]:
        """True inside when this process is the one builder of `store` across every instance."""
        ...


def store_name(reader: MycelReader) -> str:
    """The index's name for the reader's checkpoint store (its identity, never a password)."""
    return digest(reader.store_key)


def config_digest(reader: MycelReader) -> str:
    """What the index's facts depend on besides the checkpoints: the config files every thread reads
    (user layer, models.json, pricing) and the operator's project folder's layer. A thread's own project
    layer (its cwd) is not in it."""
    locations = reader.locations
    paths: list[Path] = [*layer_paths(locations).values()]
    paths += [locations.config_home / "models.json", locations.config_home / "pricing_cache.json"]
    return digest([(str(path), read_json_file(path).sha256) for path in paths])


def index_version(reader: MycelReader) -> str:
    # The calibration report's reductions count in every encoding found offline (kept_reports).
    encodings = ",".join(available_encodings())
    return f"{INDEX_RULES}:{default_counter().encoding_name}:{encodings}:{config_digest(reader)}"


def since_id(watermark: str | None, margin: timedelta = LATE_COMMIT) -> str | None:
    """A checkpoint id `margin` older than `watermark` (ids are uuid6: their time sorts them); the
    watermark itself when it carries no time."""
    if watermark is None:
        return None
    at = time_of_checkpoint_id(watermark)
    if at is None:
        return watermark
    return checkpoint_id_at(at - margin)


# -- computing facts -------------------------------------------------------------------------------------


class _Settings:
    """Each thread's settings, resolved once per (model, project folder) for a whole batch."""

    def __init__(self, reader: MycelReader) -> None:
        self.reader = reader
        self._found: dict[tuple[str | None, Path | None], tuple[MemorySettings, int]] = {}

    def __call__(self, row: ThreadRow) -> tuple[MemorySettings, int]:
        key = (thread_model(row), project_folder(self.reader.locations, row))
        if key not in self._found:
            resolved = thread_memory_settings(self.reader.locations, row)
            self._found[key] = (resolved.settings, resolved.limit.value)
        return self._found[key]


def indexed_facts(
    reader: MycelReader, rows: Sequence[ThreadRow], version: str, problems: list[StoreProblem]
) -> list[IndexedThread]:
    """The index's facts of `rows`: their heads read over one connection, each decoded once."""
    settings_of = _Settings(reader)
    messages_of: dict[str, tuple[Message, ...] | None] = {}
    with_heads = [row for row in rows if row.head_checkpoint_id and row.messages]
    for row, messages in reader.head_messages(with_heads, problems):
        messages_of[row.thread_id] = messages
    footprints = footprints_of(reader, [row.thread_id for row in rows], problems)
    out: list[IndexedThread] = []
    for row in rows:
        settings, limit = settings_of(row)
        if not row.head_checkpoint_id:
            estimate, pruned = None, False
        elif not row.messages:
            estimate, pruned = 0, False
        elif (messages := messages_of.get(row.thread_id)) is None:
            estimate, pruned = None, False
        else:
            estimate = estimate_tokens(messages)
            pruned = any(
                d.action.changes_content for d in prune_decisions(messages, settings=settings).decisions
            )
        kept = replace(row, estimated_tokens=estimate)
        out.append(
            IndexedThread(kept, estimate, limit, pruned, version, footprint=footprints.get(row.thread_id))
        )
    return out


def footprints_of(
    reader: MycelReader, thread_ids: Sequence[str], problems: list[StoreProblem]
) -> dict[str, Footprint]:
    """These threads' footprints, their bytes read in one pass."""
    found = reader.read_thread_bytes(thread_ids)
    problems.extend(found.problems)
    return {thread_id: footprint(thread) for thread_id, thread in found.value.items()}


# -- a look ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Freshness:
    """What a look found: whether the index can answer, and how far behind it is."""

    state: IndexState | None
    ready: bool  # the index holds every thread under the current version: pages may come from it
    moved: int = 0  # threads that moved since the index's watermark
    caught_up: int = 0  # of those, recomputed by this look
    behind: int = 0  # moved threads left to the builder (its figures are as of before them)
    needs_builder: bool = False
    records_due: bool = False  # heads this look caught up have no record tally yet (the record pass's)
    problems: list[StoreProblem] = field(default_factory=list)


def look(reader: MycelReader, index: FleetIndexStore, *, inline_limit: int = INLINE_MOVED) -> Freshness:
    """Bring the index up to the store's heads, cheaply: one question, and the moved threads recomputed."""
    store, version = store_name(reader), index_version(reader)
    state = index.state(store)
    if state is None or not state.complete or state.version != version:
        # A version change keeps the old facts readable, but no page may mix versions: the floor answers.
        return Freshness(state, ready=False, needs_builder=True)
    stale_pass = state.finished_at is not None and datetime.now(UTC) - state.finished_at > RECONCILE_EVERY
    # Taken before the question: a commit landing after it gives the next look another fingerprint.
    stamp = reader.backend.heads_version()
    quiet = Key(store, what=(stamp, state.version, state.watermark)) if stamp is not None else None
    if quiet is not None and _QUIET.get(quiet):
        return Freshness(state, ready=True, needs_builder=stale_pass)
    problems: list[StoreProblem] = []
    marked = Key(store, what=state.version)
    heads, mark = reader.backend.moved_heads(
        problems, since=since_id(state.watermark), mark=_MARKS.get(marked)
    )
    if problems and not heads:
        return Freshness(state, ready=True, problems=problems)
    if problems:  # the question met a problem: its answer may be short, so no later look trusts it
        mark = None
    held = index.indexed_heads(store, [thread for thread, _, _ in heads])
    moved = [h for h in heads if held.get(h[0], (None, -1, ""))[:2] != (h[2], h[1])]
    if not moved:
        if not problems:
            _caught_up(quiet, marked, mark)
        return Freshness(state, ready=True, needs_builder=stale_pass, problems=problems)
    if len(moved) > inline_limit:
        return Freshness(
            state, ready=True, moved=len(moved), behind=len(moved), needs_builder=True, problems=problems
        )
    found = reader.read_thread_rows([thread_id for thread_id, _, _ in moved])
    problems.extend(found.problems)
    rows = found.value
    index.put(store, indexed_facts(reader, rows, version, problems))
    newest = max([state.watermark or "", *(head for _, _, head in moved)])
    state = replace(state, watermark=newest or None)
    index.save_state(state)
    if len(rows) == len(moved):  # every moved thread read (a side store's problem is the watermark's too)
        _caught_up(None, marked, mark)
    return Freshness(
        state,
        ready=True,
        moved=len(moved),
        caught_up=len(rows),
        needs_builder=stale_pass,
        records_due=bool(rows),
        problems=problems,
    )


def _caught_up(quiet: Key | None, marked: Key, mark: Hashable | None) -> None:
    """A look left nothing behind: the file is quiet at its fingerprint, and every row up to `mark` is in
    the index, so the next look in this process asks only for rows after it."""
    if quiet is not None:
        _QUIET.put(quiet, True)
    if mark is not None:
        _MARKS.put(marked, mark)


# -- the builder -----------------------------------------------------------------------------------------


def build(
    reader_for: Callable[[int], MycelReader],
    index: FleetIndexStore,
    *,
    chunk: int = CHUNK,
    on_progress: Callable[[IndexState], None] | None = None,
) -> IndexState | None:
    """One full pass: every thread the stores hold, computed where the index lacks it under this version,
    then threads the stores no longer hold dropped. None when another builder holds the lock.

    `reader_for(row_cap)` opens the reader (the builder's has no row cap that could drop threads)."""
    reader = reader_for(BUILD_ROW_CAP)
    store, version = store_name(reader), index_version(reader)
    with index.builder_lock(store) as mine:
        if not mine:
            return None
        before = index.state(store)
        started = datetime.now(UTC)
        state = IndexState(
            store,
            before.version if before is not None and before.complete else version,
            complete=before is not None and before.complete and before.version == version,
            watermark=before.watermark if before is not None else None,
            started_at=started,
            finished_at=before.finished_at if before is not None else None,
        )
        index.save_state(state)
        try:
            state = _full_pass(reader, index, state, version, chunk, on_progress)
        except Exception as exc:
            log.exception("fleet index: the build of %s stopped", store)
            index.save_state(replace(state, error=f"{type(exc).__name__}: {exc}"))
            raise
        return state


def _full_pass(
    reader: MycelReader,
    index: FleetIndexStore,
    state: IndexState,
    version: str,
    chunk: int,
    on_progress: Callable[[IndexState], None] | None,
) -> IndexState:
    listed = reader.list_threads()
    agents = reader.list_agents()
    rows = [*listed.value, *registered_only_rows(agents.value, (r.thread_id for r in listed.value))]
    # The watermark is the newest head of this very read: a thread moving after it has a newer head.
    watermark = max((r.head_checkpoint_id or "" for r in rows), default="") or state.watermark
    held = index.indexed_heads(state.store, None)
    todo = [r for r in rows if held.get(r.thread_id) != (r.head_checkpoint_id, r.checkpoints, version)]
    # Rows whose facts stand still refresh what moves without a head (names, queue, sandbox, bytes).
    fresh_rows = [
        r
        for r in rows
        if r.thread_id in held and held[r.thread_id] == (r.head_checkpoint_id, r.checkpoints, version)
    ]
    state = replace(state, total=len(rows), done=len(rows) - len(todo), error="")
    index.save_state(state)
    problems: list[StoreProblem] = []
    for start in range(0, len(todo), chunk):
        part = todo[start : start + chunk]
        index.put(state.store, indexed_facts(reader, part, version, problems))
        state = replace(state, done=state.done + len(part))
        index.save_state(state)
        if on_progress is not None:
            on_progress(state)
    _refresh_side_facts(reader, index, state.store, fresh_rows, version)
    index.drop_except(state.store, {r.thread_id for r in rows})
    state = replace(state, version=version, complete=True, watermark=watermark, finished_at=datetime.now(UTC))
    index.save_state(state)
    # One line per pass: how many threads it computed tells a second builder's pass (nothing) from a rebuild.
    log.info("fleet index: pass over %s done: %d threads, %d computed", state.store, len(rows), len(todo))
    return state


def _refresh_side_facts(
    reader: MycelReader, index: FleetIndexStore, store: str, rows: Sequence[ThreadRow], version: str
) -> None:
    """Rows whose head stood still keep their head facts; what the side stores say is taken afresh."""
    if not rows:
        return
    kept = {t.thread_id: t for t in index_rows(index, store, [r.thread_id for r in rows])}
    changed = [
        replace(kept[r.thread_id], row=replace(r, estimated_tokens=kept[r.thread_id].estimated_tokens))
        for r in rows
        if r.thread_id in kept
        and replace(r, estimated_tokens=None) != replace(kept[r.thread_id].row, estimated_tokens=None)
    ]
    # Pending writes grow a thread's bytes under a standing head: its footprint is read again.
    regrown = [t.thread_id for t in changed if t.row.bytes_on_disk != kept[t.thread_id].row.bytes_on_disk]
    footprints = footprints_of(reader, regrown, []) if regrown else {}
    changed = [
        replace(t, footprint=footprints[t.thread_id]) if t.thread_id in footprints else t for t in changed
    ]
    for start in range(0, len(changed), CHUNK):
        index.put(store, changed[start : start + CHUNK])


def index_rows(index: FleetIndexStore, store: str, thread_ids: Sequence[str]) -> list[IndexedThread]:
    """The index's facts of these threads (any order)."""
    found: list[IndexedThread] = []
    for start in range(0, len(thread_ids), 5000):
        wanted = frozenset(thread_ids[start : start + 5000])
        _, _, page = index.page(
            store, IndexQuery(sort="thread", offset=0, limit=len(wanted), thread_ids=wanted)
        )
        found.extend(page)
    return found


def build_until_done(
    reader_for: Callable[[int], MycelReader],
    index: FleetIndexStore,
    *,
    wait_s: float = 0.5,
    on_progress: Callable[[IndexState], None] | None = None,
) -> IndexState | None:
    """Build, or wait for the builder another process runs, until the index is complete (the command)."""
    while True:
        state = build(reader_for, index, on_progress=on_progress)
        if state is not None:
            return state
        reader = reader_for(BUILD_ROW_CAP)
        current = index.state(store_name(reader))
        if current is not None and current.complete and current.version == index_version(reader):
            return current
        time.sleep(wait_s)


# -- what the command line prints ------------------------------------------------------------------------


def indexed_fleet_rows(
    reader: MycelReader, index: FleetIndexStore
) -> tuple[list[dict[str, Any]], list[StoreProblem]] | None:
    """`threads --json`'s rows from the index, newest activity first, after a look; None when the index
    cannot answer yet (not built, or built under another version)."""
    freshness = look(reader, index)
    if not freshness.ready:
        return None
    store = store_name(reader)
    listed: list[ThreadRow] = []
    while True:
        _, _, part = index.page(store, IndexQuery(offset=len(listed), limit=5000))
        listed.extend(t.row for t in part)
        if len(part) < 5000:
            break
    agents = reader.list_agents()
    problems = [*freshness.problems, *agents.problems]
    return rows_json(listed, agents.value), problems


def index_line(reader: MycelReader, index: FleetIndexStore) -> dict[str, Any]:
    """`status`'s line for the fleet index: complete, being built (how far), or not built."""
    state = index.state(store_name(reader))
    current = state is not None and state.version == index_version(reader)
    if state is None:
        note = "not built (the dashboard builds it for a fleet it lists, or: manage.py build_fleet_index)"
    elif state.complete and current:
        note = f"complete: {state.total:,} threads" + (
            f", as of {state.finished_at:%Y-%m-%d %H:%M} UTC" if state.finished_at else ""
        )
    else:
        why = "being built" if state.complete is False else "being rebuilt (rules or config changed)"
        note = f"{why}: {state.done:,} of {state.total:,} threads" + (
            f"; last error: {state.error}" if state.error else ""
        )
    return {
        "store": "fleet index",
        "engine": "dashboard database",
        "location": "",
        "schema": None,
        "layout": None,
        "migration": None,
        "problem": note,
        "problem_kind": None,
        "index": {
            "complete": bool(state is not None and state.complete and current),
            "done": state.done if state is not None else 0,
            "total": state.total if state is not None else 0,
            "finished_at": state.finished_at.isoformat() if state is not None and state.finished_at else None,
            "error": state.error if state is not None else "",
        },
    }

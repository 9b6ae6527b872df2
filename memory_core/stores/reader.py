"""MycelReader: every read the dashboard and the CLI make of Mycel's data, behind one small API.

Each call asks the backend (backend.py: SQLite first, sqlite_backend.py) for what it needs, answers from
one snapshot per store, and returns a Result: the value plus the problems met on the way (missing file or
table, lock, damage, time limit, row cap). Nothing raises out of here for bad data; secrets are redacted
before any record exists. What is derived here (series, decoded states, lists) is kept in memos
(memory_core/memo.py), keyed by the backend's identity and version.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from memory_core.breaker import breaker_of
from memory_core.footprint.facts import ChannelBytes, StoreSpace, TableMeasure, ThreadBytes
from memory_core.memo import Key, Memo
from memory_core.messages import Message, MessageType
from memory_core.records import (
    AgentRecord,
    BreakerState,
    CheckpointRow,
    CheckpointState,
    FileOperation,
    ProblemKind,
    QueueItem,
    RunEvent,
    SandboxState,
    SpillFile,
    StoreFileStatus,
    StoreProblem,
    SummaryRow,
    ThreadRow,
)
from memory_core.stores import spill as spill_store
from memory_core.stores.backend import CheckpointSnapshot, Metadata, Payload, StoreBackend
from memory_core.stores.checkpoints import (
    CheckpointMeta,
    DecodedCheckpoint,
    decode_checkpoint,
    time_of_checkpoint_id,
)
from memory_core.stores.decode import UnreadableBlob
from memory_core.stores.engine import backend_for
from memory_core.stores.locations import MycelLocations
from memory_core.stores.message_deltas import AppendedMessages, MessagesSince, messages_since
from memory_core.stores.message_times import Times, message_times
from memory_core.stores.series import Series, SeriesPoint, build_series
from memory_core.stores.table_measures import load_measure, save_measure
from memory_core.stores.thread_list import derived, listing
from memory_core.tokens import TokenCounter, default_counter, estimate_tokens

T = TypeVar("T")

# A list or row read while a file was locked or slow is not kept: the next request should try again.
_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})


@dataclass(frozen=True, slots=True)
class _Decoded:
    """What a payload decodes to, with its series numbers (or why it cannot be read)."""

    checkpoint: DecodedCheckpoint | None
    point: SeriesPoint


# What the reader derives, shared by every reader in the process (the dashboard makes one per request).
# The rule for all of them is stated once in memory_core/memo.py: keys carry the store's identity (or the
# files' version) and the checkpoints a value came from, so nothing here goes stale.
SERIES: Memo[Series] = Memo("stores.series", max_entries=32)
METADATA: Memo[dict[str, tuple[Any, str | None]]] = Memo("stores.checkpoint_metadata", max_entries=32)
# Decoded states: every thread page, full text and what-if of a thread reads the same head, and decoding a
# 2,000-message checkpoint costs far more than reading and hashing its bytes.
DECODED: Memo[_Decoded] = Memo("stores.decoded_checkpoints", max_entries=8)
THREAD_LISTS: Memo[Result[tuple[ThreadRow, ...]]] = Memo("stores.thread_lists", max_entries=4)
THREAD_ROWS: Memo[Result[ThreadRow | None]] = Memo("stores.thread_rows", max_entries=256)
AGENTS: Memo[Result[tuple[AgentRecord, ...]]] = Memo("stores.agents", max_entries=4)
# The fleet's bytes per checkpoint, with an index by thread id (the first store holding it, as the list).
FLEET_BYTES: Memo[tuple[Result[tuple[ThreadBytes, ...]], dict[str, ThreadBytes]]] = Memo(
    "stores.fleet_bytes", max_entries=4
)
THREAD_BYTES: Memo[Result[ThreadBytes | None]] = Memo("stores.thread_bytes", max_entries=256)
# Each thread's bytes under the backend's key for it (KnownBytes): after a commit only the threads it moved
# are read again, and of those only the checkpoints past the newest one remembered (`latest`). Two entries
# per thread, sized for a fleet of 100,000 threads and more (at 100,000 the old 100,000 entries made every
# commit re-read every thread: 26 s of Storage on PostgreSQL). The values are the fleet's own, shared.
KEPT_THREAD_BYTES: Memo[ThreadBytes] = Memo("stores.kept_thread_bytes", max_entries=250_000)
STORE_SPACE: Memo[Result[tuple[StoreSpace, ...]]] = Memo("stores.store_space", max_entries=4)
# Each SQLite file's tables as last measured, by path and inode: a commit re-reads the file's size and free
# pages, not every page of it (TableMeasure: until its pages move by more than MEASURE_DRIFT).
KEPT_TABLES: Memo[TableMeasure] = Memo("stores.kept_tables", max_entries=64)
CHANNEL_BYTES: Memo[Result[tuple[str | None, tuple[ChannelBytes, ...]]]] = Memo(
    "stores.channel_bytes", max_entries=64
)


def _clean(result: Result[Any]) -> bool:
    return not any(p.kind in _TRANSIENT for p in result.problems)


@dataclass(frozen=True, slots=True)
class Result(Generic[T]):
    """A value and the problems met while reading it (empty when everything was clean)."""

    value: T
    problems: tuple[StoreProblem, ...] = ()


class MycelReader:
    """Read-only access to one Mycel data home (see MycelLocations for where each file is), through one
    StoreBackend (SQLite by default)."""

    def __init__(
        self,
        locations: MycelLocations,
        *,
        query_timeout_s: float = 5.0,
        row_cap: int = 100_000,
        facts_folder: Path | None = None,
        backend: StoreBackend | None = None,
    ) -> None:
        self.locations = locations
        # Where the thread list keeps what it derives, so a new process starts warm (see derived.py).
        self.facts_folder = facts_folder
        self.query_timeout_s = query_timeout_s
        self.row_cap = row_cap
        # The engine Mycel's configuration names (SQLite files, or LEON_POSTGRES_URL) unless told
        # otherwise: the engine is the backend's business alone.
        self.backend: StoreBackend = backend or backend_for(
            locations, query_timeout_s=query_timeout_s, row_cap=row_cap
        )

    def _counter(self) -> TokenCounter:
        return default_counter()

    @property
    def store_key(self) -> Hashable:
        """What a memo keys this data home's derived values on: the checkpoint store's identity (a SQLite
        file's path and inode, a Postgres database's masked URL), so two stores never share a key."""
        return self.backend.identity()

    # -- files ---------------------------------------------------------------------------------------

    def file_status(self) -> list[StoreFileStatus]:
        """One line per Mycel file: present or not, size, tables, schema remarks, the problem if any."""
        return self.backend.file_status()

    # -- threads -------------------------------------------------------------------------------------

    def list_threads(self) -> Result[tuple[ThreadRow, ...]]:
        """Every thread known to the checkpoints, the threads table, the queue or the summaries.

        `messages` is the head checkpoint's count; `estimated_tokens` is left None here (get_thread fills it).
        """
        # The whole list is kept per version of the stores (StoreBackend.version): a new commit to any
        # store gives a new version, so a kept list is never older than the stores it was read from. The
        # very same immutable tuple while the files are unchanged: callers may key derived values
        # (orderings, selections) on its identity.
        return THREAD_LISTS.get_or_compute(Key(self.backend.version()), self._read_list, keep=_clean)

    def _read_list(self) -> Result[tuple[ThreadRow, ...]]:
        rows, problems = self._thread_rows(None)
        return Result(tuple(rows), tuple(problems))

    def get_thread(self, thread_id: str) -> Result[ThreadRow | None]:
        """One thread's list row with Mycel's estimate of its head; None when no store knows the id.

        Kept per version of the files, like the list: every page of a thread asks for its row first.
        """
        key = Key(self.backend.version(), thread=thread_id)
        return THREAD_ROWS.get_or_compute(key, lambda: self._read_thread(thread_id), keep=_clean)

    def read_thread_rows(self, thread_ids: Sequence[str]) -> Result[list[ThreadRow]]:
        """These threads' rows as `get_thread` gives them, read now and not kept: for a few threads out of a
        big fleet (the fleet index's look and its first page), where asking the stores' version once per
        thread would cost more than the rows (on PostgreSQL it counts the checkpoints)."""
        rows: list[ThreadRow] = []
        problems: list[StoreProblem] = []
        for thread_id in thread_ids:
            found = self._read_thread(thread_id)
            problems.extend(found.problems)
            if found.value is not None:
                rows.append(found.value)
        return Result(rows, tuple(problems))

    def head_messages(
        self, rows: Sequence[ThreadRow], problems: list[StoreProblem]
    ) -> Iterator[tuple[ThreadRow, tuple[Message, ...] | None]]:
        """Each listed thread's head messages (None when unreadable), read over one connection in one query
        and decoded one at a time, for what the list needs of many heads at once (flags, context fill)."""
        return listing.head_messages(self.backend.head_payloads, rows, problems)

    def messages_since(self, asks: Sequence[MessagesSince]) -> Result[dict[str, AppendedMessages | None]]:
        """Per asked thread, the messages its new head appended since an ancestor, read from the new
        steps' writes alone (message_deltas.py), all threads in one read; None (or no entry, when the read
        failed: the problem says why) where the writes cannot say it exactly and the head must be decoded."""
        problems: list[StoreProblem] = []
        found: dict[str, AppendedMessages | None] = {}
        with self.backend.thread_snapshots(problems) as open_thread:
            if open_thread is not None:
                for ask in asks:
                    found[ask.thread_id] = messages_since(open_thread(ask.thread_id), ask)
        return Result(found, tuple(problems))

    def message_times(self, rows: Sequence[ThreadRow]) -> Result[dict[str, Times | None]]:
        """Per listed thread, when each of its head's messages was written (message_times.py: the
        checkpoint its step made), from the steps' writes, all threads in one read; None where the writes
        cannot say it (first_holders finds it from the checkpoints then)."""
        problems: list[StoreProblem] = []
        found: dict[str, Times | None] = {}
        with self.backend.thread_snapshots(problems) as open_thread:
            if open_thread is not None:
                for row in rows:
                    if row.head_checkpoint_id is not None:
                        snapshot = open_thread(row.thread_id)
                        found[row.thread_id] = message_times(snapshot, row.head_checkpoint_id, row.messages)
        return Result(found, tuple(problems))

    def head_estimates(self, rows: Sequence[ThreadRow]) -> Result[dict[str, int | None]]:
        """Mycel's estimate (chars // 2) of each listed thread's head messages, for the context-fill column.

        Derived once per head and kept with its head facts, in memory and in the facts file, so sorting
        10,000 threads by context fill decodes each head once, not once per request or per worker. None
        where a thread has no readable head.
        """
        found, problems = listing.head_estimates(self.head_messages, self._known_facts(), rows)
        return Result(found, tuple(problems))

    def keep_estimates(self, estimates: Iterable[tuple[ThreadRow, int | None]]) -> None:
        """Keep estimates of listed threads' heads computed elsewhere (a page that decoded them anyway)."""
        listing.keep_estimates(self._known_facts(), estimates)

    def _known_facts(self) -> derived.DerivedFacts:
        return derived.facts_for(self.backend.identity(), self.facts_folder)

    def _read_thread(self, thread_id: str) -> Result[ThreadRow | None]:
        rows, problems = self._thread_rows(thread_id)
        if not rows:
            return Result(None, tuple(problems))
        row = rows[0]
        # Head facts kept with their estimate already say what decoding the head would (a CLI run, a new
        # worker): the head is then decoded only by whoever needs its messages.
        if row.head_checkpoint_id is not None and (row.messages is None or row.estimated_tokens is None):
            state = self.get_state(thread_id, row.head_checkpoint_id)
            problems.extend(state.problems)
            if state.value is not None and state.value.checkpoint.readable:
                row = replace(
                    row,
                    messages=len(state.value.messages),
                    estimated_tokens=state.value.checkpoint.estimated_tokens,
                )
                # The list's context-fill column needs this very estimate: keep it with the head facts.
                self.keep_estimates([(row, row.estimated_tokens)])
        return Result(row, tuple(problems))

    def _thread_rows(self, thread_id: str | None) -> tuple[list[ThreadRow], list[StoreProblem]]:
        return self.backend.thread_rows(self._known_facts(), thread_id)

    # -- checkpoints ---------------------------------------------------------------------------------

    def list_checkpoints(self, thread_id: str) -> Result[list[CheckpointRow]]:
        """Every checkpoint of a thread, NEWEST FIRST (the saver's own order; the first is the active one).

        Each row carries parents (forks share a parent), redacted metadata, and the series: message count,
        Mycel's chars//2 estimate, tiktoken count and the newest AI message's provider input tokens.
        """
        problems: list[StoreProblem] = []
        rows: list[CheckpointRow] = []
        # Metadata sits after the payload in every SQLite record, so reading it walks the thread's whole
        # byte range; a second read fetches it while this one builds the series from a few blobs + writes.
        # Checkpoint rows are never rewritten, so metadata is kept by id and the two snapshots agree on
        # every id both contain.
        metadata_problems: list[StoreProblem] = []
        fetched: Metadata = {}

        def read_metadata(missing: list[str]) -> None:
            fetched.update(self.backend.checkpoint_metadata(thread_id, missing, metadata_problems))

        # Metadata accumulates per thread by checkpoint id (a row, once written, never changes).
        cache_key = Key(self.backend.identity(), thread=thread_id)
        known = dict(METADATA.get(cache_key) or {})
        metas: list[CheckpointMeta] = []
        series: Series | None = None
        with self.backend.checkpoints(thread_id, problems) as snapshot:
            if snapshot is None:
                return Result(rows, tuple(problems))
            metas = snapshot.skeleton()
            missing = [m.checkpoint_id for m in metas if m.checkpoint_id not in known]
            worker: threading.Thread | None = None
            if missing:
                here = snapshot.metadata_here(missing)
                if here is not None:
                    fetched.update(here)
                else:
                    worker = threading.Thread(target=read_metadata, args=(missing,), daemon=True)
                    worker.start()
            try:
                series = self._series(snapshot, thread_id, metas) if metas else None
            finally:
                if worker is not None:
                    worker.join()
            where = (snapshot.store, snapshot.location)
        problems.extend(p for p in metadata_problems if p not in problems)
        known.update(fetched)
        METADATA.put(cache_key, known)
        for meta in reversed(metas):
            found, why = known.get(meta.checkpoint_id, ({}, None))
            meta = replace(meta, metadata=found, metadata_problem=why)
            point = series.points.get(meta.checkpoint_id) if series else None
            rows.append(_checkpoint_row(meta, point))
            if point is not None and not point.readable:
                problems.append(_unreadable_problem(where, thread_id, meta.checkpoint_id, point.problem))
        return Result(rows, tuple(problems))

    def checkpoint_series(self, thread_id: str) -> Series | None:
        """The thread's per-checkpoint series and how it was built (payloads decoded, states rebuilt from
        writes, fallbacks); the very one `list_checkpoints` uses. None when the thread has no checkpoint."""
        with self.backend.checkpoints(thread_id, []) as snapshot:
            if snapshot is not None:
                metas = snapshot.skeleton()
                return self._series(snapshot, thread_id, metas) if metas else None
        return None

    def _series(self, snapshot: CheckpointSnapshot, thread_id: str, metas: list[CheckpointMeta]) -> Series:
        writes = snapshot.message_writes()
        key = Key(
            self.backend.identity(),
            thread=thread_id,
            head=max(m.checkpoint_id for m in metas),
            # A task's writes grow under an unchanged head, and the newest rows' sizes catch a rewrite.
            what=(
                len(metas),
                metas[-1].checkpoint_id,
                len(writes) if writes is not None else -1,
                tuple(m.size for m in metas[-3:]),
            ),
        )
        return SERIES.get_or_compute(
            key,
            lambda: build_series(
                metas,
                writes,
                snapshot.payload,
                count=self._counter().count,
                decoded_before=self._decoded_before,
            ),
        )

    def _decoded_before(self, checkpoint_id: str, payload: Payload) -> tuple[Message, ...] | None:
        # The head a page (or get_thread) just decoded: redaction changes no text and no count, so its
        # messages serve the series as well as a second, unredacted decode would.
        found = DECODED.get(_decoded_key(payload))
        return found.checkpoint.messages if found is not None and found.checkpoint is not None else None

    def head_checkpoint_id(self, thread_id: str) -> str | None:
        """The active checkpoint id (greatest id), or None when the thread has none or the file is unreadable."""
        with self.backend.checkpoints(thread_id, []) as snapshot:
            return snapshot.head_id() if snapshot is not None else None

    def get_state(self, thread_id: str, checkpoint_id: str | None = None) -> Result[CheckpointState | None]:
        """The decoded state at a checkpoint (the active one by default); None for an unknown id.

        An undecodable payload gives a state with `checkpoint.readable == False`, no messages and a problem.
        """
        problems: list[StoreProblem] = []
        state: CheckpointState | None = None
        meta: CheckpointMeta | None = None
        payload: Payload | None = None
        with self.backend.checkpoints(thread_id, problems) as snapshot:
            if snapshot is not None:
                target = checkpoint_id or snapshot.head_id()
                meta = snapshot.meta(target) if target else None
                payload = snapshot.payload(target) if meta and target else None
                where = (snapshot.store, snapshot.location)
        if meta is not None and payload is not None:
            state = self._decode_state(meta, payload)
            if not state.checkpoint.readable:
                problems.append(
                    _unreadable_problem(where, thread_id, meta.checkpoint_id, state.checkpoint.problem)
                )
        return Result(state, tuple(problems))

    def _decode_state(self, meta: CheckpointMeta, payload: Payload) -> CheckpointState:
        found = self._decode_cached(meta.checkpoint_id, payload)
        decoded, point = found.checkpoint, replace(found.point, checkpoint_id=meta.checkpoint_id)
        if decoded is None:
            return CheckpointState(checkpoint=_checkpoint_row(meta, point), messages=())
        row = _checkpoint_row(meta, point)
        if decoded.ts is not None:
            row = replace(row, created_at=decoded.ts)
        return CheckpointState(checkpoint=row, messages=decoded.messages, channels=decoded.channels)

    def _decode_cached(self, checkpoint_id: str, payload: Payload) -> _Decoded:
        # Keyed by the bytes themselves (type + digest), so a rewritten or replaced row can never be
        # answered from what an older payload decoded to. Decoded records are frozen: safe to share.
        kind, blob = payload
        # An unreadable payload is not kept (it is rare, and its problem is cheap to find again).
        return DECODED.get_or_compute(
            _decoded_key(payload),
            lambda: self._decode(checkpoint_id, kind, blob),
            keep=lambda found: found.checkpoint is not None,
        )

    def _decode(self, checkpoint_id: str, kind: str | None, blob: bytes | None) -> _Decoded:
        try:
            decoded = decode_checkpoint(kind, blob)
        except UnreadableBlob as exc:
            point = SeriesPoint(checkpoint_id, None, None, None, None, readable=False, problem=str(exc))
            return _Decoded(None, point)
        counter = self._counter()
        return _Decoded(
            decoded,
            SeriesPoint(
                checkpoint_id=checkpoint_id,
                messages=len(decoded.messages),
                estimated_tokens=estimate_tokens(decoded.messages),
                tiktoken_tokens=sum(counter.count(m.text) for m in decoded.messages),
                input_tokens=_newest_ai_input_tokens(decoded.messages),
            ),
        )

    def breaker(self, thread_id: str) -> Result[BreakerState | None]:
        """Mycel dev's compaction breaker at the thread's head; None on main layouts (no such channel)."""
        state = self.get_state(thread_id)
        found = breaker_of(state.value.channels) if state.value is not None else None
        return Result(found, state.problems)

    # -- the other stores ----------------------------------------------------------------------------

    def list_summaries(self, thread_id: str) -> Result[list[SummaryRow]]:
        """A thread's summaries from summary.db (web threads) and leon.db (the others), oldest first."""
        problems: list[StoreProblem] = []
        items = self.backend.list_summaries(thread_id, problems)
        items.sort(key=lambda s: (s.created_at.isoformat() if s.created_at else "", s.compacted_at))
        return Result(items, tuple(problems))

    def list_file_operations(self, thread_id: str) -> Result[list[FileOperation]]:
        """A thread's file operations from file_ops.db and leon.db, oldest first."""
        problems: list[StoreProblem] = []
        items = self.backend.list_file_operations(thread_id, problems)
        items.sort(key=lambda op: op.timestamp.timestamp() if op.timestamp else 0.0)
        return Result(items, tuple(problems))

    def list_queue(self, thread_id: str | None = None) -> Result[list[QueueItem]]:
        """Pending queue items (of one thread, or all), oldest first; consumed items are gone (§7.1)."""
        problems: list[StoreProblem] = []
        items = self.backend.list_queue(thread_id, problems)
        return Result(items, tuple(problems))

    def list_run_events(self, thread_id: str) -> Result[list[RunEvent]]:
        """A thread's run events in order (Mycel keeps only the latest run plus activity events)."""
        problems: list[StoreProblem] = []
        items = self.backend.list_run_events(thread_id, problems)
        return Result(items, tuple(problems))

    def get_sandbox(self, thread_id: str) -> Result[SandboxState | None]:
        """The thread's leases, instances, terminals, sessions, lease events, snapshots and volumes."""
        problems: list[StoreProblem] = []
        state = self.backend.get_sandbox(thread_id, problems)
        return Result(state, tuple(problems))

    def list_agents(self) -> Result[tuple[AgentRecord, ...]]:
        """Every sub-agent agent_registry.db names, oldest first, kept per version of the files (the very
        same tuple while they are unchanged, like the thread list)."""

        def read() -> Result[tuple[AgentRecord, ...]]:
            problems: list[StoreProblem] = []
            agents = self.backend.list_agents(problems)
            return Result(tuple(agents), tuple(problems))

        return AGENTS.get_or_compute(Key(self.backend.agents_version()), read, keep=_clean)

    # -- storage -------------------------------------------------------------------------------------

    def fleet_bytes(self) -> Result[tuple[ThreadBytes, ...]]:
        """Every thread's bytes per checkpoint in every checkpoint store (both PostgreSQL layouts when
        both exist), kept per version of the stores like the thread list; no blob is decoded. Each
        thread's `total` is its `bytes_on_disk` in the thread list."""
        return self._fleet()[0]

    def _fleet(self) -> tuple[Result[tuple[ThreadBytes, ...]], dict[str, ThreadBytes]]:
        def read() -> tuple[Result[tuple[ThreadBytes, ...]], dict[str, ThreadBytes]]:
            problems: list[StoreProblem] = []
            threads = tuple(self.backend.thread_bytes(None, problems, _KeptBytes(self.backend.identity())))
            index: dict[str, ThreadBytes] = {}
            for thread in threads:
                index.setdefault(thread.thread_id, thread)
            return Result(threads, tuple(problems)), index

        return FLEET_BYTES.get_or_compute(
            Key(self.backend.version()), read, keep=lambda found: _clean(found[0])
        )

    def thread_bytes(self, thread_id: str) -> Result[ThreadBytes | None]:
        """One thread's bytes per checkpoint (from the store the thread list reads it from); None when no
        checkpoint store holds it. Taken from the fleet's when that is kept, else read for this thread."""
        version = self.backend.version()
        fleet = FLEET_BYTES.get(Key(version))
        if fleet is not None:
            return Result(fleet[1].get(thread_id), fleet[0].problems)

        def read() -> Result[ThreadBytes | None]:
            problems: list[StoreProblem] = []
            # The facts kept per thread serve here too: a commit elsewhere does not re-read this thread.
            found = self.backend.thread_bytes([thread_id], problems, _KeptBytes(self.backend.identity()))
            return Result(found[0] if found else None, tuple(problems))

        return THREAD_BYTES.get_or_compute(Key(version, thread=thread_id), read, keep=_clean)

    def read_thread_bytes(self, thread_ids: Sequence[str]) -> Result[dict[str, ThreadBytes]]:
        """These threads' bytes per checkpoint, read now in one pass and not kept (the fleet index's, for
        the threads it recomputes); a thread no checkpoint store holds has no entry."""
        problems: list[StoreProblem] = []
        found: dict[str, ThreadBytes] = {}
        if thread_ids:
            for thread in self.backend.thread_bytes(list(thread_ids), problems):
                found.setdefault(thread.thread_id, thread)  # the store the thread list reads it from first
        return Result(found, tuple(problems))

    def store_space(self) -> Result[tuple[StoreSpace, ...]]:
        """One StoreSpace per Mycel SQLite file that exists (dbstat, or estimated where it is not built
        in) and per PostgreSQL schema holding Mycel's tables; kept per version of the stores."""

        def read() -> Result[tuple[StoreSpace, ...]]:
            problems: list[StoreProblem] = []
            spaces = self.backend.store_space(problems, _KeptTables(self.facts_folder))
            return Result(tuple(spaces), tuple(problems))

        return STORE_SPACE.get_or_compute(Key(self.backend.space_version()), read, keep=_clean)

    def channel_bytes(
        self, thread_id: str, checkpoint_id: str | None = None
    ) -> Result[tuple[str | None, tuple[ChannelBytes, ...]]]:
        """(the checkpoint measured, its bytes per channel, by name) of one checkpoint, the head by
        default; (None, ()) when there is no such checkpoint. Never decodes a value: SQLite's msgpack is
        walked by lengths (msgpack_spans.py), PostgreSQL's sizes come from pg_column_size."""

        def read() -> Result[tuple[str | None, tuple[ChannelBytes, ...]]]:
            problems: list[StoreProblem] = []
            found, channels = self.backend.channel_bytes(thread_id, checkpoint_id, problems)
            return Result((found, tuple(channels)), tuple(problems))

        key = Key(self.backend.version(), thread=thread_id, head=checkpoint_id)
        return CHANNEL_BYTES.get_or_compute(key, read, keep=_clean)

    def get_spill_file(self, thread_id: str, tool_call_id: str) -> Result[SpillFile | None]:
        """A spilled tool output, only from inside a workspace's `.leon/tool-results` folder.

        Workspaces tried: the thread's cwd, then the folder named in the ToolMessage's spill notice; each
        also re-rooted under this data home. None when no such file exists; refused ids give a problem.
        """
        problems: list[StoreProblem] = []
        if not spill_store.is_safe_tool_call_id(tool_call_id):
            problems.append(
                StoreProblem(
                    ProblemKind.REFUSED, "spill", f"refused tool call id {tool_call_id!r}: not a plain name"
                )
            )
            return Result(None, tuple(problems))
        homes = list(dict.fromkeys([self.locations.config_home, self.locations.main.parent]))
        tried: list[str] = []
        for workspace in self._spill_workspaces(thread_id, tool_call_id, problems):
            for candidate in spill_store.relocated(workspace, homes):
                tried.append(str(candidate))
                path = spill_store.confined_spill_path(candidate, tool_call_id)
                if path is not None:
                    return Result(spill_store.read_spill(path, tool_call_id), tuple(problems))
        problems.append(
            StoreProblem(
                ProblemKind.MISSING_FILE,
                "spill",
                f"no spill file for {tool_call_id} inside a .leon/tool-results folder of: {', '.join(tried) or '-'}",
            )
        )
        return Result(None, tuple(problems))

    def _spill_workspaces(
        self, thread_id: str, tool_call_id: str, problems: list[StoreProblem]
    ) -> Iterator[Path]:
        rows, _ = self._thread_rows(thread_id)
        if rows and rows[0].cwd:
            yield Path(rows[0].cwd)
        state = self.get_state(thread_id)
        problems.extend(state.problems)
        if state.value is None:
            return
        for message in state.value.messages:
            if message.type is MessageType.TOOL and message.tool_call_id == tool_call_id:
                workspace = spill_store.workspace_from_text(message.text)
                if workspace is not None:
                    yield workspace


@dataclass(frozen=True, slots=True)
class _KeptBytes:
    """KnownBytes over KEPT_THREAD_BYTES, for one store identity."""

    store: Hashable

    def lookup(self, thread_id: str, key: Hashable) -> ThreadBytes | None:
        return KEPT_THREAD_BYTES.get(Key(self.store, thread=thread_id, what=key))

    def remember(self, thread_id: str, key: Hashable, value: ThreadBytes) -> None:
        KEPT_THREAD_BYTES.put(Key(self.store, thread=thread_id, what=key), value)
        KEPT_THREAD_BYTES.put(Key(self.store, thread=thread_id, what="latest"), value)

    def latest(self, thread_id: str) -> ThreadBytes | None:
        return KEPT_THREAD_BYTES.get(Key(self.store, thread=thread_id, what="latest"))


class _KeptTables:
    """KnownTables over KEPT_TABLES, and over the facts folder's file beneath it when there is one (a new
    process reuses the last measure instead of walking the file again)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder

    def lookup(self, where: Hashable) -> TableMeasure | None:
        found = KEPT_TABLES.get(Key(where))
        if found is None and self.folder is not None:
            found = load_measure(self.folder, where)
            if found is not None:
                KEPT_TABLES.put(Key(where), found)
        return found

    def remember(self, where: Hashable, measure: TableMeasure) -> None:
        if KEPT_TABLES.get(Key(where)) is measure:
            return  # reused: nothing new to keep
        KEPT_TABLES.put(Key(where), measure)
        if self.folder is not None:
            save_measure(self.folder, where, measure)


def _decoded_key(payload: Payload) -> Key:
    kind, blob = payload
    # SQLite columns take any type; a TEXT or INTEGER payload is keyed by its text (decoding refuses it).
    data = blob if isinstance(blob, bytes) else repr(blob).encode()
    # A content hash is its own store identity and version.
    return Key((kind, hashlib.blake2b(data, digest_size=20).digest()))


def _newest_ai_input_tokens(messages: tuple[Message, ...]) -> int | None:
    for message in reversed(messages):
        if message.type is MessageType.AI:
            return message.input_tokens
    return None


def _checkpoint_row(meta: CheckpointMeta, point: SeriesPoint | None) -> CheckpointRow:
    run_id = meta.metadata.get("run_id")
    model = meta.metadata.get("model")
    problem = point.problem if point else None
    if meta.metadata_problem:
        problem = (
            f"{problem}; metadata: {meta.metadata_problem}"
            if problem
            else f"metadata: {meta.metadata_problem}"
        )
    return CheckpointRow(
        checkpoint_id=meta.checkpoint_id,
        parent_checkpoint_id=meta.parent_checkpoint_id,
        step=meta.step,
        source=meta.source,
        created_at=time_of_checkpoint_id(meta.checkpoint_id),
        run_id=run_id if isinstance(run_id, str) else None,
        model=model if isinstance(model, str) else None,
        metadata=meta.metadata,
        messages=point.messages if point else None,
        estimated_tokens=point.estimated_tokens if point else None,
        tiktoken_tokens=point.tiktoken_tokens if point else None,
        input_tokens=point.input_tokens if point else None,
        readable=point.readable if point else True,
        problem=problem,
    )


def _unreadable_problem(
    where: tuple[str, Path | None], thread_id: str, checkpoint_id: str, why: str | None
) -> StoreProblem:
    return StoreProblem(
        ProblemKind.UNREADABLE_CHECKPOINT,
        where[0],
        f"checkpoint {checkpoint_id} of {thread_id} cannot be read: {why or 'unknown reason'}",
        where[1],
    )

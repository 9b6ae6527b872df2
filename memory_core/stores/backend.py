"""What MycelReader needs from a storage engine: the one backend protocol under the one read API.

MycelReader (reader.py) is what every screen and command reads through; everything it adds is the same
whatever holds Mycel's data: the memos, decoding without pickle, the series rebuilt from write deltas, the
spill-file search. A backend answers in the engine's own terms and turns every failure into a
StoreProblem (missing, locked, damaged, time limit, row cap), never an exception. SQLite, Mycel main's
files, is the first implementation (sqlite_backend.py). Mycel dev keeps checkpoints in PostgreSQL
(AsyncPostgresSaver's tables in schema `agent`) and the other stores in Supabase tables: a second
implementation of this protocol, with its own identity and version (e.g. the server's system id and
the newest checkpoint id, since Postgres has no file to stat), not a second reader.

Nothing here names an engine's types. A payload is a checkpoint as LangGraph's serde gives it (type and
bytes); an engine that stores channels apart (Postgres' `checkpoint_blobs`) gives its own payload type,
which the shared decoder then learns (decode.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memory_core.footprint.facts import ChannelBytes, StoreSpace, TableMeasure, ThreadBytes
from memory_core.records import (
    AgentRecord,
    CheckpointLocation,
    FileOperation,
    QueueItem,
    RunEvent,
    SandboxState,
    StoreFileStatus,
    StoreProblem,
    SummaryRow,
    ThreadRow,
)
from memory_core.rollback import CheckpointCopy, RollbackApplied
from memory_core.stores.checkpoints import CheckpointMeta
from memory_core.stores.series import WriteRow
from memory_core.stores.thread_list.derived import DerivedFacts

Payload = tuple[str | None, bytes | None]  # a checkpoint's serde type and bytes; (None, None) when absent
Metadata = dict[str, tuple[Mapping[str, Any], str | None]]  # by checkpoint id: redacted metadata, or why not
ThreadHead = tuple[str, int, str]  # thread id, root checkpoint count, head (newest) checkpoint id


class KnownBytes(Protocol):
    """Threads' byte facts kept between reads (the reader's memo), under a key the backend derives cheaply
    from what changes with them: only threads whose key moved are read again."""

    def lookup(self, thread_id: str, key: Hashable) -> ThreadBytes | None: ...

    def remember(self, thread_id: str, key: Hashable, value: ThreadBytes) -> None: ...

    def latest(self, thread_id: str) -> ThreadBytes | None:
        """The thread's facts remembered last, under whatever key: rows never rewritten need no re-read."""
        ...


class KnownTables(Protocol):
    """Files' table measures kept between reads (the reader's memo), by the file's path and inode."""

    def lookup(self, where: Hashable) -> TableMeasure | None: ...

    def remember(self, where: Hashable, measure: TableMeasure) -> None: ...


S = TypeVar("S")


@contextmanager
def one_snapshot(
    snapshots: AbstractContextManager[Callable[[str], S] | None], thread_id: str
) -> Iterator[S | None]:
    """One thread's snapshot out of a backend's `thread_snapshots` read: the one way both engines open a
    thread's checkpoints. A failure while making it becomes the read's problem, so this still yields once:
    None."""
    yielded = False
    with snapshots as snapshot_of:
        if snapshot_of is not None:
            snapshot = snapshot_of(thread_id)
            yielded = True
            yield snapshot
    if not yielded:
        yield None


def known_or_read(
    keys: Mapping[str, Hashable],
    known: KnownBytes,
    read: Callable[[Sequence[str] | None], list[ThreadBytes]],
    *,
    every_thread: bool,
) -> list[ThreadBytes]:
    """Every keyed thread's bytes, in key order: kept ones reused, the moved ones read by `read` (given
    the moved ids, or None for all when `keys` holds every thread and most moved: one pass then costs
    less than a lookup each)."""
    found: dict[str, ThreadBytes] = {}
    moved: list[str] = []
    for thread_id, key in keys.items():
        kept = known.lookup(thread_id, key)
        if kept is None:
            moved.append(thread_id)
        else:
            found[thread_id] = kept
    if moved:
        wanted = set(moved)
        for fresh in read(None if every_thread and 2 * len(moved) >= len(keys) else moved):
            if fresh.thread_id in wanted:
                known.remember(fresh.thread_id, keys[fresh.thread_id], fresh)
                found[fresh.thread_id] = fresh
    return [found[t] for t in keys if t in found]


class CheckpointSnapshot(Protocol):
    """One thread's checkpoints in one consistent read (a transaction), while its `with` block is open."""

    @property
    def store(self) -> str:
        """Which store, for problems ("main")."""
        ...

    @property
    def location(self) -> Path | None:
        """Where it is, for problems."""
        ...

    def skeleton(self) -> list[CheckpointMeta]:
        """Every checkpoint of the thread, oldest first: ids, parents, payload size; no metadata."""
        ...

    def head_id(self) -> str | None:
        """The active checkpoint: the greatest id, as LangGraph's savers pick it."""
        ...

    def meta(self, checkpoint_id: str) -> CheckpointMeta | None: ...

    def payload(self, checkpoint_id: str) -> Payload: ...

    def message_writes(self, only: Sequence[str] | None = None) -> list[WriteRow] | None:
        """The `messages` channel's write deltas of every step (or only those stored under the checkpoints
        `only` names); None when the engine keeps none."""
        ...

    def metadata_here(self, only: Sequence[str]) -> Metadata | None:
        """These checkpoints' metadata read inside this snapshot, or None when the backend would rather
        read it beside the snapshot (`StoreBackend.checkpoint_metadata`, in parallel: SQLite)."""
        ...


class StoreBackend(Protocol):
    """The reads of one Mycel data home, in one engine."""

    def copy_checkpoint(self, copy: CheckpointCopy) -> RollbackApplied:
        """Write `copy` as the thread's new head through LangGraph's own saver (the one write to the
        checkpoints; the caller audits it). The writer is loaded only here, never by a read."""
        ...

    def checkpoint_location(self) -> CheckpointLocation:
        """Where the checkpoints are, engine included: the one place that answers "which engine"."""
        ...

    def identity(self) -> Hashable:
        """The checkpoint store's identity: a replaced store never reuses what was derived from the old one."""
        ...

    def version(self) -> Hashable:
        """A cheap fingerprint of what every store holds now, taken before reading: a new commit anywhere
        gives a new version, so what is kept under it is never older than the data it was read from."""
        ...

    def heads_version(self) -> Hashable | None:
        """A fingerprint of the checkpoints alone, where one costs far less than asking which threads moved
        (a file's stat); None where it does not (PostgreSQL would count the checkpoints)."""
        ...

    def space_version(self) -> Hashable:
        """A fingerprint of the stores' space alone (what store_space measures), cheaper than `version` where
        that one is costly: PostgreSQL's relation sizes from the catalog, not its checkpoints counted."""
        ...

    def agents_version(self) -> Hashable:
        """The same, of the agent registry alone (what list_agents reads): a fleet's checkpoints may be
        costly to fingerprint, the registry's file is not."""
        ...

    def file_status(self) -> list[StoreFileStatus]:
        """One line per store: present or not, size, tables, schema remarks, the problem if any."""
        ...

    def thread_rows(
        self, known: DerivedFacts, thread_id: str | None
    ) -> tuple[list[ThreadRow], list[StoreProblem]]:
        """Every thread any store knows (or just `thread_id`), newest activity first; head facts reused
        from `known` under the same key and kept there."""
        ...

    def head_payloads(
        self, heads: Sequence[tuple[str, str]], problems: list[StoreProblem]
    ) -> Iterator[tuple[str, str, Payload]]:
        """(thread id, checkpoint id, payload) for many (thread id, checkpoint id) pairs in one read."""
        ...

    def thread_heads(self, problems: list[StoreProblem], *, since: str | None = None) -> list[ThreadHead]:
        """(thread id, root checkpoint count, head id) of every thread with a root checkpoint newer than
        `since` (every thread when None), in one query over the checkpoints' keys, with no row cap."""
        ...

    def moved_heads(
        self, problems: list[StoreProblem], *, since: str | None, mark: Hashable | None
    ) -> tuple[list[ThreadHead], Hashable | None]:
        """`thread_heads(since=since)`, or, where the store can tell which rows were written after `mark`
        (a mark this method returned), the heads of those rows' threads alone; with the mark of the store's
        newest row now, in the same read (None where the store has no such mark)."""
        ...

    def thread_counts(self, problems: list[StoreProblem], *, since: str) -> tuple[int, int]:
        """(how many threads have root checkpoints, how many of them have one newer than `since`), one
        aggregate over the checkpoints' keys: the live poll's question, whatever the number moved."""
        ...

    def newest_heads(
        self, problems: list[StoreProblem], *, limit: int, offset: int, by_id: bool, descending: bool
    ) -> tuple[int, list[ThreadHead]]:
        """How many threads have checkpoints, and one page of them ordered by head id (newest activity)
        or by thread id: what SQL alone can sort."""
        ...

    def checkpoints(
        self, thread_id: str, problems: list[StoreProblem]
    ) -> AbstractContextManager[CheckpointSnapshot | None]:
        """A consistent read of one thread's checkpoints, or None (the problem says why)."""
        ...

    def thread_snapshots(
        self, problems: list[StoreProblem]
    ) -> AbstractContextManager[Callable[[str], CheckpointSnapshot] | None]:
        """One consistent read in which any thread's checkpoints can be read (many threads, one connection),
        or None (the problem says why)."""
        ...

    def checkpoint_metadata(
        self, thread_id: str, only: Sequence[str], problems: list[StoreProblem]
    ) -> Metadata:
        """Redacted metadata of these checkpoints (its own read: it may run beside `checkpoints`)."""
        ...

    def list_summaries(self, thread_id: str, problems: list[StoreProblem]) -> list[SummaryRow]: ...

    def list_file_operations(self, thread_id: str, problems: list[StoreProblem]) -> list[FileOperation]: ...

    def list_queue(self, thread_id: str | None, problems: list[StoreProblem]) -> list[QueueItem]: ...

    def list_run_events(self, thread_id: str, problems: list[StoreProblem]) -> list[RunEvent]: ...

    def get_sandbox(self, thread_id: str, problems: list[StoreProblem]) -> SandboxState | None: ...

    def list_agents(self, problems: list[StoreProblem]) -> list[AgentRecord]:
        """Every registered sub-agent (agent_registry.db), oldest first."""
        ...

    def thread_bytes(
        self, threads: Sequence[str] | None, problems: list[StoreProblem], known: KnownBytes | None = None
    ) -> list[ThreadBytes]:
        """Every thread's bytes per checkpoint (or just these `threads`'), in every checkpoint store; no blob
        decoded; facts `known` under an unmoved key reused. Their totals are the thread list's
        `bytes_on_disk` (one accounting)."""
        ...

    def store_space(self, problems: list[StoreProblem], known: KnownTables | None = None) -> list[StoreSpace]:
        """One StoreSpace per SQLite file that exists and per PostgreSQL schema holding Mycel's tables; a
        file's tables measured `known` are reused while its pages barely moved (the space says so)."""
        ...

    def schema_bytes(self, problems: list[StoreProblem]) -> dict[str, int]:
        """Per PostgreSQL schema holding Mycel's tables (by its store label), their bytes with TOAST and
        indexes, from the catalog alone; none on SQLite, whose files' sizes say it (health.store_bytes)."""
        ...

    def channel_bytes(
        self, thread_id: str, checkpoint_id: str | None, problems: list[StoreProblem]
    ) -> tuple[str | None, list[ChannelBytes]]:
        """(the checkpoint measured, its bytes per channel): the head when `checkpoint_id` is None; (None,
        []) when the thread or checkpoint is unknown. A channel that cannot be measured gives a problem."""
        ...

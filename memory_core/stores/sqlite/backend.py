"""The SQLite backend: Mycel main's files (leon.db and the side stores beside it), read-only.

Each read opens the file it needs with `mode=ro`, a busy timeout, a per-query time limit and a row cap
(opening.py, sqlite.py), answers from one snapshot, and closes it. The table readers it composes are the
modules beside it: checkpoints.py, listing.py + threads.py (the thread list), summaries.py, file_ops.py,
queue.py, events.py, sandbox.py.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memory_core.footprint.facts import ChannelBytes, StoreSpace, ThreadBytes
from memory_core.records import (
    AgentRecord,
    CheckpointLocation,
    FileOperation,
    ProblemKind,
    QueueItem,
    RunEvent,
    SandboxState,
    StoreFileStatus,
    StoreProblem,
    SummaryRow,
    ThreadRow,
)
from memory_core.rollback import CheckpointCopy, RollbackApplied
from memory_core.stores.backend import (
    KnownBytes,
    KnownTables,
    Metadata,
    Payload,
    ThreadHead,
    known_or_read,
    one_snapshot,
)
from memory_core.stores.checkpoints import (
    CheckpointMeta,
    checkpoint_metadata,
    get_checkpoint_meta,
    head_checkpoint_id,
    list_checkpoint_skeleton,
    read_head_payloads,
    read_payload,
)
from memory_core.stores.locations import MycelLocations, StoreRole
from memory_core.stores.opening import (
    FileIdentity,
    StoreOpener,
    check_checkpoint_layout,
    identity_of,
    unless_found,
)
from memory_core.stores.schema import describe_file
from memory_core.stores.series import WriteRow
from memory_core.stores.sqlite import agent_registry as agent_registry_store
from memory_core.stores.sqlite import events as events_store
from memory_core.stores.sqlite import file_ops as file_ops_store
from memory_core.stores.sqlite import queue as queue_store
from memory_core.stores.sqlite import sandbox as sandbox_store
from memory_core.stores.sqlite import storage_facts
from memory_core.stores.sqlite import summaries as summaries_store
from memory_core.stores.sqlite.connect import ReadOnlyDB, file_header, journal_mode_of
from memory_core.stores.thread_list import fleet_heads, listing
from memory_core.stores.thread_list.derived import DerivedFacts

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """One thread's checkpoints inside one read transaction of leon.db (CheckpointSnapshot)."""

    db: ReadOnlyDB
    thread_id: str

    @property
    def store(self) -> str:
        return self.db.store

    @property
    def location(self) -> Path | None:
        return self.db.path

    def skeleton(self) -> list[CheckpointMeta]:
        return list_checkpoint_skeleton(self.db, self.thread_id)

    def head_id(self) -> str | None:
        return head_checkpoint_id(self.db, self.thread_id)

    def meta(self, checkpoint_id: str) -> CheckpointMeta | None:
        return get_checkpoint_meta(self.db, self.thread_id, checkpoint_id)

    def payload(self, checkpoint_id: str) -> Payload:
        return read_payload(self.db, self.thread_id, checkpoint_id)

    def message_writes(self, only: Sequence[str] | None = None) -> list[WriteRow] | None:
        if not self.db.has_table("writes"):
            return None
        task_path = "task_path" if "task_path" in self.db.columns("writes") else "''"
        # `only`: a long thread's few new steps, sought by the primary key instead of every write it has.
        among, params = "", tuple[str, ...]()
        if only is not None:
            among, params = "AND checkpoint_id IN (SELECT value FROM json_each(?))", (json.dumps(list(only)),)
        rows = self.db.rows(
            f"SELECT checkpoint_id, task_id, {task_path}, idx, type, value FROM writes "
            f"WHERE thread_id = ? AND checkpoint_ns = '' AND channel = 'messages' {among}",
            (self.thread_id, *params),
        )
        return [WriteRow(str(r[0]), str(r[1]), str(r[2] or ""), int(r[3]), r[4], r[5]) for r in rows]

    def metadata_here(self, only: Sequence[str]) -> Metadata | None:
        # Metadata sits after each payload in the file: a second connection reads it in parallel.
        return None


class SqliteBackend:
    """Mycel main's SQLite files at `locations` (StoreBackend)."""

    def __init__(self, locations: MycelLocations, *, query_timeout_s: float, row_cap: int) -> None:
        self.locations = locations
        self.query_timeout_s = query_timeout_s
        self.row_cap = row_cap
        self._opener = StoreOpener(locations, query_timeout_s, row_cap)

    def copy_checkpoint(self, copy: CheckpointCopy) -> RollbackApplied:
        from memory_core.stores.write.rollback_writer import apply_checkpoint_copy  # LangGraph: writes only

        # No force here: whether the thread runs is read from the head's age before (RollbackImpact).
        return apply_checkpoint_copy(main_db=self.locations.main, **copy.writer_arguments())

    def checkpoint_location(self) -> CheckpointLocation:
        return CheckpointLocation("sqlite", str(self.locations.main))

    def identity(self) -> FileIdentity:
        return identity_of(self.locations.main)

    def version(self) -> tuple[Any, ...]:
        """Per file and its -wal: inode, size, mtime and the first 100 bytes.

        A commit in rollback-journal mode bumps the database header's change counter; in WAL mode it
        appends frames (the WAL grows) or, after a checkpoint reset, rewrites the WAL header with new salts.
        """
        parts: list[tuple[Any, ...]] = [(self.query_timeout_s, self.row_cap)]
        for path in self.locations.databases().values():
            parts.extend(_file_version(path))
        return tuple(parts)

    def heads_version(self) -> Hashable | None:
        return (self.query_timeout_s, *_file_version(self.locations.databases()[StoreRole.MAIN]))

    def space_version(self) -> Hashable:
        return self.version()  # the files' stats: as cheap as it gets

    def agents_version(self) -> Hashable:
        return (self.query_timeout_s, *_file_version(self.locations.databases()[StoreRole.AGENT_REGISTRY]))

    def file_status(self) -> list[StoreFileStatus]:
        out: list[StoreFileStatus] = []
        for role, path in self.locations.databases().items():
            if not path.exists():
                missing = StoreProblem(
                    ProblemKind.MISSING_FILE, role.value, f"{path.name} does not exist", path
                )
                out.append(StoreFileStatus(role.value, path, False, None, problem=missing))
                continue
            size = path.stat().st_size
            try:
                journal = journal_mode_of(file_header(path))
            except OSError:
                journal = None
            problems: list[StoreProblem] = []
            tables: dict[str, tuple[str, ...]] = {}
            with self._opener.open(role, problems) as db:
                if db is not None:
                    tables = db.tables()
            notes, schema_problem = describe_file(role, path, tables)
            problem = schema_problem or next(
                (p for p in problems if p.kind is not ProblemKind.TRUNCATED), None
            )
            out.append(StoreFileStatus(role.value, path, True, size, tuple(tables), notes, journal, problem))
        return out

    def thread_rows(
        self, known: DerivedFacts, thread_id: str | None
    ) -> tuple[list[ThreadRow], list[StoreProblem]]:
        return listing.thread_rows(self._opener, known, thread_id)

    def thread_heads(self, problems: list[StoreProblem], *, since: str | None = None) -> list[ThreadHead]:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None:
                return fleet_heads.heads_since(db, since)
        return []

    def moved_heads(
        self, problems: list[StoreProblem], *, since: str | None, mark: Hashable | None
    ) -> tuple[list[ThreadHead], Hashable | None]:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.require_table("checkpoints"):
                with db.snapshot():
                    now = fleet_heads.row_mark(db)
                    after = fleet_heads.heads_after(db, mark) if isinstance(mark, tuple) else None
                    return (fleet_heads.heads_since(db, since) if after is None else after), now
        return [], None

    def thread_counts(self, problems: list[StoreProblem], *, since: str) -> tuple[int, int]:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None:
                return fleet_heads.counts_since(db, since)
        return 0, 0

    def newest_heads(
        self, problems: list[StoreProblem], *, limit: int, offset: int, by_id: bool, descending: bool
    ) -> tuple[int, list[ThreadHead]]:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None:
                return fleet_heads.newest_heads(
                    db, limit=limit, offset=offset, by_id=by_id, descending=descending
                )
        return 0, []

    def head_payloads(
        self, heads: Sequence[tuple[str, str]], problems: list[StoreProblem]
    ) -> Iterator[tuple[str, str, Payload]]:
        payloads: list[tuple[str, str, str | None, bytes | None]] = []
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.require_table("checkpoints"):
                with db.snapshot():
                    check_checkpoint_layout(db)
                    payloads = read_head_payloads(db, heads)
        for thread_id, checkpoint_id, kind, blob in payloads:
            yield thread_id, checkpoint_id, (kind, blob)

    def checkpoints(
        self, thread_id: str, problems: list[StoreProblem]
    ) -> AbstractContextManager[_Snapshot | None]:
        return one_snapshot(self.thread_snapshots(problems), thread_id)

    @contextmanager
    def thread_snapshots(self, problems: list[StoreProblem]) -> Iterator[Callable[[str], _Snapshot] | None]:
        # The opener turns a failure inside the block into a problem, so a refused layout or a locked
        # BEGIN still has to yield once: None.
        yielded = False
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.require_table("checkpoints"):
                with db.snapshot():
                    check_checkpoint_layout(db)
                    yielded = True
                    yield lambda thread_id: _Snapshot(db, thread_id)
        if not yielded:
            yield None

    def checkpoint_metadata(
        self, thread_id: str, only: Sequence[str], problems: list[StoreProblem]
    ) -> Metadata:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.has_table("checkpoints"):
                return checkpoint_metadata(db, thread_id, only)
        return {}

    def list_summaries(self, thread_id: str, problems: list[StoreProblem]) -> list[SummaryRow]:
        # Web threads' summaries live in summary.db, the others' in leon.db (reference §1.4).
        return self._from_both(
            (StoreRole.SUMMARY, StoreRole.MAIN),
            "summaries",
            lambda db: summaries_store.list_summaries(db, thread_id),
            problems,
        )

    def list_file_operations(self, thread_id: str, problems: list[StoreProblem]) -> list[FileOperation]:
        return self._from_both(
            (StoreRole.FILE_OPS, StoreRole.MAIN),
            "file_operations",
            lambda db: file_ops_store.list_file_operations(db, thread_id),
            problems,
        )

    def _from_both(
        self,
        roles: tuple[StoreRole, ...],
        table: str,
        read: Callable[[ReadOnlyDB], list[R]],
        problems: list[StoreProblem],
    ) -> list[R]:
        met: list[StoreProblem] = []
        found = False
        items: list[R] = []
        for role in roles:
            with self._opener.open(role, met) as db:
                if db is not None and db.has_table(table):
                    found = True
                    items.extend(read(db))
        # A missing file or table is news only if neither place has the table.
        problems.extend(unless_found(met, found))
        return items

    def list_queue(self, thread_id: str | None, problems: list[StoreProblem]) -> list[QueueItem]:
        with self._opener.open(StoreRole.QUEUE, problems) as db:
            if db is not None:
                return queue_store.list_queue(db, thread_id)
        return []

    def list_run_events(self, thread_id: str, problems: list[StoreProblem]) -> list[RunEvent]:
        with self._opener.open(StoreRole.EVENTS, problems) as db:
            if db is not None:
                return events_store.list_run_events(db, thread_id)
        return []

    def get_sandbox(self, thread_id: str, problems: list[StoreProblem]) -> SandboxState | None:
        with self._opener.open(StoreRole.SANDBOX, problems) as db:
            if db is not None:
                with db.snapshot():
                    return sandbox_store.get_sandbox(db, thread_id)
        return None

    def list_agents(self, problems: list[StoreProblem]) -> list[AgentRecord]:
        with self._opener.open(StoreRole.AGENT_REGISTRY, problems) as db:
            if db is not None:
                return agent_registry_store.list_agents(db)
        return []

    # -- storage ------------------------------------------------------------------------------------------

    def thread_bytes(
        self, threads: Sequence[str] | None, problems: list[StoreProblem], known: KnownBytes | None = None
    ) -> list[ThreadBytes]:
        label = self.locations.main.name
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.require_table("checkpoints"):
                with db.snapshot():
                    check_checkpoint_layout(db)
                    if known is None:
                        return storage_facts.list_thread_bytes(db, threads, store=label)
                    keys = {t: (label, key) for t, key in storage_facts.thread_keys(db, threads).items()}

                    def read_moved(moved: Sequence[str] | None) -> list[ThreadBytes]:
                        before = {t: kept for t in moved or () if (kept := known.latest(t)) is not None}
                        return storage_facts.list_thread_bytes(db, moved, store=label, before=before)

                    return known_or_read(keys, known, read_moved, every_thread=threads is None)
        return []

    def schema_bytes(self, problems: list[StoreProblem]) -> dict[str, int]:
        return {}

    def store_space(self, problems: list[StoreProblem], known: KnownTables | None = None) -> list[StoreSpace]:
        out: list[StoreSpace] = []
        # Several roles may name one file (queue.db beside leon.db by default): measure each file once.
        seen: set[Path] = set()
        for role, path in self.locations.databases().items():
            if path in seen or not path.exists():
                continue
            seen.add(path)
            with self._opener.open(role, problems) as db:
                if db is not None:
                    with db.snapshot():
                        where = (str(path), _inode(path))
                        space, measure = storage_facts.store_space(
                            db,
                            path.name,
                            known.lookup(where) if known is not None else None,
                            file=_content_version(path),
                        )
                        if known is not None:
                            known.remember(where, measure)
                        out.append(space)
        return out

    def channel_bytes(
        self, thread_id: str, checkpoint_id: str | None, problems: list[StoreProblem]
    ) -> tuple[str | None, list[ChannelBytes]]:
        with self._opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.has_table("checkpoints"):
                with db.snapshot():
                    check_checkpoint_layout(db)
                    found, channels, why = storage_facts.channel_bytes(db, thread_id, checkpoint_id)
                    if why is not None:
                        problems.append(
                            StoreProblem(ProblemKind.UNREADABLE_CHECKPOINT, db.store, why, db.path)
                        )
                    return found, channels
        return None, []


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None


def _content_version(path: Path) -> str:
    """The file's version less what a reader's open may change: an empty -wal made (or left) by a connection
    is no new content, so only a -wal holding frames counts, by its size and header. A digest: another
    process compares it with the one it keeps (memory_core/stores/table_measures.py)."""
    main, wal = _file_version(path)
    version = (main, wal[2:5:2] if len(wal) > 2 and wal[2] else ())
    return hashlib.blake2b(repr(version).encode(), digest_size=16).hexdigest()


def _file_version(path: Path) -> list[tuple[Any, ...]]:
    """A database file and its -wal: inode, size, mtime and the first 100 bytes (see version)."""
    parts: list[tuple[Any, ...]] = []
    for candidate in (path, Path(f"{path}-wal")):
        try:
            if candidate == path:
                # Never open+close the database file itself: that drops our SQLite locks (file_header).
                stat, head = candidate.stat(), file_header(candidate)
            else:
                with candidate.open("rb") as handle:
                    stat = os.fstat(handle.fileno())
                    head = handle.read(100)
        except OSError:
            parts.append((str(candidate),))
            continue
        parts.append((str(candidate), stat.st_ino, stat.st_size, stat.st_mtime_ns, head))
    return parts

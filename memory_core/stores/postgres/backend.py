"""The PostgreSQL backend: Mycel's checkpoints in AsyncPostgresSaver's tables, read-only (StoreBackend).

Checkpoints come from Postgres (dev's schema `agent`, main's search_path schema, or both during a
migration: each thread is read from the first layout that has it, dev first). Mycel dev's other stores
(summaries, queue, run events, file operations, threads; mycel-dev §3) are read from their tables in the
dev layout's schema when they are there (side_stores.py); otherwise from the SQLite files, which on a
dev-only database count only where their variable names them (dev has no ~/.leon defaults, §3.9), else
nothing. Sandbox and sub-agents stay on SQLite: those reads are the SQLite backend's own, composed here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from memory_core.breaker import BREAKER_CHANNEL, breaker_from_channel
from memory_core.footprint.facts import ChannelBytes, StoreSpace, ThreadBytes
from memory_core.records import (
    AgentRecord,
    BreakerState,
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
from memory_core.rollback import CheckpointCopy, RollbackApplied, RollbackRefused
from memory_core.stores.backend import (
    KnownBytes,
    KnownTables,
    Metadata,
    Payload,
    ThreadHead,
    known_or_read,
    one_snapshot,
)
from memory_core.stores.checkpoints import CheckpointMeta
from memory_core.stores.decode import UnreadableBlob, count_checkpoint_messages, decode_typed
from memory_core.stores.locations import SQLITE_PATH_VARIABLES, MycelLocations, StoreRole
from memory_core.stores.postgres import checkpoints as pg
from memory_core.stores.postgres import fleet_heads
from memory_core.stores.postgres import side_stores as side
from memory_core.stores.postgres import storage_facts as pg_storage
from memory_core.stores.postgres.connect import PgError, PgRead, mask_url, read_only
from memory_core.stores.postgres.layout import PostgresLayout, detect_layouts
from memory_core.stores.postgres.side_stores import SideTable
from memory_core.stores.series import WriteRow
from memory_core.stores.sqlite.backend import SqliteBackend
from memory_core.stores.thread_list import listing
from memory_core.stores.thread_list import threads as threads_store
from memory_core.stores.thread_list.derived import DerivedFacts, HeadFacts
from memory_core.stores.thread_list.listing import _ThreadTables

R = TypeVar("R")
_STORE = StoreRole.MAIN.value
# Under Postgres the SQLite files are optional side stores: their absence is not news.
# Heads decoded per read: a first list of 100,000 threads held every moved head's blobs at once (~3 GB).
HEAD_CHUNK = 2_000
_OPTIONAL = (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)
# Where each dev side table falls back to in SQLite (its role), or None: dev dropped that file (§3.9).
_FALLBACK: dict[str, StoreRole | None] = {
    "summaries": StoreRole.MAIN,  # LEON_DB_PATH's `summaries`, used when dev has no storage container
    "message_queue": StoreRole.QUEUE,
    "run_events": None,  # events.db is gone in dev
    "file_operations": None,  # file_ops.db is gone in dev
}


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """One thread's checkpoints inside one REPEATABLE READ, READ ONLY transaction (CheckpointSnapshot)."""

    read: PgRead
    layout: PostgresLayout
    thread_id: str
    where: Path

    @property
    def store(self) -> str:
        return _STORE

    @property
    def location(self) -> Path | None:
        return self.where

    def skeleton(self) -> list[CheckpointMeta]:
        return pg.skeleton(self.read, self.layout, self.thread_id)

    def head_id(self) -> str | None:
        return pg.head_id(self.read, self.layout, self.thread_id)

    def meta(self, checkpoint_id: str) -> CheckpointMeta | None:
        return pg.meta(self.read, self.layout, self.thread_id, checkpoint_id)

    def payload(self, checkpoint_id: str) -> Payload:
        found = pg.payloads(self.read, self.layout, [(self.thread_id, checkpoint_id)])
        return found[0][2] if found else (None, None)

    def message_writes(self, only: Sequence[str] | None = None) -> list[WriteRow] | None:
        # Dev saves whole checkpoints and writes none: every payload is then decoded. Asked for a few
        # steps, none is an answer (they wrote no message; the caller's count check catches the rest).
        found = pg.message_writes(self.read, self.layout, self.thread_id, only)
        return found if found or only is not None else None

    def metadata_here(self, only: Sequence[str]) -> Metadata:
        # In this very transaction: a second read beside it would hold a second pooled connection while
        # this one waits, which behind PgBouncer's few server connections can stall every reader at once.
        return pg.metadata(self.read, self.layout, self.thread_id, only)


class PostgresBackend:
    """Checkpoints in PostgreSQL at `locations.postgres_url`; the rest on the SQLite files (StoreBackend)."""

    def __init__(self, locations: MycelLocations, *, query_timeout_s: float, row_cap: int) -> None:
        if not locations.postgres_url:
            raise ValueError("PostgresBackend needs locations.postgres_url")
        self.locations = locations
        self.url = locations.postgres_url
        self.query_timeout_s = query_timeout_s
        self.row_cap = row_cap
        self.sqlite = SqliteBackend(locations, query_timeout_s=query_timeout_s, row_cap=row_cap)

    # -- one read -------------------------------------------------------------------------------------

    def copy_checkpoint(self, copy: CheckpointCopy) -> RollbackApplied:
        from memory_core.stores.write.postgres_writer import (  # LangGraph: writes only
            PostgresTarget,
            apply_postgres_checkpoint_copy,
        )

        layouts, problems = self.layouts()
        if not layouts:
            reasons = "; ".join(p.message for p in problems) or "no Mycel checkpoint tables"
            raise RollbackRefused(f"{reasons}; nothing was written")
        return apply_postgres_checkpoint_copy(
            PostgresTarget(self.url, tuple(layouts)),
            force=copy.force,
            **copy.writer_arguments(),
        )

    def checkpoint_location(self) -> CheckpointLocation:
        layouts, _ = self.layouts()
        schemas = {pg_storage.store_label(layout): layout.schema for layout in layouts}
        return CheckpointLocation("postgresql", self.masked_url, schemas=schemas)

    @property
    def masked_url(self) -> str:
        return mask_url(self.url)

    @contextmanager
    def _read(self, problems: list[StoreProblem]) -> Iterator[tuple[PgRead, list[PostgresLayout]] | None]:
        """An open read with the layouts found; None (and the problem) when there is none to read."""
        yielded = False
        try:
            with read_only(self.url, _STORE, timeout_s=self.query_timeout_s, row_cap=self.row_cap) as read:
                layouts, refused = detect_layouts(read)
                problems.extend(refused)
                try:
                    if layouts:
                        yielded = True
                        yield read, layouts
                finally:
                    problems.extend(read.problems)
        except PgError as exc:
            problems.append(exc.problem)
        except Exception as exc:  # noqa: BLE001 - bad data must become a message, never a crash
            problems.append(StoreProblem(ProblemKind.CORRUPT, _STORE, f"{self.masked_url}: {exc}"))
        if not yielded:
            yield None

    def layouts(self) -> tuple[list[PostgresLayout], list[StoreProblem]]:
        """The layouts in the database now (for status lines), and why none or one was refused."""
        problems: list[StoreProblem] = []
        with self._read(problems) as found:
            if found is not None:
                return found[1], problems
        return [], problems

    def _where(self, layout: PostgresLayout) -> Path:
        # Problems carry a Path; a Postgres store's "where" is its masked URL and schema.
        return Path(f"{self.masked_url} schema {layout.schema}")

    # -- StoreBackend -----------------------------------------------------------------------------------

    def identity(self) -> tuple[str, str]:
        # The masked URL: the same database whatever password reaches it, and no password in any key.
        return ("postgresql", self.masked_url)

    def version(self) -> tuple[Any, ...]:
        return self._fingerprint(pg.fingerprint)

    def heads_version(self) -> Hashable | None:
        return None  # only counting the checkpoints would tell: the look's one question costs no more

    def space_version(self) -> Hashable:
        # Each schema's relation sizes (one catalog query), where `version` counts every checkpoint (~70 ms
        # at 100,000 threads): a new page anywhere changes them.
        return self._fingerprint(pg_storage.schema_bytes)

    def _fingerprint(self, of_layout: Callable[[PgRead, PostgresLayout], Hashable]) -> tuple[Any, ...]:
        """The side files' version and `of_layout` of each schema holding Mycel's tables (and what failed)."""
        problems: list[StoreProblem] = []
        parts: list[Any] = [self.sqlite.version()]
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                parts.extend((layout, of_layout(read, layout)) for layout in layouts)
        parts.extend(p.message for p in problems)
        return tuple(parts)

    def agents_version(self) -> Hashable:
        return self.sqlite.agents_version()  # the registry is agent_registry.db on either engine

    def file_status(self) -> list[StoreFileStatus]:
        layouts, problems = self.layouts()
        out = [
            StoreFileStatus(
                f"{_STORE} ({layout.layout} layout)",
                self._where(layout),
                True,
                None,
                tables=("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations"),
                notes=(
                    "engine postgresql",
                    f"schema {layout.schema}",
                    f"layout {layout.layout}",
                    f"LangGraph migration v{layout.migration}",
                ),
            )
            for layout in layouts
        ]
        # Configured but unreadable: "present" with its problem, so the home page says why, not "missing".
        for problem in problems:
            out.append(
                StoreFileStatus(f"{_STORE} (postgresql)", Path(self.masked_url), True, None, problem=problem)
            )
        out.extend(self._side_status(layouts))
        # The side stores Mycel still keeps in SQLite; leon.db is one only if it is there.
        out.extend(s for s in self.sqlite.file_status() if s.exists or s.role != StoreRole.MAIN.value)
        return out

    def _side_status(self, layouts: list[PostgresLayout]) -> list[StoreFileStatus]:
        """One line per dev side store: its Postgres table, the SQLite fallback, or that there is none."""
        dev = _dev(layouts)
        if dev is None:
            return []
        problems: list[StoreProblem] = []
        tables: dict[str, SideTable] = {}
        with self._read(problems) as found:
            if found is not None:
                tables = side.side_tables(found[0], dev.schema)
        out: list[StoreFileStatus] = []
        for name, role in _FALLBACK.items():
            table = tables.get(name)
            store = side.STORE_OF[name]
            if table is not None:
                notes: tuple[str, ...] = ("engine postgresql", f"table {dev.schema}.{name}")
                if name == "summaries":
                    notes += (side.SUMMARY_TIME_NOTE,)
                out.append(
                    StoreFileStatus(
                        f"{store} (postgresql)", self._where(dev), True, None, tables=(name,), notes=notes,
                        problem=table.problem(),
                    )
                )  # fmt: skip
                continue
            if role is not None and self._named(role):
                where = self.locations.path(role)
                note = f"not in schema {dev.schema}; read from SQLite at {SQLITE_PATH_VARIABLES[role]}"
            else:
                where = Path(f"{self.masked_url} schema {dev.schema}")
                why = f"no {dev.schema}.{name} table"
                tail = f" and {SQLITE_PATH_VARIABLES[role]} is not set" if role is not None else ""
                note = f"{why}{tail}: Mycel dev persisted no {name} here, so none are shown"
            out.append(StoreFileStatus(f"{store} (postgresql)", where, False, None, notes=(note,)))
        out.extend(
            StoreFileStatus(f"{_STORE} (postgresql)", Path(self.masked_url), True, None, problem=p)
            for p in problems
        )
        return out

    def _named(self, role: StoreRole) -> bool:
        variable = SQLITE_PATH_VARIABLES.get(role)
        return variable is not None and variable in self.locations.explicit

    def thread_rows(
        self, known: DerivedFacts, thread_id: str | None
    ) -> tuple[list[ThreadRow], list[StoreProblem]]:
        problems: list[StoreProblem] = []
        heads: dict[str, HeadFacts] = {}
        written: dict[str, int] = {}
        layout_of: dict[str, str] = {}
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                # The later layout first, so the first (dev) wins a thread both hold.
                for layout in reversed(layouts):
                    held = self._heads(read, layout, thread_id, known)
                    heads.update(held)
                    layout_of.update(dict.fromkeys(held, layout.layout))
                    written.update(pg.writes_bytes(read, layout, thread_id))
        side_problems: list[StoreProblem] = []
        tables = listing._tables(self.sqlite._opener, thread_id, side_problems)  # noqa: SLF001 - the list's own side reads
        problems.extend(p for p in side_problems if p.kind not in _OPTIONAL)
        if "dev" in layout_of.values():
            # A thread only dev's tables know (no checkpoint yet) is still a dev thread.
            for known_only in self._dev_side_facts(tables, thread_id, problems):
                layout_of.setdefault(known_only, "dev")
        rows = threads_store.combine(
            heads, tables.infos, tables.summaries, tables.queued, tables.sandboxes, written, layout_of
        )
        return rows, list(dict.fromkeys(problems))

    def _dev_side_facts(
        self, tables: _ThreadTables, thread_id: str | None, problems: list[StoreProblem]
    ) -> set[str]:
        """The list's names, models, summary and queue counts from dev's tables where they exist (their own
        read: a failing side table must not cost the list its checkpoints); the thread ids they name."""
        seen: set[str] = set()
        with self._read(problems) as found:
            if found is None or (dev := _dev(found[1])) is None:
                return seen
            read, layouts = found
            dev_only = len(layouts) == 1
            present = side.side_tables(read, dev.schema)
            usable = {name: t for name, t in present.items() if t.problem() is None}
            problems.extend(p for t in present.values() if (p := t.problem()) is not None)
            if dev_only:
                # Dev has no ~/.leon defaults: a default-path file is not one of its stores.
                if not self._named(StoreRole.MAIN):
                    tables.infos, tables.summaries = {}, {}
                if not self._named(StoreRole.QUEUE):
                    tables.queued = {}
                if not self._named(StoreRole.SANDBOX):
                    tables.sandboxes = {}
            if "threads" in usable:
                for tid, info in side.thread_infos(
                    read, usable["threads"], usable.get("users"), thread_id
                ).items():
                    seen.add(tid)
                    tables.infos[tid] = threads_store.ThreadInfo(
                        tid,
                        info.agent_user_id,
                        info.name,
                        info.model,
                        info.sandbox_type,
                        info.cwd,
                        info.created_at,
                    )
            if "summaries" in usable:
                tables.summaries = side.summary_counts(read, usable["summaries"], thread_id)
                seen.update(tables.summaries)
            if "message_queue" in usable:
                tables.queued = side.queue_counts(read, usable["message_queue"], thread_id)
                seen.update(tables.queued)
        return seen

    def _heads(
        self, read: PgRead, layout: PostgresLayout, thread_id: str | None, known: DerivedFacts
    ) -> dict[str, HeadFacts]:
        """Head facts per thread; a head is decoded only when its (count, head id) key moved."""
        found: dict[str, HeadFacts] = {}
        moved: dict[str, tuple[int, str, int]] = {}
        for thread, count, head, size in pg.thread_keys(read, layout, thread_id):
            facts = known.lookup(thread, count, head)
            if facts is not None:
                found[thread] = facts
            else:
                moved[thread] = (count, head, size)
        learned: dict[str, HeadFacts] = {}
        waiting = list(moved.items())
        for start in range(0, len(waiting), HEAD_CHUNK):
            pairs = [(thread, key[1]) for thread, key in waiting[start : start + HEAD_CHUNK]]
            models = pg.head_models(read, layout, pairs)
            breakers = (
                pg.channel_blobs(read, layout, pairs, BREAKER_CHANNEL) if layout.layout == "dev" else {}
            )
            for thread, _, (kind, blob) in pg.payloads(read, layout, pairs):
                count, head, size = moved[thread]
                breaker = _breaker(*breakers.get(thread, (None, None)))
                learned[thread] = HeadFacts(
                    count,
                    head,
                    size,
                    count_checkpoint_messages(kind, blob),
                    models.get(thread),
                    breaker_failures=breaker.failure_count if breaker else None,
                    breaker_open=breaker.open if breaker else None,
                )
        if learned:
            known.remember(learned)
            found.update(learned)
        return found

    def thread_heads(self, problems: list[StoreProblem], *, since: str | None = None) -> list[ThreadHead]:
        with self._read(problems) as found:
            if found is not None:
                return fleet_heads.heads_since(found[0], found[1], since)
        return []

    def moved_heads(
        self, problems: list[StoreProblem], *, since: str | None, mark: Hashable | None
    ) -> tuple[list[ThreadHead], Hashable | None]:
        # No row order to trust: a transaction's rows are not ordered by when it committed.
        return self.thread_heads(problems, since=since), None

    def thread_counts(self, problems: list[StoreProblem], *, since: str) -> tuple[int, int]:
        with self._read(problems) as found:
            if found is not None:
                return fleet_heads.counts_since(found[0], found[1], since)
        return 0, 0

    def newest_heads(
        self, problems: list[StoreProblem], *, limit: int, offset: int, by_id: bool, descending: bool
    ) -> tuple[int, list[ThreadHead]]:
        with self._read(problems) as found:
            if found is not None:
                return fleet_heads.newest_heads(
                    found[0], found[1], limit=limit, offset=offset, by_id=by_id, descending=descending
                )
        return 0, []

    def head_payloads(
        self, heads: Sequence[tuple[str, str]], problems: list[StoreProblem]
    ) -> Iterator[tuple[str, str, Payload]]:
        wanted = list(heads)
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                for layout in layouts:
                    got = pg.payloads(read, layout, wanted)
                    yield from got
                    done = {(t, c) for t, c, _ in got}
                    wanted = [pair for pair in wanted if pair not in done]

    @contextmanager
    def thread_snapshots(self, problems: list[StoreProblem]) -> Iterator[Callable[[str], _Snapshot] | None]:
        # A failure inside the read becomes a problem (self._read), so a read that fails before the
        # snapshot exists still has to yield once: None.
        yielded = False
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found

                def snapshot(thread_id: str) -> _Snapshot:
                    layout = next((la for la in layouts if pg.has_thread(read, la, thread_id)), layouts[0])
                    return _Snapshot(read, layout, thread_id, self._where(layout))

                yielded = True
                yield snapshot
        if not yielded:
            yield None

    def checkpoints(
        self, thread_id: str, problems: list[StoreProblem]
    ) -> AbstractContextManager[_Snapshot | None]:
        return one_snapshot(self.thread_snapshots(problems), thread_id)

    def checkpoint_metadata(
        self, thread_id: str, only: Sequence[str], problems: list[StoreProblem]
    ) -> Metadata:
        out: Metadata = {}
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                for layout in reversed(layouts):
                    out.update(pg.metadata(read, layout, thread_id, only))
        return out

    # -- storage ---------------------------------------------------------------------------------------

    def thread_bytes(
        self, threads: Sequence[str] | None, problems: list[StoreProblem], known: KnownBytes | None = None
    ) -> list[ThreadBytes]:
        out: list[ThreadBytes] = []
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                # Dev first, as detect_layouts orders them: the thread list reads a thread both hold from dev.
                for layout in layouts:
                    if known is None:
                        out.extend(pg_storage.list_thread_bytes(read, layout, threads))
                        continue
                    keys = pg_storage.thread_keys(read, layout, threads)
                    reading = partial(pg_storage.list_thread_bytes, read, layout)
                    out.extend(known_or_read(keys, known, reading, every_thread=threads is None))
        return out

    def schema_bytes(self, problems: list[StoreProblem]) -> dict[str, int]:
        with self._read(problems) as found:
            if found is None:
                return {}
            read, layouts = found
            return {
                pg_storage.store_label(layout): pg_storage.schema_bytes(read, layout) for layout in layouts
            }

    def store_space(self, problems: list[StoreProblem], known: KnownTables | None = None) -> list[StoreSpace]:
        out: list[StoreSpace] = []
        dev_only = False
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                dev_only = [layout.layout for layout in layouts] == ["dev"]
                out.extend(pg_storage.store_space(read, layout, self.masked_url) for layout in layouts)
        # The side stores Mycel still keeps in SQLite files, where they exist; dev has no ~/.leon defaults,
        # so on a dev-only database a file counts only where its variable names it.
        files = self._optional(partial(self.sqlite.store_space, known=known), problems)
        if dev_only:
            named = {str(self.locations.path(role)) for role in SQLITE_PATH_VARIABLES if self._named(role)}
            files = [space for space in files if space.location in named]
        return out + files

    def channel_bytes(
        self, thread_id: str, checkpoint_id: str | None, problems: list[StoreProblem]
    ) -> tuple[str | None, list[ChannelBytes]]:
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                for layout in layouts:
                    measured, channels = pg_storage.channel_bytes(read, layout, thread_id, checkpoint_id)
                    if measured is not None:
                        return measured, channels
        return None, []

    # -- dev's side stores: Postgres table, else SQLite fallback, else none --------------------------------

    def list_summaries(self, thread_id: str, problems: list[StoreProblem]) -> list[SummaryRow]:
        return self._side(
            "summaries",
            lambda read, t: side.list_summaries(read, t, thread_id),
            lambda p: self.sqlite.list_summaries(thread_id, p),
            problems,
        )

    def list_file_operations(self, thread_id: str, problems: list[StoreProblem]) -> list[FileOperation]:
        return self._side(
            "file_operations",
            lambda read, t: side.list_file_operations(read, t, thread_id),
            lambda p: self.sqlite.list_file_operations(thread_id, p),
            problems,
        )

    def list_queue(self, thread_id: str | None, problems: list[StoreProblem]) -> list[QueueItem]:
        return self._side(
            "message_queue",
            lambda read, t: side.list_queue(read, t, thread_id),
            lambda p: self.sqlite.list_queue(thread_id, p),
            problems,
        )

    def list_run_events(self, thread_id: str, problems: list[StoreProblem]) -> list[RunEvent]:
        return self._side(
            "run_events",
            lambda read, t: side.list_run_events(read, t, thread_id),
            lambda p: self.sqlite.list_run_events(thread_id, p),
            problems,
        )

    def _side(
        self,
        name: str,
        from_postgres: Callable[[PgRead, SideTable], list[R]],
        from_sqlite: Callable[[list[StoreProblem]], list[R]],
        problems: list[StoreProblem],
    ) -> list[R]:
        """Dev's table `name` when the dev layout's schema has it; else the SQLite fallback, which on a
        dev-only database counts only where its variable names it; else nothing (file_status says so)."""
        tried = False
        dev_only = False
        items: list[R] = []
        with self._read(problems) as found:
            if found is not None and (dev := _dev(found[1])) is not None:
                read, layouts = found
                dev_only = len(layouts) == 1
                table = side.side_tables(read, dev.schema).get(name)
                if table is not None:
                    tried = True
                    problem = table.problem()
                    if problem is not None:
                        problems.append(problem)
                    else:
                        items = from_postgres(read, table)
        if tried:
            return items
        role = _FALLBACK[name]
        if dev_only and (role is None or not self._named(role)):
            return []
        return self._optional(from_sqlite, problems)

    # -- the stores that stay on SQLite -------------------------------------------------------------------

    def get_sandbox(self, thread_id: str, problems: list[StoreProblem]) -> SandboxState | None:
        if not self._named(StoreRole.SANDBOX):
            layouts, _ = self.layouts()
            if [layout.layout for layout in layouts] == ["dev"]:
                return None  # dev keeps sandbox.db only where LEON_SANDBOX_DB_PATH names it (§3.7)
        return self._optional(lambda p: self.sqlite.get_sandbox(thread_id, p), problems)

    def list_agents(self, problems: list[StoreProblem]) -> list[AgentRecord]:
        return self._optional(self.sqlite.list_agents, problems)

    def _optional(self, read: Callable[[list[StoreProblem]], R], problems: list[StoreProblem]) -> R:
        met: list[StoreProblem] = []
        value = read(met)
        problems.extend(p for p in met if p.kind not in _OPTIONAL)
        return value


def _dev(layouts: Sequence[PostgresLayout]) -> PostgresLayout | None:
    return next((layout for layout in layouts if layout.layout == "dev"), None)


def _breaker(kind: str | None, blob: bytes | None) -> BreakerState | None:
    if kind is None:
        return None
    try:
        return breaker_from_channel(decode_typed(kind, blob))
    except UnreadableBlob:
        return None  # the messages' own decode says the head is unreadable

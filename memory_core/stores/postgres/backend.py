"""The PostgreSQL backend: Mycel's checkpoints in AsyncPostgresSaver's tables, read-only (StoreBackend).

Checkpoints come from Postgres (dev's schema `agent`, main's search_path schema, or both during a
migration: each thread is read from the first layout that has it, dev first). Everything else (summaries,
queue, file operations, run events, sandbox, sub-agents, the threads table) stays on the SQLite files for
now: those reads are the SQLite backend's own, composed here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memory_core.records import (
    AgentRecord,
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
from memory_core.stores.backend import Metadata, Payload
from memory_core.stores.checkpoints import CheckpointMeta
from memory_core.stores.decode import count_checkpoint_messages
from memory_core.stores.locations import MycelLocations, StoreRole
from memory_core.stores.postgres import checkpoints as pg
from memory_core.stores.postgres.connect import PgError, PgRead, mask_url, read_only
from memory_core.stores.postgres.layout import PostgresLayout, detect_layouts
from memory_core.stores.series import WriteRow
from memory_core.stores.sqlite_backend import SqliteBackend
from memory_core.stores.thread_list import listing
from memory_core.stores.thread_list import threads as threads_store
from memory_core.stores.thread_list.derived import DerivedFacts, HeadFacts

R = TypeVar("R")
_STORE = StoreRole.MAIN.value
# Under Postgres the SQLite files are optional side stores: their absence is not news.
_OPTIONAL = (ProblemKind.MISSING_FILE, ProblemKind.MISSING_TABLE)


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

    def message_writes(self) -> list[WriteRow] | None:
        # Dev saves whole checkpoints and writes none: every payload is then decoded.
        return pg.message_writes(self.read, self.layout, self.thread_id) or None


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
        problems: list[StoreProblem] = []
        parts: list[Any] = [self.sqlite.version()]
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                parts.extend((layout, pg.fingerprint(read, layout)) for layout in layouts)
        parts.extend(p.message for p in problems)
        return tuple(parts)

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
        # The side stores Mycel still keeps in SQLite; leon.db is one only if it is there.
        out.extend(s for s in self.sqlite.file_status() if s.exists or s.role != StoreRole.MAIN.value)
        return out

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
        side: list[StoreProblem] = []
        tables = listing._tables(self.sqlite._opener, thread_id, side)  # noqa: SLF001 - the list's own side reads
        problems.extend(p for p in side if p.kind not in _OPTIONAL)
        rows = threads_store.combine(
            heads, tables.infos, tables.summaries, tables.queued, tables.sandboxes, written, layout_of
        )
        return rows, list(dict.fromkeys(problems))

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
        if moved:
            pairs = [(thread, key[1]) for thread, key in moved.items()]
            models = pg.head_models(read, layout, pairs)
            learned: dict[str, HeadFacts] = {}
            for thread, _, (kind, blob) in pg.payloads(read, layout, pairs):
                count, head, size = moved[thread]
                learned[thread] = HeadFacts(
                    count, head, size, count_checkpoint_messages(kind, blob), models.get(thread)
                )
            known.remember(learned)
            found.update(learned)
        return found

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
    def checkpoints(self, thread_id: str, problems: list[StoreProblem]) -> Iterator[_Snapshot | None]:
        # A failure inside the read becomes a problem (self._read), so a read that fails before the
        # snapshot exists still has to yield once: None.
        yielded = False
        with self._read(problems) as found:
            if found is not None:
                read, layouts = found
                layout = next((la for la in layouts if pg.has_thread(read, la, thread_id)), layouts[0])
                yielded = True
                yield _Snapshot(read, layout, thread_id, self._where(layout))
        if not yielded:
            yield None

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

    # -- the stores that stay on SQLite -------------------------------------------------------------------

    def list_summaries(self, thread_id: str, problems: list[StoreProblem]) -> list[SummaryRow]:
        return self._optional(lambda p: self.sqlite.list_summaries(thread_id, p), problems)

    def list_file_operations(self, thread_id: str, problems: list[StoreProblem]) -> list[FileOperation]:
        return self._optional(lambda p: self.sqlite.list_file_operations(thread_id, p), problems)

    def list_queue(self, thread_id: str | None, problems: list[StoreProblem]) -> list[QueueItem]:
        return self._optional(lambda p: self.sqlite.list_queue(thread_id, p), problems)

    def list_run_events(self, thread_id: str, problems: list[StoreProblem]) -> list[RunEvent]:
        return self._optional(lambda p: self.sqlite.list_run_events(thread_id, p), problems)

    def get_sandbox(self, thread_id: str, problems: list[StoreProblem]) -> SandboxState | None:
        return self._optional(lambda p: self.sqlite.get_sandbox(thread_id, p), problems)

    def list_agents(self, problems: list[StoreProblem]) -> list[AgentRecord]:
        return self._optional(self.sqlite.list_agents, problems)

    def _optional(self, read: Callable[[list[StoreProblem]], R], problems: list[StoreProblem]) -> R:
        met: list[StoreProblem] = []
        value = read(met)
        problems.extend(p for p in met if p.kind not in _OPTIONAL)
        return value

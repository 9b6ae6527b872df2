"""What the stores measured, engine-neutral: one checkpoint's bytes, one thread's, one file's or schema's.

SQLite keeps a checkpoint whole in one row (`length(checkpoint)`); PostgreSQL keeps primitives inline
and every other channel value in `checkpoint_blobs`, shared by every checkpoint whose channel_versions
name that version. A blob is counted once, at the first checkpoint that references it (`blobs`), and
each checkpoint lists what it references (`blob_refs`) so a retention plan frees a blob only when no
kept checkpoint still names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class CheckpointBytes:
    """One checkpoint's bytes as stored: SQLite's `length()`, PostgreSQL's `pg_column_size()`."""

    checkpoint_id: str
    parent_id: str | None
    checkpoint: int  # the checkpoint column
    metadata: int  # the metadata column
    writes: int  # its rows in writes / checkpoint_writes (the value / blob column)
    blobs: int = 0  # PostgreSQL: checkpoint_blobs first referenced here; always 0 on SQLite
    source: str | None = None  # the metadata's `source`; "input" starts a turn
    blob_refs: frozenset[str] = frozenset()  # PostgreSQL: blob_key() of every blob this checkpoint names
    step: int | None = None  # the metadata's `step` (Mycel dev: the message count), where it says one

    @property
    def total(self) -> int:
        return self.checkpoint + self.metadata + self.writes + self.blobs


def blob_key(channel: str, version: str) -> str:
    """How a checkpoint_blobs row is named within its thread."""
    return f"{channel}\x00{version}"


@dataclass(frozen=True, slots=True)
class ThreadBytes:
    """One thread's checkpoints (root namespace), oldest first, in the store that holds them."""

    thread_id: str
    store: str  # the StoreSpace.store label that holds it ("leon.db", "postgresql agent")
    layout: str  # "main" | "dev"
    checkpoints: tuple[CheckpointBytes, ...]
    blob_sizes: Mapping[str, int] = field(default_factory=dict)  # PostgreSQL: blob_key -> bytes
    # Rows under no checkpoint of the root namespace (sub-graph namespaces, writes whose checkpoint is
    # gone): counted in the thread's bytes, never freed by a retention plan.
    other_bytes: int = 0

    @property
    def total(self) -> int:
        return sum(c.total for c in self.checkpoints) + self.other_bytes


@dataclass(frozen=True, slots=True)
class TableSpace:
    """One table or index of a store: its pages on disk and the payload they carry."""

    name: str
    kind: str  # "table" | "index"
    bytes: int  # pages on disk (dbstat's pgsize, pg_total_relation_size's share)
    payload: int | None  # bytes of row data (dbstat's payload); None when not measured


@dataclass(frozen=True, slots=True)
class StoreSpace:
    """One SQLite file or PostgreSQL schema: its space and how each figure was measured."""

    store: str  # a label shown on every screen ("leon.db", "postgresql agent")
    engine: str  # "sqlite" | "postgresql"
    location: str  # the file's path, or the masked URL
    file_bytes: int  # the file's size (SQLite), or the sum of the schema's relations (PostgreSQL)
    wal_bytes: int | None  # the -wal file beside a SQLite file; None on PostgreSQL
    free_bytes: int | None  # free pages x page size (SQLite), None when not known
    tables: tuple[TableSpace, ...]
    measured_by: str  # "dbstat" | "page counts" | "pg_total_relation_size"
    estimated: tuple[str, ...] = ()  # what is estimated here, and why, in the page's words


@dataclass(frozen=True, slots=True)
class ChannelBytes:
    """One channel of one checkpoint: its bytes inline in the checkpoint, in checkpoint_blobs (PostgreSQL
    only) and in the writes recorded at that checkpoint."""

    channel: str
    inline: int  # SQLite: the value's msgpack bytes inside the checkpoint; PostgreSQL: pg_column_size
    blob: int  # PostgreSQL: checkpoint_blobs rows of the versions this checkpoint names; 0 on SQLite
    writes: int  # writes / checkpoint_writes at this checkpoint on this channel

    @property
    def total(self) -> int:
        return self.inline + self.blob + self.writes


@dataclass(frozen=True, slots=True)
class TableMeasure:
    """A SQLite file's tables and indexes as measured (dbstat walks every page), and the file's page and
    free-page counts then: reused while those counts stay within MEASURE_DRIFT of it."""

    pages: int
    free_pages: int
    tables: tuple[TableSpace, ...]
    measured_by: str
    estimated: tuple[str, ...]
    file: str | None = None  # a digest of the file's content version then: the same now, the same tables


MEASURE_DRIFT = 0.01  # a file whose pages or free pages moved by more than this share is measured again

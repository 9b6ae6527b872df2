"""Broken copies of the sample data home, and every screen of the dashboard to visit over them.

Each breaker takes a writable copy of the sample home and damages one file the way real deployments do:
missing, empty, cut mid-page, not SQLite, an older or Postgres-style LangGraph layout, locked by another
process, or a damaged side database while leon.db is fine.
"""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

from django.urls import reverse

from tests.support.sample_data import SAMPLE_HOME

HX = {"HTTP_HX_REQUEST": "true"}
THREAD = "m_npRsndIka9dx-2"  # tool calls, a spilled output, sandbox rows, 40 checkpoints
PANELS = ("integrity", "sandbox", "queue", "file-operations", "run-events")


def sample_checkpoints(thread_id: str = THREAD) -> list[str]:
    """The thread's checkpoint ids in the pristine sample, oldest first (read without touching it)."""
    uri = f"file:{SAMPLE_HOME / 'leon.db'}?mode=ro&immutable=1"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        rows = db.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (thread_id,)
        ).fetchall()
    return [r[0] for r in rows]


def sample_spill_id() -> str:
    return next((SAMPLE_HOME / "workspaces").rglob("tool-results/*.txt")).stem


@dataclass(frozen=True)
class Screen:
    name: str
    url: str
    headers: dict[str, str]

    def __str__(self) -> str:
        partial = " (htmx)" if self.headers else ""
        return f"{self.name} {self.url}{partial}"


def every_screen(
    thread_id: str = THREAD, checkpoint_ids: list[str] | None = None, spill_id: str | None = None
) -> Iterator[Screen]:
    """Every GET page, partial and panel a viewer or operator can open about one thread.

    Checkpoint ids (oldest first) and the spill file default to the sample home's.
    """
    ids = checkpoint_ids if checkpoint_ids is not None else sample_checkpoints(thread_id)
    head, older = ids[-1], ids[len(ids) // 2]
    yield Screen("home", reverse("home"), {})
    yield Screen("threads", reverse("threads"), {})
    yield Screen(
        "threads", f"{reverse('threads')}?sort=messages&order=desc", {**HX, "HTTP_HX_TARGET": "thread-rows"}
    )
    thread = reverse("thread", args=[thread_id])
    yield Screen("thread", thread, {})
    yield Screen("thread", f"{thread}?view=sent", {})
    yield Screen("thread", f"{thread}?view=sent", {**HX, "HTTP_HX_TARGET": "timeline"})
    for panel in PANELS:
        url = reverse("panel", args=[thread_id, panel])
        yield Screen("panel", url, {})
        yield Screen("panel", url, HX)
    yield Screen("message_text", reverse("message_text", args=[thread_id, 1]), {})
    yield Screen("spill", reverse("spill", args=[thread_id, spill_id or sample_spill_id()]), {})
    for checkpoint_id in (head, older):
        url = reverse("checkpoint", args=[thread_id, checkpoint_id])
        yield Screen("checkpoint", url, {})
        yield Screen("checkpoint", f"{url}?against={ids[0]}", {**HX, "HTTP_HX_TARGET": "checkpoint-diff"})
    yield Screen("rollback_preview", reverse("rollback_preview", args=[thread_id, older]), {})
    yield Screen("undo_preview", reverse("undo_preview", args=[thread_id]), {})
    dry_run = reverse("dry_run", args=[thread_id])
    yield Screen("dry_run", dry_run, {})
    yield Screen("dry_run", f"{dry_run}?context_limit=2000", {**HX, "HTTP_HX_TARGET": "dry-run-result"})
    config = f"{reverse('config')}?{urlencode({'thread': thread_id})}"
    yield Screen("config", config, {})
    yield Screen("config", f"{config}&memory.pruning.soft_trim_chars=100", {**HX, "HTTP_HX_TARGET": "whatif"})
    preview = f"{reverse('config_preview')}?{urlencode({'thread': thread_id, 'layer': 'user'})}"
    yield Screen("config_preview", f"{preview}&memory.pruning.soft_trim_chars=1500", {})
    yield Screen("audit", reverse("audit"), {})


# -- breakers ---------------------------------------------------------------------------------------


def _replace(path: Path, data: bytes) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    path.write_bytes(data)


def missing(path: Path) -> None:
    _replace(path, b"")
    path.unlink()


def empty(path: Path) -> None:
    _replace(path, b"")


def truncated(path: Path) -> None:
    """Cut one and a half pages in: the header is intact, the schema and data pages are gone."""
    data = path.read_bytes()
    page_size = int.from_bytes(data[16:18], "big") or 65536
    _replace(path, data[: page_size + page_size // 2])


def random_bytes(path: Path) -> None:
    _replace(path, random.Random(6).randbytes(3 * 4096))


def text_file(path: Path) -> None:
    _replace(path, b"# notes\nThis file was overwritten by an editor.\n" * 40)


def _rewrite(path: Path, script: str) -> None:
    with closing(sqlite3.connect(path)) as db:
        db.executescript(script)
        db.commit()
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def thread_ts_layout(path: Path) -> None:
    """langgraph 0.0.x's SqliteSaver: thread_ts/parent_ts, no namespace, no type; writes keyed the same way."""
    _rewrite(
        path,
        """
        CREATE TABLE old_checkpoints (thread_id TEXT NOT NULL, thread_ts TEXT NOT NULL, parent_ts TEXT,
            checkpoint BLOB, metadata BLOB, PRIMARY KEY (thread_id, thread_ts));
        INSERT INTO old_checkpoints SELECT thread_id, checkpoint_id, parent_checkpoint_id, checkpoint, metadata
            FROM checkpoints;
        DROP TABLE checkpoints;
        ALTER TABLE old_checkpoints RENAME TO checkpoints;
        CREATE TABLE old_writes (thread_id TEXT NOT NULL, thread_ts TEXT NOT NULL, task_id TEXT NOT NULL,
            idx INTEGER NOT NULL, channel TEXT NOT NULL, value BLOB,
            PRIMARY KEY (thread_id, thread_ts, task_id, idx));
        INSERT INTO old_writes SELECT thread_id, checkpoint_id, task_id, idx, channel, value FROM writes;
        DROP TABLE writes;
        ALTER TABLE old_writes RENAME TO writes;
        """,
    )


def no_namespace_layout(path: Path) -> None:
    """An early langgraph-checkpoint-sqlite: checkpoint_id and type, but no checkpoint_ns column."""
    _rewrite(
        path,
        """
        CREATE TABLE old_checkpoints (thread_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
            parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
            PRIMARY KEY (thread_id, checkpoint_id));
        INSERT INTO old_checkpoints SELECT thread_id, checkpoint_id, parent_checkpoint_id, type, checkpoint,
            metadata FROM checkpoints;
        DROP TABLE checkpoints;
        ALTER TABLE old_checkpoints RENAME TO checkpoints;
        """,
    )


def task_path_layout(path: Path) -> None:
    """The newer saver's writes table (task_path added), as its setup() leaves Mycel's file."""
    _rewrite(path, "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT '';")


def postgres_layout(path: Path) -> None:
    """LangGraph's Postgres saver tables, created in SQLite (checkpoint JSON, blobs per channel version)."""
    _rewrite(
        path,
        """
        DROP TABLE checkpoints;
        DROP TABLE writes;
        CREATE TABLE checkpoint_migrations (v INTEGER PRIMARY KEY);
        INSERT INTO checkpoint_migrations VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
        CREATE TABLE checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint TEXT NOT NULL,
            metadata TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));
        CREATE TABLE checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            channel TEXT NOT NULL, version TEXT NOT NULL, type TEXT NOT NULL, blob BLOB,
            PRIMARY KEY (thread_id, checkpoint_ns, channel, version));
        CREATE TABLE checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
            checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL,
            type TEXT, blob BLOB NOT NULL, task_path TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));
        INSERT INTO checkpoints VALUES ('m_npRsndIka9dx-2', '', '1f0c0000-0000-6000-8000-000000000001', NULL,
            NULL, '{"v": 1, "channel_versions": {"messages": "1"}, "channel_values": {}}', '{"step": 0}');
        INSERT INTO checkpoint_blobs VALUES ('m_npRsndIka9dx-2', '', 'messages', '1', 'msgpack', x'90');
        """,
    )


def corrupt_pages(path: Path) -> None:
    """Overwrite everything after the first page: the header says SQLite, the b-trees are garbage."""
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big") or 65536
    noise = random.Random(9).randbytes(len(data) - page_size)
    _replace(path, bytes(data[:page_size]) + noise)


@contextmanager
def exclusively_locked(path: Path) -> Iterator[None]:
    """Another process takes an EXCLUSIVE lock on `path` (WAL mode too: locking_mode=EXCLUSIVE) and holds
    it until the block ends."""
    script = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('PRAGMA locking_mode=EXCLUSIVE')\n"
        "db.execute('BEGIN EXCLUSIVE')\n"
        "db.execute('CREATE TABLE IF NOT EXISTS lock_holder (x)')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()  # the holder's read returns, it exits, and its transaction is rolled back
        holder.wait(timeout=10)

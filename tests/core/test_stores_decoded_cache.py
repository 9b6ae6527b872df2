"""The reader keeps a few decoded states in memory, keyed by the payload's bytes: never stale."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from memory_core import memo
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import build_thread, point_locations


def _head_id(db: Path, thread_id: str) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return str(
            conn.execute(
                "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ?", (thread_id,)
            ).fetchone()[0]
        )


def test_a_second_read_of_the_same_head_returns_the_same_messages(tmp_path: Path) -> None:
    build_thread(tmp_path / "leon.db", "t", turns=2)
    memo.reset()
    reader = MycelReader(point_locations(tmp_path))
    first = reader.get_state("t").value
    again = MycelReader(point_locations(tmp_path)).get_state("t").value
    assert first is not None and again is not None
    assert again.messages is first.messages  # answered from memory, not decoded again
    assert again.checkpoint == first.checkpoint


def test_a_rewritten_payload_under_the_same_id_is_decoded_afresh(tmp_path: Path) -> None:
    db = tmp_path / "leon.db"
    build_thread(db, "t", turns=2)
    build_thread(db, "other", turns=1)
    memo.reset()
    reader = MycelReader(point_locations(tmp_path))
    before = reader.get_state("t").value
    assert before is not None and len(before.messages) > 3
    # Put another thread's head bytes under t's head id: same id, different payload.
    with closing(sqlite3.connect(db)) as conn:
        blob = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?", (_head_id(db, "other"),)
        ).fetchone()[0]
        conn.execute(
            "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?", (blob, _head_id(db, "t"))
        )
        conn.commit()
    after = reader.get_state("t").value
    assert after is not None and after.checkpoint.checkpoint_id == before.checkpoint.checkpoint_id
    assert [m.text for m in after.messages] == [
        m.text
        for m in MycelReader(point_locations(tmp_path)).get_state("other").value.messages  # type: ignore[union-attr]
    ]
    assert len(after.messages) < len(before.messages)


def _ids(reader: MycelReader) -> set[str]:
    return {row.thread_id for row in reader.list_threads().value}


def test_the_thread_list_sees_every_commit_in_rollback_journal_mode(tmp_path: Path) -> None:
    db = tmp_path / "leon.db"
    build_thread(db, "a", turns=1)
    memo.reset()
    reader = MycelReader(point_locations(tmp_path))
    assert _ids(reader) == {"a"}
    assert _ids(reader) == {"a"}  # answered from the kept list
    build_thread(db, "b", turns=1)
    assert _ids(reader) == {"a", "b"}
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("DELETE FROM checkpoints WHERE thread_id = 'a'")
        conn.execute("DELETE FROM writes WHERE thread_id = 'a'")
        conn.commit()
    assert _ids(reader) == {"b"}


def test_the_thread_list_sees_every_commit_in_wal_mode_with_a_writer_open(tmp_path: Path) -> None:
    db = tmp_path / "leon.db"
    build_thread(db, "a", turns=1)
    with closing(sqlite3.connect(db)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")  # the WAL only grows while this writer is open
        memo.reset()
        reader = MycelReader(point_locations(tmp_path))
        assert _ids(reader) == {"a"}
        for n in range(3):
            writer.execute(
                "INSERT INTO checkpoints SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
                "checkpoint, metadata FROM checkpoints WHERE thread_id = 'a'",
                (f"copy-{n}",),
            )
            writer.commit()
            assert f"copy-{n}" in _ids(reader)
        # A checkpoint that resets the WAL, then a commit that rewrites it from the start.
        writer.execute("PRAGMA wal_checkpoint(RESTART)")
        writer.execute("DELETE FROM checkpoints WHERE thread_id = 'copy-0'")
        writer.commit()
        assert _ids(reader) == {"a", "copy-1", "copy-2"}


def test_a_threads_row_is_kept_per_files_version_and_sees_new_turns(tmp_path: Path) -> None:
    db = tmp_path / "leon.db"
    build_thread(db, "t", turns=1)
    memo.reset()
    reader = MycelReader(point_locations(tmp_path))
    reader.get_thread("t")  # the first read of a WAL file makes SQLite create its -wal: a new version
    first = reader.get_thread("t").value
    assert first is not None
    assert reader.get_thread("t").value is first  # answered from the kept row
    with closing(sqlite3.connect(db)) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute(
            "INSERT INTO checkpoints SELECT thread_id, checkpoint_ns, checkpoint_id || '-copy', checkpoint_id,"
            " type, checkpoint, metadata FROM checkpoints WHERE thread_id = 't' ORDER BY checkpoint_id DESC LIMIT 1"
        )
        writer.commit()
        again = reader.get_thread("t").value
        assert again is not None and again is not first
        assert again.checkpoints == first.checkpoints + 1
    assert reader.get_thread("unknown").value is None


def test_a_list_of_unchanged_files_is_answered_from_the_memo(tmp_path: Path) -> None:
    build_thread(tmp_path / "leon.db", "t", turns=1)
    memo.reset()
    reader = MycelReader(point_locations(tmp_path))
    reader.list_threads()  # the first read of a file makes SQLite create its -wal: a new version
    first = reader.list_threads().value
    before = memo.stats()["stores.thread_lists"]
    assert MycelReader(point_locations(tmp_path)).list_threads().value is first
    after = memo.stats()["stores.thread_lists"]
    assert (after.hits - before.hits, after.misses - before.misses) == (1, 0)

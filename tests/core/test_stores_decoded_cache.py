"""The reader keeps a few decoded states in memory, keyed by the payload's bytes: never stale."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from memory_core.stores.reader import MycelReader, clear_caches
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
    clear_caches()
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
    clear_caches()
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

"""The exported retention script, run for real with sqlite3 on copies of data homes.

What the plan says it frees is what the script frees (independent length() sums before and after), the file
shrinks by that within its page slack, every kept head still opens through LangGraph's own SqliteSaver with
the same messages, and the script's own guards spare a head, a fork point and a rollback target that
appeared after the export.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core.app.retention import retention_dry_run
from memory_core.app.rollback import apply_rollback, preview_rollback
from memory_core.footprint.retention import RetentionPolicy
from memory_core.footprint.script import retention_script
from memory_core.rollback import ROLLBACK_METADATA_KEY
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import build_thread, point_locations
from tests.support.odd_ids import ODD_IDS, write_odd_home
from tests.support.sample_data import SAMPLE_HOME

SQLITE3 = shutil.which("sqlite3")


def _run_script(db: Path, script: str, tmp_path: Path) -> None:
    plan = tmp_path / "plan.sql"
    plan.write_text(script, encoding="utf-8")
    assert SQLITE3 is not None, "the sqlite3 command-line shell is needed (apt-get install sqlite3)"
    with plan.open("rb") as stdin:
        done = subprocess.run([SQLITE3, "-bail", str(db)], stdin=stdin, capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()


def _row_bytes(db: Path) -> int:
    """Every checkpoint's and write's stored bytes, measured independently of the product's queries."""
    with closing(sqlite3.connect(db)) as conn:
        checkpoints = conn.execute(
            "SELECT coalesce(sum(length(CAST(checkpoint AS BLOB)) + length(CAST(metadata AS BLOB))), 0)"
            " FROM checkpoints"
        ).fetchone()[0]
        writes = conn.execute("SELECT coalesce(sum(length(CAST(value AS BLOB))), 0) FROM writes").fetchone()[
            0
        ]
    return int(checkpoints) + int(writes)


def _ids(db: Path, thread_id: str) -> set[str]:
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''", (thread_id,)
        )
        return {str(r[0]) for r in rows}


def _threads(db: Path) -> list[str]:
    with closing(sqlite3.connect(db)) as conn:
        return [str(r[0]) for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")]


def _head_messages(db: Path, thread_id: str) -> tuple[str | None, list[tuple[str, Any]]]:
    """The head as LangGraph's own saver opens it: its id and (type, content) of every message."""
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        found = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    assert found is not None, f"{thread_id!r} no longer opens"
    messages = found.checkpoint["channel_values"].get("messages", [])
    return found.config["configurable"]["checkpoint_id"], [(m.type, m.content) for m in messages]


def _vacuumed(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


def _page_size(db: Path) -> int:
    with closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


@pytest.fixture
def built_home(tmp_path: Path) -> Path:
    """Threads written by the real SqliteSaver driving a real graph: one forked, one rolled back by the
    dashboard (so it holds a rollback target and an undo target), one plain."""
    home = tmp_path / "built"
    home.mkdir()
    db = home / "leon.db"
    build_thread(db, "forked", turns=4, fork_after_turn=2, tool_chars=2000)
    build_thread(db, "rolled", turns=4, tool_chars=3000)
    build_thread(db, "plain", turns=5, parallel=3, tool_chars=1500)
    reader = MycelReader(point_locations(home))
    rows = reader.list_checkpoints("rolled").value
    target = rows[len(rows) // 2].checkpoint_id
    impact = preview_rollback(reader, "rolled", target)
    apply_rollback(reader.locations, impact, actor="test", force=True, reader=reader)
    return home


def _plan(home: Path, policy: RetentionPolicy):
    run = retention_dry_run(MycelReader(point_locations(home)), policy)
    assert run.target.engine == "sqlite"
    return run


def _check_script_frees_what_the_plan_says(home: Path, policy: RetentionPolicy, tmp_path: Path) -> None:
    db = home / "leon.db"
    run = _plan(home, policy)
    plan = run.plan
    assert plan.frees_bytes > 0
    threads = _threads(db)
    heads = {t: _head_messages(db, t) for t in threads}
    rows_before, size_before = _row_bytes(db), _vacuumed(db)
    _run_script(db, retention_script(plan, run.target), tmp_path)
    rows_after, size_after = _row_bytes(db), db.stat().st_size

    assert rows_before - rows_after == plan.frees_bytes  # to the byte
    # The file shrinks by the freed payload plus what each deleted row carried besides it: its key in the
    # table and again in the primary-key index, its cell header, and the unused tail of its last overflow
    # page (a big value fills whole pages). So at least the plan's bytes (less a few pages of b-tree
    # rebalancing), at most the plan's bytes plus one page per deleted row and a few pages per b-tree.
    page = _page_size(db)
    deleted_rows = plan.drops * 2  # each checkpoint and (at least) its writes' rows
    shrink = size_before - size_after
    assert plan.frees_bytes - 8 * page <= shrink <= plan.frees_bytes + deleted_rows * page + 16 * page

    for t in plan.threads:
        assert _ids(db, t.thread_id) == set(t.keeps), t.thread_id
        assert not set(t.drops) & _ids(db, t.thread_id)
    for thread_id, (head_id, messages) in heads.items():
        assert _head_messages(db, thread_id) == (head_id, messages)


@pytest.mark.parametrize(
    "policy",
    [
        RetentionPolicy(keep_last=3),
        RetentionPolicy(heads_only=True),
        RetentionPolicy(keep_last=2, idle_days=0),
    ],
    ids=["keep-last-3", "heads-only", "keep-last-2-idle-0"],
)
def test_the_script_frees_exactly_the_planned_bytes_on_a_built_home(
    built_home: Path, policy: RetentionPolicy, tmp_path: Path
) -> None:
    _check_script_frees_what_the_plan_says(built_home, policy, tmp_path)


def test_the_script_frees_exactly_the_planned_bytes_on_the_sample_home(tmp_path: Path) -> None:
    home = tmp_path / "sample"
    shutil.copytree(SAMPLE_HOME, home)
    for path in home.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    _check_script_frees_what_the_plan_says(home, RetentionPolicy(keep_last=2), tmp_path)


def test_heads_fork_points_and_rollback_targets_are_kept_and_named(built_home: Path) -> None:
    plan = _plan(built_home, RetentionPolicy(heads_only=True)).plan
    by_id = {t.thread_id: t for t in plan.threads}
    assert "fork point" in by_id["forked"].keeps.values()
    rolled = by_id["rolled"].keeps
    assert any("dashboard rollback target" in why for why in rolled.values())
    assert any("undo target" in why for why in rolled.values())
    for t in plan.threads:
        assert max(_ids(built_home / "leon.db", t.thread_id)) in t.keeps


def test_odd_ids_survive_the_script(tmp_path: Path) -> None:
    home = write_odd_home(tmp_path / "odd")
    db = home / "leon.db"
    run = _plan(home, RetentionPolicy(heads_only=True))
    assert {t.thread_id for t in run.plan.touched} == set(ODD_IDS.values())
    before = _row_bytes(db)
    _run_script(db, retention_script(run.plan, run.target), tmp_path)
    assert before - _row_bytes(db) == run.plan.frees_bytes
    for thread_id in ODD_IDS.values():
        assert _ids(db, thread_id) == {"0 cp/2 分身 .."}
        assert _head_messages(db, thread_id)[1][-1] == ("ai", "done")


def test_a_stale_script_spares_a_fork_point_and_a_rollback_target_written_after_the_export(
    built_home: Path, tmp_path: Path
) -> None:
    db = built_home / "leon.db"
    run = _plan(built_home, RetentionPolicy(heads_only=True))
    script = retention_script(run.plan, run.target)
    plain = next(t for t in run.plan.threads if t.thread_id == "plain")
    forked_from, rollback_target = plain.drops[1], plain.drops[3]
    # After the export, Mycel forks from a dropped checkpoint (now the parent of two) and a dashboard
    # rollback elsewhere names another as its target; both written by the real saver.
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        parent = saver.get_tuple(
            {"configurable": {"thread_id": "plain", "checkpoint_ns": "", "checkpoint_id": forked_from}}
        )
        assert parent is not None
        fork = parent.checkpoint.copy()
        fork["id"] = "0-fork-written-after-the-export"
        saver.put(parent.config, fork, {"source": "fork", "step": 99, "parents": {}}, {})
        note = empty_checkpoint()
        note["id"] = "0-rollback-written-after-the-export"
        saver.put(
            {"configurable": {"thread_id": "plain", "checkpoint_ns": ""}},
            note,
            {
                "source": "update",
                "step": 100,
                ROLLBACK_METADATA_KEY: {"action": "rollback", "target": rollback_target},
            },
            {},
        )
    _run_script(db, script, tmp_path)
    left = _ids(db, "plain")
    assert forked_from in left and rollback_target in left
    assert set(plain.drops) - {forked_from, rollback_target} == set(plain.drops) - left
    # The spared checkpoints keep their writes.
    with closing(sqlite3.connect(db)) as conn:
        writes = conn.execute(
            "SELECT count(*) FROM writes WHERE thread_id = 'plain' AND checkpoint_id IN (?, ?)",
            (forked_from, rollback_target),
        ).fetchone()[0]
    assert writes > 0


def test_a_script_run_on_an_older_copy_spares_that_copys_head(built_home: Path, tmp_path: Path) -> None:
    # The operator restores an older backup and runs a newer plan on it: the copy's head is in the plan's
    # drops (it was not the head when planned), and the guard in the SQL must still keep it.
    older = tmp_path / "older"
    shutil.copytree(built_home, older)
    build_thread(built_home / "leon.db", "plain", turns=2, parallel=3, tool_chars=1500)
    run = _plan(built_home, RetentionPolicy(heads_only=True))
    plain = next(t for t in run.plan.threads if t.thread_id == "plain")
    old_head = max(_ids(older / "leon.db", "plain"))
    assert old_head in plain.drops
    head_before = _head_messages(older / "leon.db", "plain")
    _run_script(older / "leon.db", retention_script(run.plan, run.target), tmp_path)
    assert old_head in _ids(older / "leon.db", "plain")
    assert _head_messages(older / "leon.db", "plain") == head_before


def test_a_plan_is_kept_until_the_store_changes(built_home: Path) -> None:
    policy = RetentionPolicy(keep_last=2)
    _plan(built_home, policy)  # the first read leaves an empty -wal beside the file: a new version
    first = _plan(built_home, policy)
    assert _plan(built_home, policy) is first  # the same policy over the same data: not planned again
    build_thread(built_home / "leon.db", "plain", turns=1, parallel=3, tool_chars=1500)
    again = _plan(built_home, policy)
    assert again is not first
    assert again.plan.frees_bytes > first.plan.frees_bytes

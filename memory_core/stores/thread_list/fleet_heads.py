"""The fleet index's questions to leon.db, answered from the checkpoints' primary-key index alone.

- `heads_since`: the threads with a root checkpoint newer than an id (all threads when None), each with
  its checkpoint count and head id: what the fleet index asks on every look to learn what moved;
- `newest_heads`: one page of threads by newest activity or id, with how many there are: the list's floor,
  answered by SQL alone while the index is still being built;
- `row_mark` and `heads_after`: the same as `heads_since`, reading only the rows written after the newest
  row a look saw (a look that left nothing behind keeps its mark);
- `counts_since`: how many threads there are and how many moved after an id: the live poll's question,
  one aggregate however many moved.

No row cap: a fleet's size is never decided by one (a page is bounded by its LIMIT instead).
"""

from __future__ import annotations

from memory_core.stores.sqlite.connect import EVERY_ROW, ReadOnlyDB, StoreError

Head = tuple[str, int, str]  # thread id, root checkpoint count, head (newest) checkpoint id


def heads_since(db: ReadOnlyDB, since: str | None) -> list[Head]:
    """(thread, count, head) of every thread with a root checkpoint id > `since` (every thread if None)."""
    if not db.require_table("checkpoints"):
        return []
    moved, params = "", tuple[str, ...]()
    if since is not None:
        # checkpoint_id is in the primary key's index (thread_id, checkpoint_ns, checkpoint_id): the scan
        # reads that index, never the rows with their blobs.
        moved = "AND thread_id IN (SELECT thread_id FROM checkpoints WHERE checkpoint_id > ?)"
        params = (since,)
    rows = db.rows_as_json(
        "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS count, CAST(MAX(checkpoint_id) AS TEXT) AS head "
        f"FROM checkpoints WHERE checkpoint_ns = '' {moved} GROUP BY thread_id",
        params,
        columns=("thread", "count", "head"),
        cap=EVERY_ROW,
    )
    return [(str(t), int(n), str(h)) for t, n, h in rows]


# The newest row of `checkpoints` as a look saw it: (rowid, thread id, checkpoint id).
RowMark = tuple[int, str, str]


def row_mark(db: ReadOnlyDB) -> RowMark | None:
    """The newest row by rowid (the last of the table's b-tree: one step), None for an empty table or one
    without rowids."""
    try:
        found = db.one(
            "SELECT rowid, CAST(thread_id AS TEXT), CAST(checkpoint_id AS TEXT) FROM checkpoints "
            "ORDER BY rowid DESC LIMIT 1"
        )
    except StoreError:  # a table WITHOUT ROWID (any other failure meets the question that follows)
        return None
    return (int(found[0]), str(found[1]), str(found[2])) if found else None


def heads_after(db: ReadOnlyDB, mark: RowMark) -> list[Head] | None:
    """(thread, count, head) of every thread with a row written after `mark`, reading only those rows and
    those threads' keys; None when `mark` no longer names the same row, so rowids cannot be trusted: a VACUUM
    renumbered them, or the newest row was deleted and its rowid given again.

    SQLite gives a new row the largest rowid plus one and writers take turns, so while the marked row
    stands every row written after it has a larger rowid."""
    rowid, thread_id, checkpoint_id = mark
    same = db.one(
        "SELECT CAST(thread_id AS TEXT), CAST(checkpoint_id AS TEXT) FROM checkpoints WHERE rowid = ?",
        (rowid,),
    )
    if same is None or (str(same[0]), str(same[1])) != (thread_id, checkpoint_id):
        return None
    rows = db.rows_as_json(
        "SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS count, CAST(MAX(checkpoint_id) AS TEXT) AS head "
        "FROM checkpoints WHERE checkpoint_ns = '' "
        "AND thread_id IN (SELECT thread_id FROM checkpoints WHERE rowid > ?) GROUP BY thread_id",
        (rowid,),
        columns=("thread", "count", "head"),
        cap=EVERY_ROW,
    )
    return [(str(t), int(n), str(h)) for t, n, h in rows]


def counts_since(db: ReadOnlyDB, since: str) -> tuple[int, int]:
    """(threads with a root checkpoint, those with one whose id is > `since`), in one scan of the keys."""
    if not db.require_table("checkpoints"):
        return 0, 0
    found = db.one(
        "SELECT COUNT(DISTINCT thread_id), COUNT(DISTINCT CASE WHEN checkpoint_id > ? THEN thread_id END) "
        "FROM checkpoints WHERE checkpoint_ns = ''",
        (since,),
    )
    return (int(found[0]), int(found[1])) if found else (0, 0)


def newest_heads(
    db: ReadOnlyDB, *, limit: int, offset: int, by_id: bool, descending: bool
) -> tuple[int, list[Head]]:
    """(how many threads have root checkpoints, one page of them) by head id (= newest activity) or id."""
    if not db.require_table("checkpoints"):
        return 0, []
    order = "thread" if by_id else "head"
    direction = "DESC" if descending else "ASC"
    # The page is a subquery: rows_as_json adds its own LIMIT around it.
    rows = db.rows_as_json(
        "SELECT * FROM (SELECT CAST(thread_id AS TEXT) AS thread, COUNT(*) AS count, "
        "CAST(MAX(checkpoint_id) AS TEXT) AS head, COUNT(*) OVER () AS total FROM checkpoints "
        f"WHERE checkpoint_ns = '' GROUP BY thread_id ORDER BY {order} {direction}, thread {direction} "
        "LIMIT ? OFFSET ?)",
        (limit, offset),
        columns=("thread", "count", "head", "total"),
        cap=EVERY_ROW,
    )
    if not rows:
        total = db.one("SELECT COUNT(DISTINCT thread_id) FROM checkpoints WHERE checkpoint_ns = ''")
        return int(total[0]) if total else 0, []
    return int(rows[0][3]), [(str(t), int(n), str(h)) for t, n, h, _ in rows]

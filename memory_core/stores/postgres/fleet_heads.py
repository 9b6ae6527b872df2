"""The fleet index's questions to PostgreSQL (stores/thread_list/fleet_heads.py says what each answers).

Both read only `checkpoints`' keys. `heads_since` filters on checkpoint_id, which leads no index of the
saver's (its primary key is thread_id, checkpoint_ns, checkpoint_id): the server scans the primary key's
index or the table. The database's owner may add `CREATE INDEX ON <schema>.checkpoints (checkpoint_id)`
to make it a range scan (docs/deploying-and-operating.md); the dashboard never creates one.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_core.stores.postgres.connect import PgRead
from memory_core.stores.postgres.layout import PostgresLayout

Head = tuple[str, int, str]  # thread id, root checkpoint count, head (newest) checkpoint id


def _keys(layouts: Sequence[PostgresLayout]) -> str:
    # A database mid-migration holds two layouts: their root checkpoints read as one table.
    return " UNION ALL ".join(
        f"SELECT thread_id, checkpoint_id FROM {layout.table('checkpoints')} WHERE checkpoint_ns = ''"
        for layout in layouts
    )


def heads_since(read: PgRead, layouts: Sequence[PostgresLayout], since: str | None) -> list[Head]:
    """(thread, count, head) of every thread with a root checkpoint id > `since` (every thread if None)."""
    if not layouts:
        return []
    moved, params = "", tuple[str, ...]()
    if since is not None:
        moved = "WHERE thread_id IN (SELECT thread_id FROM k WHERE checkpoint_id > %s)"
        params = (since,)
    # NOT MATERIALIZED: `k` is read twice, and a materialised `k` copies every key before the filter
    # (86 ms at 100,000 threads); inlined, the filter and each moved thread's count are index scans (16 ms).
    rows = read.rows(
        f"WITH k AS NOT MATERIALIZED ({_keys(layouts)}) SELECT thread_id, count(*), max(checkpoint_id) FROM k {moved} "
        "GROUP BY thread_id",
        params,
        capped=False,
    )
    return [(str(t), int(n), str(h)) for t, n, h in rows]


def counts_since(read: PgRead, layouts: Sequence[PostgresLayout], since: str) -> tuple[int, int]:
    """(threads with a root checkpoint, those with one whose id is > `since`), in one scan of the keys."""
    if not layouts:
        return 0, 0
    found = read.one(
        f"WITH k AS ({_keys(layouts)}) SELECT count(DISTINCT thread_id), "
        "count(DISTINCT thread_id) FILTER (WHERE checkpoint_id > %s) FROM k",
        (since,),
    )
    return (int(found[0]), int(found[1])) if found else (0, 0)


def newest_heads(
    read: PgRead, layouts: Sequence[PostgresLayout], *, limit: int, offset: int, by_id: bool, descending: bool
) -> tuple[int, list[Head]]:
    """(how many threads have root checkpoints, one page of them) by head id (= newest activity) or id."""
    if not layouts:
        return 0, []
    order = "thread_id" if by_id else "head"
    direction = "DESC" if descending else "ASC"
    rows = read.rows(
        f"WITH k AS ({_keys(layouts)}) SELECT thread_id, count(*), max(checkpoint_id) AS head, "
        f"count(*) OVER () FROM k GROUP BY thread_id ORDER BY {order} {direction}, thread_id {direction} "
        "LIMIT %s OFFSET %s",
        (limit, offset),
        capped=False,
    )
    if not rows:
        total = read.one(f"WITH k AS ({_keys(layouts)}) SELECT count(DISTINCT thread_id) FROM k")
        return int(total[0]) if total else 0, []
    return int(rows[0][3]), [(str(t), int(n), str(h)) for t, n, h, _ in rows]

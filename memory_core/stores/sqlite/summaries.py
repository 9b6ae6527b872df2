"""Mycel's compaction summaries: summary.db for web threads, leon.db for the others (reference §1.4, §2.5)."""

from __future__ import annotations

from memory_core.records import SummaryRow
from memory_core.stores.rows import summary_row
from memory_core.stores.sqlite.connect import ReadOnlyDB

_COLUMNS = (
    "summary_id, thread_id, summary_text, compact_up_to_index, compacted_at, is_split_turn, "
    "split_turn_prefix, is_active, created_at"
)


def list_summaries(db: ReadOnlyDB, thread_id: str) -> list[SummaryRow]:
    """One thread's summaries in this file, oldest first (rowid = insertion order, as Mycel saved them)."""
    if not db.require_table("summaries"):
        return []
    rows = db.rows(
        f"SELECT {_COLUMNS} FROM summaries WHERE thread_id = ? ORDER BY created_at, rowid", (thread_id,)
    )
    return [summary_row(r, store=db.store) for r in rows]


def summary_counts(db: ReadOnlyDB, thread_id: str | None = None) -> dict[str, tuple[int, bool]]:
    """Per thread: (summaries, has an active one), aggregated in SQL."""
    if not db.require_table("summaries"):
        return {}
    where, params = ("WHERE thread_id = ?", (thread_id,)) if thread_id is not None else ("", ())
    rows = db.rows(
        f"SELECT thread_id, COUNT(*), MAX(CASE WHEN is_active THEN 1 ELSE 0 END) FROM summaries {where} "
        "GROUP BY thread_id",
        params,
    )
    return {str(r[0]): (int(r[1]), bool(r[2])) for r in rows}

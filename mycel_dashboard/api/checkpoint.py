"""A checkpoint as the API gives it: the Checkpoint screen's data (its presenter), as JSON."""

from __future__ import annotations

from typing import Any

from mycel_dashboard.screens.checkpoint.presenter import CheckpointPage
from mycel_dashboard.screens.thread_detail.panels import cell


def checkpoint_json(thread_id: str, page: CheckpointPage) -> dict[str, Any]:
    """The state at the checkpoint and its diff against its parent, each value as the page shows it."""
    row = page.row
    return {
        "thread_id": thread_id,
        "checkpoint_id": page.checkpoint_id,
        "parent_checkpoint_id": page.parent_id,
        "lineage_note": page.lineage_note,
        "head_checkpoint_id": page.head_id,
        "is_head": page.head_id == page.checkpoint_id,
        "step": row.step if row else None,
        "source": row.source if row else None,
        "created_at": row.created_at.isoformat() if row and row.created_at else None,
        "readable": row.readable if row else page.state is not None,
        "metadata": dict(page.metadata),
        "channels": dict(page.channels),
        "messages": [
            {
                "index": m["index"],
                "type": m["kind"],
                "text": m["text"],
                "call": m["call"],
                "tool_calls": [
                    {"id": t.id, "name": t.name, "args": cell(dict(t.args))} for t in m["tool_calls"]
                ],
            }
            for m in page.state_messages
        ],
        "diff": None if page.diff is None else {"against": page.against_id, **page.diff},
        "warnings": [*page.problems, *page.diff_problems],
    }

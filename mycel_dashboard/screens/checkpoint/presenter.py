"""The Checkpoint screen's data: the state at one checkpoint and its diff against its parent or any other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory_core.diff import diff_states
from memory_core.records import CheckpointRow, CheckpointState
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.screens.thread_detail.panels import cell
from mycel_dashboard.screens.thread_detail.presenter import (
    LINEAGE_FROM_ORDER,
    call_numbers,
    previous_by_order,
)


class NoSuchCheckpoint(LookupError):
    pass


@dataclass(slots=True)
class CheckpointPage:
    checkpoint_id: str
    row: CheckpointRow | None
    state: CheckpointState | None
    choices: list[CheckpointRow]
    against_id: str | None
    against: CheckpointRow | None
    is_parent: bool
    parent_id: str | None  # the stored parent, or on Mycel dev the checkpoint before it in order
    lineage_note: str | None  # why the parent is the predecessor (Mycel dev stores none)
    diff: dict[str, list[dict[str, Any]]] | None
    head_id: str | None
    problems: list[str] = field(default_factory=list)
    diff_problems: list[str] = field(default_factory=list)

    @property
    def state_messages(self) -> list[dict[str, Any]]:
        if self.state is None:
            return []
        numbers = call_numbers(self.state.messages)
        return [
            {
                "index": i,
                "kind": m.type.value,
                "text": m.text,
                "call": numbers.get(i),
                "tool_calls": m.tool_calls,
            }
            for i, m in enumerate(self.state.messages)
        ]

    @property
    def metadata(self) -> list[tuple[str, str]]:
        return [(key, cell(value)) for key, value in sorted((self.row.metadata if self.row else {}).items())]

    @property
    def channels(self) -> list[tuple[str, str]]:
        return [
            (key, cell(value)) for key, value in sorted((self.state.channels if self.state else {}).items())
        ]


def checkpoint_page(
    reader: MycelReader,
    thread_id: str,
    checkpoint_id: str,
    *,
    against: str | None,
    diff_alone: bool,
    lineage_from_order: bool = False,
) -> CheckpointPage:
    """Everything the screen shows; `diff_alone`: the diff part is shown by itself, so it must say why
    there is nothing to compare; `lineage_from_order` (Mycel dev): the parent is the checkpoint before.
    Raises NoSuchCheckpoint when the thread's checkpoints do not have it."""
    problems: list[str] = []
    listing = reader.list_checkpoints(thread_id)
    problems.extend(problem_text(p) for p in listing.problems)
    by_id = {c.checkpoint_id: c for c in listing.value}
    row = by_id.get(checkpoint_id)
    if row is None and not listing.problems:
        raise NoSuchCheckpoint(f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}.")
    found = reader.get_state(thread_id, checkpoint_id)
    problems.extend(problem_text(p) for p in found.problems)
    state = found.value
    if row is not None and not row.readable:
        problems.append(f"This checkpoint could not be decoded: {row.problem or 'unknown reason'}.")

    parent_id = row.parent_checkpoint_id if row is not None else None
    if lineage_from_order and parent_id is None:
        parent_id = previous_by_order(listing.value).get(checkpoint_id)
    against_id = against or parent_id
    diff_problems: list[str] = list(problems) if state is None and diff_alone else []
    if against and against not in by_id:
        if by_id or not listing.problems:
            diff_problems.append(
                f"No checkpoint {against!r} in this thread; compared with the parent instead."
            )
        against_id = parent_id
    diff = None
    if state is not None and against_id:
        other = reader.get_state(thread_id, against_id)
        diff_problems.extend(problem_text(p) for p in other.problems)
        older = other.value
        if older is not None:
            diff = guarded("the diff", lambda: diff_view(older, state), diff_problems)
        else:
            diff_problems.append("The checkpoint to compare with could not be read.")
    return CheckpointPage(
        checkpoint_id=checkpoint_id,
        row=row,
        state=state,
        choices=sorted(listing.value, key=lambda c: c.checkpoint_id, reverse=True),
        against_id=against_id,
        against=by_id.get(against_id) if against_id else None,
        is_parent=against_id == parent_id,
        parent_id=parent_id,
        lineage_note=LINEAGE_FROM_ORDER if lineage_from_order else None,
        diff=diff,
        head_id=reader.head_checkpoint_id(thread_id),
        problems=problems,
        diff_problems=diff_problems,
    )


def diff_view(older: CheckpointState, newer: CheckpointState) -> dict[str, list[dict[str, Any]]]:
    """memory_core's diff in the shape the template lists it."""
    diff = diff_states(older, newer)
    return {
        "added": [{"index": i, "kind": m.type.value, "text": m.text} for i, m in diff.added],
        "removed": [{"index": i, "kind": m.type.value, "text": m.text} for i, m in diff.removed],
        "changed": [
            {
                "index": c.after_index,
                "kind": c.after.type.value,
                "text": c.after.text,
                "before": c.before.text,
            }
            for c in diff.changed
        ],
        "channels": [
            {"name": name, "before": cell(older.channels.get(name)), "after": cell(newer.channels.get(name))}
            for name in diff.channels_changed
        ],
    }

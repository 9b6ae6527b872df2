"""Screen 3: the state at one checkpoint and its diff against its parent or any chosen checkpoint."""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse

from memory_core.diff import diff_states
from memory_core.records import CheckpointState
from mycel_dashboard.screens.checkpoint.forms import CheckpointDiffForm
from mycel_dashboard.screens.shared.memory import guarded, problem_text
from mycel_dashboard.screens.thread.panels import cell
from mycel_dashboard.screens.thread.presenter import call_numbers
from mycel_dashboard.web.lookups import thread_or_404
from mycel_dashboard.web.render import render_screen, wants_partial
from mycel_dashboard.web.source import open_source


def checkpoint_detail(request: HttpRequest, thread_id: str, checkpoint_id: str) -> HttpResponse:
    values, notes = CheckpointDiffForm(request.GET).values()
    source, reader = open_source()
    problems: list[str] = []
    thread_or_404(reader, thread_id, problems)
    listing = reader.list_checkpoints(thread_id)
    problems.extend(problem_text(p) for p in listing.problems)
    by_id = {c.checkpoint_id: c for c in listing.value}
    row = by_id.get(checkpoint_id)
    if row is None and not listing.problems:
        raise Http404(f"Thread {thread_id!r} has no checkpoint {checkpoint_id!r}.")

    state_result = reader.get_state(thread_id, checkpoint_id)
    problems.extend(problem_text(p) for p in state_result.problems)
    state = state_result.value
    if row is not None and not row.readable:
        problems.append(f"This checkpoint could not be decoded: {row.problem or 'unknown reason'}.")

    parent_id = row.parent_checkpoint_id if row is not None else None
    against_id = values["against"] or parent_id
    diff_problems: list[str] = []
    if state is None and wants_partial(request):
        # The diff partial is swapped in alone: it must say itself why there is nothing to compare.
        diff_problems.extend(problems)
    if values["against"] and values["against"] not in by_id:
        if by_id or not listing.problems:
            diff_problems.append(
                f"No checkpoint {values['against']!r} in this thread; compared with the parent instead."
            )
        against_id = parent_id
    diff = None
    against_row = by_id.get(against_id) if against_id else None
    if state is not None and against_id:
        other = reader.get_state(thread_id, against_id)
        diff_problems.extend(problem_text(p) for p in other.problems)
        if other.value is not None:
            older = other.value
            diff = guarded("the diff", lambda: _diff_view(older, state), diff_problems)
        else:
            diff_problems.append("The checkpoint to compare with could not be read.")
    numbers = call_numbers(state.messages) if state is not None else {}
    state_messages = (
        [
            {
                "index": i,
                "kind": m.type.value,
                "text": m.text,
                "call": numbers.get(i),
                "tool_calls": m.tool_calls,
            }
            for i, m in enumerate(state.messages)
        ]
        if state is not None
        else []
    )
    context: dict[str, Any] = {
        "source": source,
        "thread_id": thread_id,
        "checkpoint": row,
        "checkpoint_id": checkpoint_id,
        "state": state,
        "state_messages": state_messages,
        "metadata": [(key, cell(value)) for key, value in sorted((row.metadata if row else {}).items())],
        "channels": [(key, cell(value)) for key, value in sorted((state.channels if state else {}).items())],
        "choices": sorted(listing.value, key=lambda c: c.checkpoint_id, reverse=True),
        "against": against_row,
        "against_id": against_id,
        "is_parent": against_id == parent_id,
        "diff": diff,
        "diff_problems": diff_problems,
        "head_id": reader.head_checkpoint_id(thread_id),
        "problems": problems + notes,
    }
    return render_screen(request, "checkpoint.html", "checkpoint-diff", context)


def _diff_view(older: CheckpointState, newer: CheckpointState) -> dict[str, list[dict[str, Any]]]:
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

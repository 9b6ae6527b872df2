"""What several screens read first about a thread: its row (or a 404) and its head state."""

from __future__ import annotations

from django.http import Http404

from memory_core.records import CheckpointState, ThreadRow
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import problem_text


def thread_or_404(
    reader: MycelReader, thread_id: str, problems: list[str], *, absent: list[str] | None = None
) -> ThreadRow | None:
    """The thread's row; 404 when no store knows it, None (with problems) when the stores cannot be read.

    With `absent`, files and tables Mycel simply has not created go there (said quietly), not in problems.
    """
    result = reader.get_thread(thread_id)
    for p in result.problems:
        (absent if absent is not None and p.expected_absence else problems).append(problem_text(p))
    if result.value is None and not result.problems:
        raise Http404(f"No thread {thread_id!r} in any configured store.")
    return result.value


def head_state(reader: MycelReader, thread_id: str, problems: list[str]) -> CheckpointState | None:
    result = reader.get_state(thread_id)
    problems.extend(problem_text(p) for p in result.problems)
    return result.value

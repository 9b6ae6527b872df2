"""What the live endpoints compare and show: a cheap tag per poll, and the running mark with the call in flight.

Why polling and not SSE: gunicorn runs sync workers, 2 x 4 threads (mycel_dashboard/gunicorn_conf.py). An SSE
stream holds one worker thread for as long as its page stays open, so 8 open pages would take every thread
and the next request (any page, any operator) would wait; a proxy buffers or cuts long responses unless told
otherwise. A poll is a short ordinary GET that works behind any proxy, and when nothing changed it is
answered 304 after the store's version (a stat of the SQLite files, one fingerprint query on Postgres) and a
memo lookup: nothing decoded, no template rendered.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memory_core.memo import Key, Memo, digest
from memory_core.messages import Message, MessageType
from memory_core.records import RunEvent, StoreProblem, ThreadRow
from memory_core.rollback import DashboardWrite, RunningStatus, dashboard_write, running_status
from memory_core.stores.checkpoints import checkpoint_id_at, time_of_checkpoint_id
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import problem_text

# How often an open page asks (live.js reads it from the page). 16 pages every 3 s: ~5 requests/s of 304s.
POLL_INTERVAL_MS = 3000


@dataclass(frozen=True, slots=True)
class ThreadFacts:
    """What one version of the stores says about a thread, read once per version."""

    head: str | None
    messages: int
    checkpoints: int
    updated_at: datetime | None
    run_events: tuple[RunEvent, ...]
    in_flight: str | None  # what the newest messages leave pending: a tool call, or the model's answer
    known: bool  # False: no store knows the id
    problems: tuple[str, ...]
    written_here: DashboardWrite | None = None  # the head is the dashboard's rollback or undo, not a run


@dataclass(frozen=True, slots=True)
class ThreadPulse:
    facts: ThreadFacts
    running: RunningStatus
    etag: str


_FACTS: Memo[ThreadFacts] = Memo("live.thread_facts", max_entries=256)


def store_tag(reader: MycelReader) -> Hashable:
    """The store's identity and version: changes with every commit to any of Mycel's stores."""
    return (reader.store_key, reader.backend.version())


def thread_pulse(reader: MycelReader, thread_id: str, *, now: datetime) -> ThreadPulse:
    """The thread's facts at this version of the stores and whether it looks busy now.

    The tag holds the head and the running mark, not the store's version: a write to another thread
    changes the version but must not redraw this page.
    """
    facts = _FACTS.get_or_compute(
        Key(store_tag(reader), thread=thread_id),
        lambda: _read_facts(reader, thread_id),
        keep=lambda found: not found.problems,
    )
    # A checkpoint the dashboard wrote (the operator's rollback or undo) is no sign of an agent at work.
    newest = None if facts.written_here else facts.updated_at
    running = running_status(now=now, newest_checkpoint_at=newest, run_events=facts.run_events)
    etag = digest(
        "thread",
        reader.store_key,
        thread_id,
        facts.head,
        facts.messages,
        facts.checkpoints,
        running.is_running,
        facts.in_flight if running.is_running else None,
        facts.problems,
    )
    return ThreadPulse(facts=facts, running=running, etag=etag)


def _read_facts(reader: MycelReader, thread_id: str) -> ThreadFacts:
    problems: list[str] = []
    found = reader.get_thread(thread_id)
    problems.extend(problem_text(p) for p in found.problems if not p.expected_absence)
    row = found.value
    if row is None:
        return ThreadFacts(None, 0, 0, None, (), None, known=bool(problems), problems=tuple(problems))
    events = reader.list_run_events(thread_id)
    problems.extend(problem_text(p) for p in events.problems if not p.expected_absence)
    state = reader.get_state(thread_id) if row.head_checkpoint_id else None
    messages = state.value.messages if state is not None and state.value is not None else ()
    return ThreadFacts(
        head=row.head_checkpoint_id,
        messages=len(messages) or row.messages,
        checkpoints=row.checkpoints,
        updated_at=row.updated_at,
        run_events=tuple(events.value),
        in_flight=in_flight(messages),
        known=True,
        problems=tuple(problems),
        written_here=dashboard_write(state.value.checkpoint.metadata)
        if state is not None and state.value is not None
        else None,
    )


def in_flight(messages: Sequence[Message]) -> str | None:
    """What the newest messages are waiting for: unanswered tool calls of the last AI step, or the model's
    next answer after a human turn or a tool result; None when the last AI message ended the turn."""
    if not messages:
        return None
    answered = {m.tool_call_id for m in messages if m.type is MessageType.TOOL}
    for message in reversed(messages):
        if message.type is MessageType.AI:
            pending = [call.name or "?" for call in message.tool_calls if call.id not in answered]
            if pending:
                return "tool call " + ", ".join(dict.fromkeys(pending))
            break
    last = messages[-1]
    if last.type is MessageType.AI and not last.tool_calls:
        return None
    return "the model's answer"


def list_tag(reader: MycelReader, query: str) -> str:
    """The thread list's tag: any commit to any store, and the page's own query (its sort, filter, since)."""
    return digest("threads", store_tag(reader), query)


def newest_activity(rows: Sequence[ThreadRow]) -> float:
    """The newest head time of the listed threads (epoch seconds): what a page was drawn up to."""
    stamps = [row.updated_at.timestamp() for row in rows if row.updated_at is not None]
    return max(stamps, default=0.0)


@dataclass(frozen=True, slots=True)
class ListChanges:
    new: int  # threads first seen after `since`
    moved: int  # threads with a newer head than `since` that were already there
    since: float


def fleet_changes(
    reader: MycelReader,
    since: float | None,
    known: int | None,
    *,
    index_from: int,
    problems: list[StoreProblem],
) -> ListChanges | None:
    """At fleet size (`index_from` threads or more), the changes from the checkpoints' keys (how many
    threads; how many have a checkpoint newer than `since`), one aggregate however many moved, never a
    walk of the fleet; None below. Without `since` the page is as of the newest head now: nothing moved.

    The list's page counts threads only a registry knows too: those are the ones it may call moved, not new."""
    backend = reader.backend
    if since is None:
        total, newest = backend.newest_heads(problems, limit=1, offset=0, by_id=False, descending=True)
        if total < index_from:
            return None
        at = time_of_checkpoint_id(newest[0][2]) if newest else None
        return ListChanges(new=0, moved=0, since=at.timestamp() if at is not None else 0.0)
    # A head "moved" when its time (whole microseconds, time_of_checkpoint_id) is after `since`: its id is
    # above the smallest id of the next microsecond's first tick.
    after = datetime.fromtimestamp(since, UTC) + timedelta(microseconds=1)
    total, changed = backend.thread_counts(problems, since=checkpoint_id_at(after))
    if total < index_from:
        return None
    new = min(max(total - known, 0), changed) if known else 0
    return ListChanges(new=new, moved=changed - new, since=since)


def list_changes(rows: Sequence[ThreadRow], since: float, known: int) -> ListChanges:
    """How many threads moved since the page's newest activity (`since`), and how many are new (the list
    had `known` threads then)."""
    changed = [row for row in rows if row.updated_at is not None and row.updated_at.timestamp() > since]
    new = min(max(len(rows) - known, 0), len(changed)) if known else 0
    return ListChanges(new=new, moved=len(changed) - new, since=since)

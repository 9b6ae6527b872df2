"""A thread's model calls: the record (as Mycel made them) that the Thread screen's chart and call pages
draw and the Config screen's what-if calls "current", and the replay under a proposed config.

Both are kept in memo (memory_core/memo.py) per head checkpoint and settings: checkpoints are immutable,
so what a head yields under the same settings and summary rows never changes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace

from memory_core.app.calls import ThreadCalls, record_configured, thread_calls
from memory_core.call_record.evidence import Configured
from memory_core.memo import Key, Memo, digest
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.model_view import newest_active
from memory_core.records import ProblemKind, SummaryRow, ThreadRow
from memory_core.replay import simulated_summary_chars
from memory_core.rules.profile import RulesProfile
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from memory_core.whatif import ThreadSide, thread_side

# The fleet what-if covers 50 threads and a slider revisits values: room for a few dozen proposals each.
_SIDES: Memo[ThreadSide] = Memo("dashboard.replays", max_entries=32 * 64)
_HEADS: Memo[ReplayInput] = Memo("dashboard.replay_inputs", max_entries=128)
# Every row of a 1,000-thread list once paged through (the list asks for its visible rows).
_RECORDS: Memo[ThreadCalls] = Memo("dashboard.records", max_entries=1024)
# A read that met a lock or a time limit is not kept: the next request tries again.
_TRANSIENT = frozenset({ProblemKind.LOCKED, ProblemKind.TIMEOUT})


@dataclass(frozen=True, slots=True)
class ReplayInput:
    """What a replay needs of a thread's head: its messages and the size its simulated summaries get."""

    messages: tuple[Message, ...]
    summary_chars: int
    transient: bool = False  # a read met a lock or a time limit


def summary_chars_of(summaries: Sequence[SummaryRow]) -> int:
    """The simulated summaries' size for a thread with these stored summaries (the one rule)."""
    active = newest_active(summaries)
    return simulated_summary_chars(active.summary_text if active is not None else None)


def replay_input(reader: MycelReader, row: ThreadRow) -> ReplayInput:
    """The head's messages and summary size, read once per head checkpoint."""

    def read() -> ReplayInput:
        state = reader.get_state(row.thread_id, row.head_checkpoint_id)
        summaries = reader.list_summaries(row.thread_id)
        problems = state.problems + summaries.problems
        return ReplayInput(
            messages=state.value.messages if state.value is not None else (),
            summary_chars=summary_chars_of(summaries.value),
            transient=any(p.kind in _TRANSIENT for p in problems),
        )

    key = Key(store=reader.store_key, thread=row.thread_id, head=row.head_checkpoint_id)
    return _HEADS.get_or_compute(key, read, keep=lambda found: not found.transient)


def thread_replay(
    store: Hashable,
    thread_id: str,
    head: str | None,
    messages: Sequence[Message],
    settings: MemorySettings,
    *,
    summary_chars: int,
    tiktoken: bool,
    rules: RulesProfile = RulesProfile.MAIN,
) -> ThreadSide:
    """Every model call of the thread under `settings` and `rules`, kept per head. The Thread screen and
    the what-if's "current" side ask with `tiktoken` (real-tokenizer counts too), so they share one
    replay; a proposal asks without (the what-if compares Mycel's estimates)."""

    def compute() -> ThreadSide:
        counter = default_counter() if tiktoken else None
        return thread_side(
            messages, settings=settings, summary_chars=summary_chars, counter=counter, rules=rules
        )

    if head is None:
        return compute()
    key = Key(
        store=store,
        thread=thread_id,
        head=head,
        settings=digest(settings),
        what=(tiktoken, summary_chars, rules.value),
    )
    return _SIDES.get_or_compute(key, compute)


def thread_record(
    reader: MycelReader,
    row: ThreadRow,
    *,
    limit: int | None = None,
    rules: RulesProfile | None = None,
) -> ThreadCalls:
    """Every model call of the thread as Mycel made it (memory_core.app.calls, the function
    `mycel-memory calls` prints), under the config as it was then (never today's: a save does not move
    it) or a `limit` set on the page, and the rules of the thread's layout unless `rules` overrides them."""
    configured = record_configured(reader.locations, row)
    if limit:
        configured = Configured(
            replace(configured.settings, context_limit=limit), "set on this page", configured.known_limits
        )

    def compute() -> ThreadCalls:
        return thread_calls(reader, row, configured, counter=default_counter(), rules=rules)

    if row.head_checkpoint_id is None:
        return compute()
    key = Key(
        store=reader.store_key,
        thread=row.thread_id,
        head=row.head_checkpoint_id,
        settings=digest(configured),
        what=(row.checkpoints, row.summaries, rules),
    )
    return _RECORDS.get_or_compute(key, compute, keep=lambda found: not found.transient)

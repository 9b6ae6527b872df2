"""The thread list as the reader builds it, and what it needs of many head checkpoints at once.

Reads run side by side: the calling thread reads the checkpoints (decoding moved heads is Python work);
helpers read the writes' sizes, the threads table with the side stores and, on a first list, every
thread's checkpoint sizes. Their big aggregates come back as one JSON text each, so they never wait for
the GIL row by row. Each read has its own snapshot; the list is a view of "now", so a commit landing
between two of them can only make a count one step older or newer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from memory_core.messages import Message
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.backend import Payload
from memory_core.stores.checkpoints import decode_checkpoint
from memory_core.stores.decode import UnreadableBlob
from memory_core.stores.locations import StoreRole
from memory_core.stores.opening import StoreOpener, check_checkpoint_layout, unless_found
from memory_core.stores.sqlite import queue as queue_store
from memory_core.stores.sqlite import sandbox as sandbox_store
from memory_core.stores.sqlite import summaries as summaries_store
from memory_core.stores.thread_list import threads as threads_store
from memory_core.stores.thread_list.derived import DerivedFacts, HeadFacts
from memory_core.tokens import estimate_tokens


def thread_rows(
    opener: StoreOpener, known: DerivedFacts, thread_id: str | None = None
) -> tuple[list[ThreadRow], list[StoreProblem]]:
    """Every thread any store knows (or just `thread_id`), newest activity first, and the problems met."""

    def heads_part(
        problems: list[StoreProblem], summed: Callable[[], threads_store.KeyedBytes] | None
    ) -> dict[str, HeadFacts]:
        with opener.open(StoreRole.MAIN, problems) as db:
            if db is not None:
                with db.snapshot():
                    check_checkpoint_layout(db)
                    return threads_store.checkpoint_heads(db, thread_id, known=known, summed=summed)
        return {}

    def bytes_part(problems: list[StoreProblem]) -> threads_store.KeyedBytes:
        with opener.open(StoreRole.MAIN, problems) as db:
            if db is not None and db.has_table("checkpoints"):
                with db.snapshot():
                    return threads_store.checkpoint_bytes(db, thread_id)
        return {}

    def writes_part(problems: list[StoreProblem]) -> dict[str, int]:
        with opener.open(StoreRole.MAIN, problems) as db:
            if db is not None:
                with db.snapshot():
                    return threads_store.writes_bytes(db, thread_id)
        return {}

    problems: tuple[list[StoreProblem], ...] = ([], [], [], [])
    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="mycel-list") as pool:
        written = pool.submit(writes_part, problems[1])
        tables = pool.submit(_tables, opener, thread_id, problems[2])
        summed = None
        if known.empty():
            # Nothing derived yet: every thread's bytes will be needed, so they are summed beside the heads.
            summed = pool.submit(bytes_part, problems[3]).result
        elif thread_id is None:
            # A new process reads the facts file while the keys are read; one thread's row is read alone
            # (DerivedFacts' point reads), never the fleet's file.
            pool.submit(known.preload)
        heads = heads_part(problems[0], summed)
        t = tables.result()
        rows = threads_store.combine(heads, t.infos, t.summaries, t.queued, t.sandboxes, written.result())
    return rows, list(dict.fromkeys(p for part in problems for p in part))


@dataclass
class _ThreadTables:
    """What the thread list reads besides the checkpoints, per thread id."""

    infos: dict[str, threads_store.ThreadInfo] = field(default_factory=dict)
    summaries: dict[str, tuple[int, bool]] = field(default_factory=dict)
    summaries_found: bool = False
    queued: dict[str, int] = field(default_factory=dict)
    sandboxes: dict[str, str | None] = field(default_factory=dict)


def _tables(opener: StoreOpener, thread_id: str | None, problems: list[StoreProblem]) -> _ThreadTables:
    tables = _ThreadTables()
    with opener.open(StoreRole.MAIN, problems) as db:
        if db is not None:
            with db.snapshot():
                tables.infos = threads_store.thread_infos(db, thread_id)
                if db.has_table("summaries"):
                    tables.summaries_found = True
                    tables.summaries = summaries_store.summary_counts(db, thread_id)
    summary_problems: list[StoreProblem] = []
    with opener.open(StoreRole.SUMMARY, summary_problems) as db:
        if db is not None and db.has_table("summaries"):
            tables.summaries_found = True
            for key, (count, active) in summaries_store.summary_counts(db, thread_id).items():
                before = tables.summaries.get(key, (0, False))
                tables.summaries[key] = (before[0] + count, before[1] or active)
    # Summaries live in leon.db or summary.db (§1.4): a missing one is news only if neither has them.
    problems.extend(unless_found(summary_problems, tables.summaries_found))
    with opener.open(StoreRole.QUEUE, problems) as db:
        if db is not None:
            tables.queued = queue_store.queue_counts(db, thread_id)
    with opener.open(StoreRole.SANDBOX, problems) as db:
        if db is not None:
            tables.sandboxes = sandbox_store.sandbox_states(db, thread_id)
    return tables


HeadPayloads = Callable[[Sequence[tuple[str, str]], list[StoreProblem]], Iterable[tuple[str, str, Payload]]]


def head_messages(
    head_payloads: HeadPayloads, rows: Sequence[ThreadRow], problems: list[StoreProblem]
) -> Iterator[tuple[ThreadRow, tuple[Message, ...] | None]]:
    """Each listed thread's head messages (None when unreadable), read in one go by `head_payloads`
    (StoreBackend.head_payloads) and decoded one at a time."""
    by_head = {
        (row.thread_id, row.head_checkpoint_id): row for row in rows if row.head_checkpoint_id is not None
    }
    if not by_head:
        return
    for thread_id, checkpoint_id, (kind, blob) in head_payloads(list(by_head), problems):
        try:
            messages: tuple[Message, ...] | None = decode_checkpoint(kind, blob).messages
        except UnreadableBlob:
            messages = None
        yield by_head[(thread_id, checkpoint_id)], messages


HeadMessages = Callable[
    [Sequence[ThreadRow], list[StoreProblem]], Iterable[tuple[ThreadRow, tuple[Message, ...] | None]]
]


def head_estimates(
    head_messages: HeadMessages, known: DerivedFacts, rows: Sequence[ThreadRow]
) -> tuple[dict[str, int | None], list[StoreProblem]]:
    """Mycel's estimate of each thread's head messages, derived once per head and kept with its facts;
    `head_messages` reads and decodes many heads at once (MycelReader.head_messages)."""
    found, missing = _estimates_known(rows, known)
    problems: list[StoreProblem] = []
    if missing:
        # Requests sorting by fill at the same time wait for one pass, then reuse what it kept.
        with known.deriving:
            again, missing = _estimates_known(missing.values(), known)
            found.update(again)
            decoded: list[tuple[ThreadRow, int | None]] = []
            for row, messages in head_messages(list(missing.values()), problems):
                estimate = estimate_tokens(messages) if messages is not None else None
                found[row.thread_id] = estimate
                decoded.append((row, estimate))
            keep_estimates(known, decoded)
    return found, problems


def keep_estimates(known: DerivedFacts, estimates: Iterable[tuple[ThreadRow, int | None]]) -> None:
    """Keep estimates computed from decoded heads with the head facts, in one save (heads whose facts
    are unknown, or whose key moved since the row was listed, are skipped)."""
    learned: dict[str, HeadFacts] = {}
    for row, estimate in estimates:
        if estimate is None or row.head_checkpoint_id is None:
            continue
        facts = known.lookup(row.thread_id, row.checkpoints, row.head_checkpoint_id)
        if facts is not None and facts.estimated_tokens != estimate:
            learned[row.thread_id] = facts._replace(estimated_tokens=estimate)
    known.remember(learned)


def _estimates_known(
    rows: Iterable[ThreadRow], known: DerivedFacts
) -> tuple[dict[str, int | None], dict[tuple[str, str], ThreadRow]]:
    """The estimates already known (or unknowable: no head, an unreadable one), and the rows still to read."""
    found: dict[str, int | None] = {}
    missing: dict[tuple[str, str], ThreadRow] = {}
    for row in rows:
        if row.estimated_tokens is not None or row.head_checkpoint_id is None:
            found[row.thread_id] = row.estimated_tokens
            continue
        facts = known.lookup(row.thread_id, row.checkpoints, row.head_checkpoint_id)
        if facts is not None and (facts.estimated_tokens is not None or facts.messages is None):
            found[row.thread_id] = facts.estimated_tokens
        else:
            missing[(row.thread_id, row.head_checkpoint_id)] = row
    return found, missing

"""What the thread list needs from head checkpoints: whether pruning changes a result, and the estimate.

Both depend only on the head checkpoint and the thread's settings, so each is kept in memo
(memory_core/memo.py) under (file, thread, head, settings). A sort by flags needs every head: the misses
are read together, over one connection, each decoded once; requests arriving together wait for one pass
and reuse it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from memory_core.memo import Key, Memo, digest
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message
from memory_core.pruning import prune_decisions
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.reader import MycelReader
from memory_core.tokens import estimate_tokens
from mycel_dashboard.screens.shared.memory import problem_text
from mycel_dashboard.screens.thread_list.presenter import PageHeadFacts

_HEADS: Memo[PageHeadFacts] = Memo("threads.head_facts", max_entries=20_000)
# One batch of head reads at a time: a second request waits, then finds the first one's facts kept.
_DERIVING = threading.Lock()


def head_facts_reader(
    reader: MycelReader, settings_for: Callable[[ThreadRow], MemorySettings], problems: list[str]
) -> Callable[[Sequence[ThreadRow]], dict[str, PageHeadFacts]]:
    """A function giving the head facts of many rows at once (what `thread_page` asks for)."""
    store = reader.store_key

    digests: dict[MemorySettings, str] = {}  # a few settings serve 10,000 rows: digest each once

    def key(row: ThreadRow) -> Key:
        settings = settings_for(row)
        if settings not in digests:
            digests[settings] = digest(settings)
        return Key(store=store, thread=row.thread_id, head=row.head_checkpoint_id, settings=digests[settings])

    def kept(rows: Sequence[ThreadRow], found: dict[str, PageHeadFacts]) -> list[ThreadRow]:
        with_heads = []
        for row in rows:
            if not row.head_checkpoint_id or row.messages == 0:
                found[row.thread_id] = PageHeadFacts(
                    pruned=False, estimated_tokens=0 if row.head_checkpoint_id else None
                )
            else:
                with_heads.append(row)
        missing = []
        for row, facts in zip(with_heads, _HEADS.get_many(key(row) for row in with_heads), strict=True):
            if facts is None:
                missing.append(row)
            else:
                found[row.thread_id] = facts
        return missing

    def head_facts(rows: Sequence[ThreadRow]) -> dict[str, PageHeadFacts]:
        found: dict[str, PageHeadFacts] = {}
        todo = kept(rows, found)
        if not todo:
            return found
        with _DERIVING:
            todo = kept(todo, found)
            read_problems: list[StoreProblem] = []
            for row, messages in reader.head_messages(todo, read_problems):
                facts = _facts_of(messages, settings_for(row))
                _HEADS.put(key(row), facts)
                found[row.thread_id] = facts
            # The estimates are settings-free: kept with the head facts, a later fill sort reuses them.
            reader.keep_estimates(
                (row, found[row.thread_id].estimated_tokens) for row in todo if row.thread_id in found
            )
            problems.extend(problem_text(p) for p in read_problems)
        return found

    return head_facts


def _facts_of(messages: tuple[Message, ...] | None, settings: MemorySettings) -> PageHeadFacts:
    if messages is None:
        return PageHeadFacts(pruned=False, estimated_tokens=None)
    result = prune_decisions(messages, settings=settings)
    return PageHeadFacts(
        pruned=any(d.action.changes_content for d in result.decisions),
        estimated_tokens=estimate_tokens(messages),
    )

"""One thread: its row, the facts its checkpoints yield (the head's messages, every checkpoint's series,
its model calls and the settings in force) and its detail, as `thread --json`, `calls --json`, the API,
the export and the Thread screen use them. The facts are kept under the thread's key and derived again
only when it moved."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_core.app.calls import calls_of, models_of, record_configured, settled
from memory_core.app.dev_histories import dev_histories
from memory_core.app.errors import UnknownThread
from memory_core.app.fleet import iso, member_json, subagent_json
from memory_core.app.status import refuse_unreadable
from memory_core.call_record.as_json import call_json, dev_call_json, settings_json
from memory_core.call_record.calls import RecordedCall, checkpoints_holding
from memory_core.call_record.evidence import Configured
from memory_core.family import build_family, registered_only_rows
from memory_core.memo import digest
from memory_core.messages import Message
from memory_core.records import (
    AgentRecord,
    CheckpointRow,
    ProblemKind,
    StoreProblem,
    ThreadRow,
    loud_messages,
)
from memory_core.rules.profile import RulesProfile, rules_reason
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list.thread_facts import ThreadFactsFile
from memory_core.tokens import content_chars, default_counter, estimate_message_tokens

# Bump when what `_derive_facts` keeps changes: facts kept by an older version are then derived again.
_FACTS_FORMAT = 4


def find_thread(reader: MycelReader, thread_id: str) -> ThreadRow:
    """The thread's row; UnknownThread when no store has it, StoreUnreadable when its checkpoints cannot be
    read (a row another store still knows would answer with nothing of what was asked)."""
    found = reader.get_thread(thread_id)
    if found.value is not None:
        refuse_unreadable(found.problems)
    if found.value is None:
        raise UnknownThread.named(thread_id, found.problems)
    return found.value


def memory_key(reader: MycelReader, row: ThreadRow, configured: Configured) -> str:
    """What the calls depend on besides the checkpoints: the record's config and the summary rows."""
    rows = reader.list_summaries(row.thread_id).value
    return digest(
        configured, [(r.summary_id, r.compacted_at, r.compact_up_to_index, len(r.summary_text)) for r in rows]
    )


def memory_facts(
    reader: MycelReader,
    row: ThreadRow,
    messages: tuple[Any, ...],
    checkpoints: list[CheckpointRow],
    head: str | None,
    configured: Configured,
    *,
    rules: RulesProfile | None = None,
) -> dict[str, Any]:
    """The thread's calls and the settings in force, as `thread`/`calls` print them, under the rules of
    the thread's layout or `rules`."""
    profile, reason = rules_reason(override=rules, layout=row.layout)
    summaries = tuple(reader.list_summaries(row.thread_id).value)
    holding = checkpoints_holding(checkpoints, head)
    configured = settled(reader.locations, row, configured, messages, checkpoints, holding)
    histories = (
        dev_histories(reader, row.thread_id, checkpoints, tuple(messages), holding)
        if profile is RulesProfile.DEV
        else ()
    )
    if histories:
        holding = histories[-1].holding
    calls, inference = calls_of(
        messages,
        summaries,
        holding,
        configured,
        counter=default_counter(),
        models_by_checkpoint=models_of(checkpoints),
        rules=profile,
        earlier=histories[:-1],
    )
    return {
        "calls": [recorded_call_json(c, profile, reason) for c in calls],
        "rules": profile.value,
        "rules_reason": reason,
        **settings_json(inference, calls, rules=profile),
    }


def recorded_call_json(call: RecordedCall, profile: RulesProfile, reason: str) -> dict[str, Any]:
    """A call as `calls --json` prints it; a main-layout thread's under main's rules keeps its keys."""
    data = call_json(call)
    if profile is RulesProfile.DEV:
        data.update(dev_call_json(call))
    if profile is RulesProfile.DEV or reason == "--rules":
        data.update(rules=profile.value, rules_reason=reason)
    return data


def _message_json(index: int, message: Message, count: Any) -> dict[str, Any]:
    return {
        "index": index,
        "type": message.type.value,
        "id": message.id,
        "chars": content_chars(message.content),
        "estimated_tokens": estimate_message_tokens(message),
        "tiktoken_tokens": count(message.text),
    }


def thread_facts(reader: MycelReader, row: ThreadRow, *, rules: RulesProfile | None = None) -> dict[str, Any]:
    """What the thread's checkpoints yield: the head's messages, every checkpoint's series, an overtaken
    rollback, and the warnings met deriving them; kept under the thread's key, derived only when it moved."""
    kept = (
        ThreadFactsFile(reader.store_key, reader.facts_folder)
        if reader.facts_folder is not None and row.head_checkpoint_id is not None
        else None
    )
    configured = record_configured(reader.locations, row)
    # The tiktoken encoding is part of the key: counts under another encoding are other facts; so are
    # the record's config and the summary rows, which the calls depend on.
    key = [
        _FACTS_FORMAT,
        row.checkpoints,
        row.head_checkpoint_id,
        default_counter().encoding_name,
        memory_key(reader, row, configured),
        rules.value if rules else None,
    ]
    found = kept.lookup(row.thread_id, key) if kept is not None else None
    if isinstance(found, dict):
        return found
    facts, stable = _derive_facts(reader, row, configured, rules)
    if kept is not None and stable:
        kept.remember(row.thread_id, key, facts)
    return facts


def _derive_facts(
    reader: MycelReader, row: ThreadRow, configured: Configured, rules: RulesProfile | None = None
) -> tuple[dict[str, Any], bool]:
    """The facts, and whether they may be kept under the row's key (read from exactly those checkpoints,
    and with no problem that could read differently next time, such as a lock or a row cap)."""
    from memory_core.rollback import overtaken_rollback  # only when deriving: a warm run never needs it

    thread_id = row.thread_id
    # The head by its id, so the messages belong to the very checkpoint the key names.
    state = reader.get_state(thread_id, row.head_checkpoint_id) if row.head_checkpoint_id else None
    checkpoints = reader.list_checkpoints(thread_id)
    problems = [*(state.problems if state is not None else ()), *checkpoints.problems]
    messages = state.value.messages if state is not None and state.value is not None else ()
    count = default_counter().count
    overtaken = overtaken_rollback(checkpoints.value)
    facts: dict[str, Any] = {
        "messages": [_message_json(i, m, count) for i, m in enumerate(messages)],
        "checkpoints": [
            {
                "checkpoint_id": c.checkpoint_id,
                "parent_checkpoint_id": c.parent_checkpoint_id,
                "step": c.step,
                "source": c.source,
                "messages": c.messages,
                "estimated_tokens": c.estimated_tokens,
                "tiktoken_tokens": c.tiktoken_tokens,
                "input_tokens": c.input_tokens,
                "created_at": iso(c.created_at),
                "readable": c.readable,
            }
            for c in checkpoints.value
        ],
        "rollback_overtaken": None
        if overtaken is None
        else {
            "rollback_checkpoint_id": overtaken.rollback_checkpoint_id,
            "target": overtaken.target or None,
            "at": overtaken.at,
            "actor": overtaken.actor,
            "continued_from": overtaken.continued_from,
        },
        "warnings": loud_messages(problems),
        "memory": memory_facts(
            reader, row, messages, checkpoints.value, row.head_checkpoint_id, configured, rules=rules
        ),
    }
    newest = checkpoints.value[0].checkpoint_id if checkpoints.value else None
    stable = (
        len(checkpoints.value) == row.checkpoints
        and newest == row.head_checkpoint_id
        and all(p.kind is ProblemKind.UNREADABLE_CHECKPOINT for p in problems)
    )
    return facts, stable


@dataclass(frozen=True, slots=True)
class ThreadDetail:
    """`thread --json`'s object, with what reading it met (the CLI prints those on stderr)."""

    row: ThreadRow
    data: dict[str, Any]
    calls: list[dict[str, Any]]  # `calls --json`, which `data` leaves out
    problems: list[StoreProblem]
    warnings: list[str]

    def answer(self) -> dict[str, Any]:
        """`thread --json` and the API's thread: the detail and every problem that shaped it (`warnings`)."""
        return {**self.data, "warnings": list(dict.fromkeys([*loud_messages(self.problems), *self.warnings]))}


def thread_detail(reader: MycelReader, thread_id: str, *, rules: RulesProfile | None) -> ThreadDetail:
    """`thread --json` (the API's too), under `--rules` when given; UnknownThread when no store has it,
    StoreUnreadable when its checkpoints cannot be read."""
    found = reader.get_thread(thread_id)
    agents = reader.list_agents()
    # A failed registration is a thread only the registry knows: shown with no checkpoints.
    registered = registered_only_rows([a for a in agents.value if a.thread_id == thread_id], ())
    if found.value is None and not registered:
        raise UnknownThread.named(thread_id, [*found.problems, *agents.problems])
    refuse_unreadable(found.problems)  # a row other stores know says nothing of its checkpoints
    row = found.value or registered[0]
    facts = thread_facts(reader, row, rules=rules)
    summaries = reader.list_summaries(thread_id)
    queue = reader.list_queue(thread_id)
    data: dict[str, Any] = {
        "thread_id": row.thread_id,
        "layout": row.layout,
        "head_checkpoint_id": row.head_checkpoint_id,
        "name": row.name,
        "model": row.model,
        **_breaker_json(row),
        "messages": facts["messages"],
        "checkpoints": facts["checkpoints"],
        "summaries": [
            {
                "summary_id": s.summary_id,
                "compact_up_to_index": s.compact_up_to_index,
                "is_active": s.is_active,
                "is_split_turn": s.is_split_turn,
                "compacted_at": s.compacted_at,
                "created_at": iso(s.created_at),
                "store": s.store,
            }
            for s in summaries.value
        ],
        "queue": [
            {"id": q.id, "content": q.content, "notification_type": q.notification_type, "source": q.source}
            for q in queue.value
        ],
        "rollback_overtaken": facts["rollback_overtaken"],
        "family": _family_json(reader, agents.value, thread_id),
        **{k: v for k, v in facts["memory"].items() if k != "calls"},
    }
    problems = [*found.problems, *summaries.problems, *queue.problems, *agents.problems]
    return ThreadDetail(row, data, facts["memory"]["calls"], problems, facts["warnings"])


def _breaker_json(row: ThreadRow) -> dict[str, Any]:
    """Dev's compaction breaker at the head, from the list's head facts; null on a main layout (the key is
    always there, so both layouts' JSON has the same fields)."""
    if row.layout != "dev" or row.breaker_failures is None:
        return {"breaker": None}
    return {"breaker": {"failure_count": row.breaker_failures, "open": row.breaker_open}}


def _family_json(reader: MycelReader, agents: tuple[AgentRecord, ...], thread_id: str) -> dict[str, Any]:
    """The thread's registration, its parent and its sub-agents, recursively (agent_registry.db)."""
    family = build_family(
        agents, thread_id, has_checkpoints=lambda member: reader.head_checkpoint_id(member) is not None
    )
    return {
        "subagent": subagent_json(family.agent),
        "parent": member_json(family.parent) if family.parent is not None else None,
        "children": [member_json(child) for child in family.children],
    }

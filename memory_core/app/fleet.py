"""The fleet list: every thread every configured store holds, as `threads --json`, the API and the
Threads screen's export give it."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from memory_core.family import FamilyMember, agents_by_thread, registered_only_rows
from memory_core.records import AgentRecord, StoreProblem, ThreadRow
from memory_core.stores.reader import MycelReader


def iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def thread_json(row: ThreadRow) -> dict[str, Any]:
    return {
        "thread_id": row.thread_id,
        "messages": row.messages,
        "checkpoints": row.checkpoints,
        "head_checkpoint_id": row.head_checkpoint_id,
        "updated_at": iso(row.updated_at),
        "summaries": row.summaries,
        "active_summary": row.active_summary,
        "queued": row.queued,
        "name": row.name,
        "model": row.model,
        "bytes_on_disk": row.bytes_on_disk,
        "sandbox_state": row.sandbox_state,
        "layout": row.layout,
    }


def subagent_json(agent: AgentRecord | None) -> dict[str, Any] | None:
    if agent is None:
        return None
    return {
        "agent_id": agent.agent_id,
        "name": agent.name,
        "status": agent.status,
        "subagent_type": agent.subagent_type,
        "created_at": iso(agent.created_at),
    }


def member_json(member: FamilyMember) -> dict[str, Any]:
    return {
        "thread_id": member.thread_id,
        "has_checkpoints": member.has_checkpoints,
        "subagent": subagent_json(member.agent),
        "children": [member_json(child) for child in member.children],
    }


def fleet_rows(reader: MycelReader) -> tuple[list[dict[str, Any]], list[StoreProblem]]:
    """`threads --json`'s rows (the API's too), and the problems met reading them."""
    result = reader.list_threads()
    agents = reader.list_agents()
    # Sub-agents whose registration failed before any checkpoint are known to the registry alone.
    listed = [*result.value, *registered_only_rows(agents.value, (r.thread_id for r in result.value))]
    return rows_json(listed, agents.value), [*result.problems, *agents.problems]


def rows_json(listed: Sequence[ThreadRow], agents: Sequence[AgentRecord]) -> list[dict[str, Any]]:
    """The rows of `threads --json`, each with its registration when it is a sub-agent."""
    registered = agents_by_thread(agents)
    return [
        {
            **thread_json(r),
            "parent_thread_id": registered[r.thread_id].parent_thread_id
            if r.thread_id in registered
            else None,
            "subagent": subagent_json(registered.get(r.thread_id)),
        }
        for r in listed
    ]

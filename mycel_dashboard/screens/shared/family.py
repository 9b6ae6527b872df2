"""Sub-agents as the Thread page's family card and the Threads list read them (agent_registry.db).

Django-free: the views hand in the reader and the page's problem lists; the family itself is built by
memory_core.family.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_core.family import Family, build_family
from memory_core.records import AgentRecord
from memory_core.stores.reader import MycelReader
from mycel_dashboard.screens.shared.memory import problem_text
from mycel_dashboard.web.ids import IdTooLong, id_to_url


def read_agents(reader: MycelReader, problems: list[str], absent: list[str]) -> tuple[AgentRecord, ...]:
    """Every registered sub-agent; a registry Mycel has not created is said quietly (absent), a damaged
    one loudly (problems), and either way the page goes on without families."""
    result = reader.list_agents()
    for p in result.problems:
        (absent if p.expected_absence else problems).append(problem_text(p))
    return result.value


def family_param(thread_id: str) -> str | None:
    """The list's `?family=` value for a thread (the URL form of its id), None when too long to link."""
    try:
        return id_to_url(thread_id)
    except IdTooLong:
        return None


@dataclass(frozen=True, slots=True)
class FamilyCard:
    family: Family
    filter_param: str | None  # ?family= of the Threads list, None when the id is too long for a URL


def family_card(reader: MycelReader, thread_id: str, problems: list[str], absent: list[str]) -> FamilyCard:
    """The thread's parent and children, each knowing whether it has checkpoints (and so a page)."""
    agents = read_agents(reader, problems, absent)
    known: dict[str, bool] = {}

    def has_checkpoints(member: str) -> bool:
        # One small query per family member, and only for threads that have a family at all.
        if member not in known:
            known[member] = reader.head_checkpoint_id(member) is not None
        return known[member]

    family = build_family(agents, thread_id, has_checkpoints=has_checkpoints)
    return FamilyCard(family, family_param(thread_id))

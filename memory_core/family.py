"""Sub-agents in their family: a thread's parent and its children, from agent_registry.db's rows.

Mycel names each sub-agent's parent by thread id (the column says `parent_agent_id`, reference §2.10), and
a sub-agent can spawn sub-agents of its own, so a family is a tree. The registry is outside our control:
a row may name itself or an ancestor as parent, so every walk stops at a thread it has already seen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from memory_core.records import AgentRecord, ThreadRow

# Deeper than any real family; past it the tree is cut rather than recursing without bound.
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class FamilyMember:
    """One thread of a family: its registration (None for a thread that is not a sub-agent)."""

    thread_id: str
    agent: AgentRecord | None
    has_checkpoints: bool
    children: tuple[FamilyMember, ...] = ()
    cut: bool = False  # children not followed: a cycle in the registry or MAX_DEPTH reached

    def descendants(self) -> Iterator[FamilyMember]:
        for child in self.children:
            yield child
            yield from child.descendants()


@dataclass(frozen=True, slots=True)
class Family:
    """A thread with its parent (when it is a sub-agent) and its children, recursively."""

    thread_id: str
    agent: AgentRecord | None  # this thread's own registration, if it is a sub-agent
    parent: FamilyMember | None  # the parent thread alone (its other children are not listed)
    children: tuple[FamilyMember, ...]
    cut: bool = False

    @property
    def is_empty(self) -> bool:
        return self.agent is None and not self.children

    def descendants(self) -> tuple[FamilyMember, ...]:
        """Every child, grandchild… depth first, in registration order."""
        return tuple(d for child in self.children for d in (child, *child.descendants()))


def agents_by_thread(agents: Iterable[AgentRecord]) -> dict[str, AgentRecord]:
    """Each sub-agent thread's registration; the newest row wins if two name one thread."""
    return {agent.thread_id: agent for agent in agents}


def children_by_parent(agents: Iterable[AgentRecord]) -> dict[str, list[AgentRecord]]:
    """Registered children of each parent thread, in registration order."""
    found: dict[str, list[AgentRecord]] = {}
    for agent in agents_by_thread(agents).values():
        if agent.parent_thread_id is not None:
            found.setdefault(agent.parent_thread_id, []).append(agent)
    return found


def _children(
    thread_id: str,
    by_parent: Mapping[str, Sequence[AgentRecord]],
    has_checkpoints: Callable[[str], bool],
    seen: frozenset[str],
) -> tuple[tuple[FamilyMember, ...], bool]:
    members: list[FamilyMember] = []
    cut = False
    for agent in by_parent.get(thread_id, ()):
        if agent.thread_id in seen:
            cut = True
            continue
        if len(seen) >= MAX_DEPTH:
            members.append(FamilyMember(agent.thread_id, agent, has_checkpoints(agent.thread_id), cut=True))
            continue
        grandchildren, below_cut = _children(
            agent.thread_id, by_parent, has_checkpoints, seen | {agent.thread_id}
        )
        members.append(
            FamilyMember(agent.thread_id, agent, has_checkpoints(agent.thread_id), grandchildren, below_cut)
        )
    return tuple(members), cut


def build_family(
    agents: Sequence[AgentRecord], thread_id: str, *, has_checkpoints: Callable[[str], bool]
) -> Family:
    """The family of `thread_id`: its parent if it is a registered sub-agent, and every descendant."""
    own = agents_by_thread(agents)
    agent = own.get(thread_id)
    parent = None
    if agent is not None and agent.parent_thread_id is not None and agent.parent_thread_id != thread_id:
        parent_id = agent.parent_thread_id
        parent = FamilyMember(parent_id, own.get(parent_id), has_checkpoints(parent_id))
    children, cut = _children(thread_id, children_by_parent(agents), has_checkpoints, frozenset({thread_id}))
    return Family(thread_id, agent, parent, children, cut)


def family_thread_ids(agents: Sequence[AgentRecord], thread_id: str) -> frozenset[str]:
    """`thread_id` and every thread descending from it: what the list's family filter keeps."""
    by_parent = children_by_parent(agents)
    found = {thread_id}
    todo = [thread_id]
    while todo:
        for agent in by_parent.get(todo.pop(), ()):
            if agent.thread_id not in found:
                found.add(agent.thread_id)
                todo.append(agent.thread_id)
    return frozenset(found)


def registered_only_rows(agents: Iterable[AgentRecord], known: Iterable[str]) -> tuple[ThreadRow, ...]:
    """List rows for registered sub-agents no other store knows (a registration that failed before its
    first checkpoint): no messages, no checkpoints, the registration time as last activity."""
    seen = set(known)
    return tuple(
        ThreadRow(
            thread_id=agent.thread_id,
            messages=0,
            checkpoints=0,
            head_checkpoint_id=None,
            updated_at=agent.created_at,
            name=agent.name or None,
        )
        for agent in agents_by_thread(agents).values()
        if agent.thread_id not in seen
    )

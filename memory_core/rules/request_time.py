"""What Mycel's middleware changes in a model call's request without storing the change
(docs/request-time-changes.md has the inventory, read from OpenDCAI/Mycel main 9a39b22e and dev bc8ab002).

The one that changes the messages is dev's SteeringMiddleware.awrap_model_call (core/runtime/middleware/
queue/middleware.py, _apply_steer_contract): when the messages it is handed (memory's output: pruned,
the summary in front) hold an owner steer, it adds its non-preemptive steer note. Dev's system prompt is
a SystemMessage with a block list, so the note cannot be appended to it and goes in front of the messages
as a SystemMessage of its own: the model gets the system prompt, the note, then what memory sent. It is
never stored, and it sits inside memory, so memory's estimates and trigger never see it.

The tools offered are added at call time too (ToolRunner); dev also offers the deferred tools a
tool_search result named, which the history holds. Everything else is in RULES, each with whether the
record reproduces it; the call page prints them.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memory_core.messages import Message, MessageType
from memory_core.rules.profile import RulesProfile
from memory_core.rules.steer import is_owner_steer

# dev's _STEER_NON_PREEMPTIVE_SYSTEM_NOTE, character for character.
STEER_NOTE = (
    "Steer requests accepted during an active run are non-preemptive. "
    "If any tool call from the interrupted run already started, it was allowed to finish and its side "
    "effects may already have happened. Do not claim that prior work was interrupted, prevented, "
    "cancelled, or rolled back. Treat the steer as instructions for what to do next after that completed "
    "work, and answer honestly about any side effects that may already exist."
)
# The OpenDCAI/Mycel commits the inventory was read at, by branch.
READ_AT = {RulesProfile.MAIN: "main 9a39b22e", RulesProfile.DEV: "dev bc8ab002"}
STEER_NOTE_MESSAGE = Message(type=MessageType.SYSTEM, content=STEER_NOTE, raw_type="system")
TOOL_SEARCH = "tool_search"


@dataclass(frozen=True, slots=True)
class RequestTime:
    """What Mycel added to one call's request at call time, beyond memory's output."""

    steer_note: bool = False  # dev's steer note went in front of the messages
    discovered_tools: tuple[str, ...] = ()  # deferred tools dev offered because tool_search named them

    @property
    def extra_messages(self) -> int:
        return 1 if self.steer_note else 0

    @property
    def extra_chars(self) -> int:
        return len(STEER_NOTE) if self.steer_note else 0


NOTHING_ADDED = RequestTime()


def steer_contract(sent: Sequence[Message]) -> tuple[Message, ...]:
    """Dev's _apply_steer_contract on the messages memory sent (its system prompt being a block list)."""
    if any(is_owner_steer(m) for m in sent):
        return (STEER_NOTE_MESSAGE, *sent)
    return tuple(sent)


def with_request_time(sent: Sequence[Message], added: RequestTime) -> tuple[Message, ...]:
    """The messages the model received after the system prompt: memory's output with what the record
    says was added at call time."""
    return (STEER_NOTE_MESSAGE, *sent) if added.steer_note else tuple(sent)


def tool_search_names(message: Message) -> tuple[str, ...]:
    """The tools a stored tool_search result names, read as dev's loop reads it on every run
    (_restore_discovered_tool_names_from_messages): a JSON list of schemas with a name each."""
    if message.type is not MessageType.TOOL or message.name != TOOL_SEARCH:
        return ()
    if not isinstance(message.content, str):
        return ()
    try:
        payload = json.loads(message.content)
    except (ValueError, RecursionError):  # stored text is untrusted: nested past Python's limit too
        return ()
    if not isinstance(payload, list):
        return ()
    return tuple(
        item["name"] for item in payload if isinstance(item, dict) and isinstance(item.get("name"), str)
    )


@dataclass(frozen=True, slots=True)
class RequestTimeIndex:
    """Where a thread's history holds what dev's call-time changes read: its owner steers and its
    tool_search results, found once."""

    steers: tuple[int, ...]
    discovery_at: tuple[int, ...]  # indexes of the tool_search results that named a tool
    discovered: tuple[tuple[str, ...], ...]  # ... and the names each gave

    @classmethod
    def of(cls, messages: Sequence[Message]) -> RequestTimeIndex:
        steers = tuple(i for i, m in enumerate(messages) if is_owner_steer(m))
        found = [(i, names) for i, m in enumerate(messages) if (names := tool_search_names(m))]
        return cls(steers, tuple(i for i, _ in found), tuple(names for _, names in found))

    def at(self, index: int, start: int) -> RequestTime:
        """The additions at the call that produced message `index`, whose messages after the summary
        (if any) are the stored ones from `start`."""
        first = bisect_left(self.steers, start)
        note = first < len(self.steers) and self.steers[first] < index
        names: dict[str, None] = {}  # first found first, each once
        for found in self.discovered[: bisect_left(self.discovery_at, index)]:
            names.update(dict.fromkeys(found))
        return RequestTime(steer_note=note, discovered_tools=tuple(names))


class Reproduction(StrEnum):
    REPRODUCED = "reproduced"  # the record adds it to every request it shows
    NO_CHANGE = "no change"  # Mycel's code, as wired, leaves the request as it is
    NOT_REPRODUCIBLE = "not reproducible"  # the stored data cannot say


@dataclass(frozen=True, slots=True)
class RequestTimeRule:
    """One change Mycel may make to a request at call time, and what the record does about it."""

    key: str
    middleware: str
    path: str  # in OpenDCAI/Mycel at the commit docs/request-time-changes.md names
    reproduction: Reproduction
    says: str  # one sentence, what the call page prints


_PROMPT_CACHING = (
    "PromptCachingMiddleware adds cache_control only when request.model is a ChatAnthropic; Mycel's "
    "model is LangChain's configurable wrapper (init_chat_model with configurable_fields), so it passes "
    "the request on unchanged"
)
_TOOLS = (
    "the tool definitions ToolRunner adds from Mycel's tool registry are not stored; they depend on "
    "Mycel's config, its MCP servers and the agent's blocked tools at that time"
)

RULES: dict[RulesProfile, tuple[RequestTimeRule, ...]] = {
    RulesProfile.MAIN: (
        RequestTimeRule(
            "tools",
            "ToolRunner",
            "core/runtime/runner.py",
            Reproduction.NOT_REPRODUCIBLE,
            _TOOLS + ".",
        ),
        RequestTimeRule(
            "prompt_caching",
            "PromptCachingMiddleware",
            "core/runtime/middleware/prompt_caching/__init__.py",
            Reproduction.NO_CHANGE,
            _PROMPT_CACHING + " (and warns).",
        ),
    ),
    RulesProfile.DEV: (
        RequestTimeRule(
            "steer_note",
            "SteeringMiddleware",
            "core/runtime/middleware/queue/middleware.py",
            Reproduction.REPRODUCED,
            "adds its non-preemptive steer note, a system message after the system prompt, to any call "
            "whose messages hold an owner steer.",
        ),
        RequestTimeRule(
            "tools",
            "ToolRunner",
            "core/runtime/runner.py",
            Reproduction.NOT_REPRODUCIBLE,
            _TOOLS
            + "; dev also offers the deferred tools a stored tool_search result named (listed when any).",
        ),
        RequestTimeRule(
            "prompt_caching",
            "PromptCachingMiddleware",
            "core/runtime/middleware/prompt_caching/__init__.py",
            Reproduction.NO_CHANGE,
            _PROMPT_CACHING + " (it is installed only for the anthropic provider).",
        ),
        RequestTimeRule(
            "retries",
            "QueryLoop",
            "core/runtime/loop.py",
            Reproduction.NOT_REPRODUCIBLE,
            "a call retried with max_tokens raised (64,000, or what a context-overflow error leaves) after "
            "a truncated reply, or after a transient API error (429, 529, overloaded), leaves nothing in "
            "the history: the same request may have gone out more than once.",
        ),
        RequestTimeRule(
            "followthrough_note",
            "run input (terminal followthrough)",
            "backend/threads/run/input_construction.py",
            Reproduction.NO_CHANGE,
            "its note for terminal background notifications is appended only to a string system prompt; "
            "dev's is a block list, so nothing is added.",
        ),
    ),
}


@dataclass(frozen=True, slots=True)
class CallLine:
    rule: RequestTimeRule
    text: str  # what happened at this call


def call_lines(rules: RulesProfile, added: RequestTime) -> tuple[CallLine, ...]:
    """Each call-time rule of `rules` as it stood at one call."""
    lines: list[CallLine] = []
    for rule in RULES[rules]:
        text = f"{rule.reproduction.value}: {rule.says}"
        if rule.key == "steer_note":
            text = (
                f"added: dev's steer note ({len(STEER_NOTE):,} characters), the first message after the "
                "system prompt, because the messages sent hold an owner steer."
                if added.steer_note
                else "not added at this call: no owner steer among the messages sent."
            )
        elif rule.key == "tools" and added.discovered_tools:
            text += f" Found by tool_search before this call: {', '.join(added.discovered_tools)}."
        lines.append(CallLine(rule, text))
    return tuple(lines)

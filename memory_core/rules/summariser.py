"""The request Mycel's summariser sends when it compacts, in each branch's shape (ContextCompactor in
core/runtime/middleware/memory/compactor.py; OpenDCAI/Mycel main, and dev at bc8ab002).

main: [System(SUMMARY_PROMPT), Human("Here is the conversation to summarize:\\n\\n" + formatted)].
dev:  [System(COMPACT_SYSTEM_PROMPT), Human("Summarize this conversation:\\n\\n" + formatted + "\\n\\n" +
      SUMMARY_PROMPT)], bound to max_tokens=20000 (a nine-section prompt; the system prompt is dev's own,
      not the agent's).
A split turn adds a second request on both branches, unbound: [System(SPLIT_TURN_PREFIX_PROMPT),
Human("Here is the turn prefix to summarize:\\n\\n" + formatted prefix)], sent only after the first
succeeded. `formatted` is compaction.format_for_summary's text.

Mycel's prompts are Mycel's words: they are named here with their exact lengths (so every size is what the
model received) and never copied; the framing strings and the conversation are reproduced exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.compaction import CompactionPlan, format_for_summary
from memory_core.messages import Message
from memory_core.rules.profile import RulesProfile


@dataclass(frozen=True, slots=True)
class MycelPrompt:
    """One of Mycel's prompt texts, by name and exact length."""

    name: str  # the constant in compactor.py
    chars: int
    about: str  # what it asks for, in our words

    def words(self) -> str:
        return f"⟨Mycel's {self.name}: {self.chars:,} characters, {self.about}; not copied here⟩"


MAIN_SUMMARY_PROMPT = MycelPrompt("SUMMARY_PROMPT", 393, "a summary in five points")
DEV_SYSTEM_PROMPT = MycelPrompt("COMPACT_SYSTEM_PROMPT", 69, "one sentence: you summarise conversations")
DEV_SUMMARY_PROMPT = MycelPrompt("SUMMARY_PROMPT", 598, "a summary in nine sections")
SPLIT_TURN_PREFIX_PROMPT = MycelPrompt("SPLIT_TURN_PREFIX_PROMPT", 215, "a summary of a split turn's start")
DEV_MAX_TOKENS = 20_000

MAIN_LEAD = "Here is the conversation to summarize:\n\n"
DEV_LEAD = "Summarize this conversation:\n\n"
PREFIX_LEAD = "Here is the turn prefix to summarize:\n\n"


@dataclass(frozen=True, slots=True)
class Conversation:
    """Messages as the summariser gets them: how many, the length of format_for_summary's text, and the
    text itself when it is to be shown (the record keeps only sizes: a thread's requests add up to more
    text than the thread)."""

    count: int
    chars: int
    text: str | None = None

    @classmethod
    def of(cls, messages: Sequence[Message]) -> Conversation:
        text = format_for_summary(messages)
        return cls(len(messages), len(text), text)


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a message: text Mycel sends as is (sized, and kept when shown), or one of its prompts."""

    chars: int
    text: str | None = None
    prompt: MycelPrompt | None = None

    @classmethod
    def of(cls, text: str, conversation: Conversation | None = None) -> Part:
        """`text`, then the conversation's text (sized only when the conversation has none)."""
        if conversation is None:
            return cls(len(text), text)
        body = None if conversation.text is None else text + conversation.text
        return cls(len(text) + conversation.chars, body)

    @property
    def shown(self) -> str:
        if self.prompt is not None:
            return self.prompt.words()
        return self.text if self.text is not None else f"⟨{self.chars:,} characters⟩"


def _prompt(prompt: MycelPrompt) -> Part:
    return Part(prompt.chars, prompt=prompt)


@dataclass(frozen=True, slots=True)
class SummariserMessage:
    role: str  # "system" or "human"
    parts: tuple[Part, ...]

    @property
    def chars(self) -> int:
        return sum(p.chars for p in self.parts)

    @property
    def shown(self) -> str:
        return "".join(p.shown for p in self.parts)


@dataclass(frozen=True, slots=True)
class SummariserRequest:
    """One request to the summarising model."""

    purpose: str  # "history" or "turn prefix"
    summarised: int  # how many messages it summarises
    messages: tuple[SummariserMessage, ...]
    max_tokens: int | None  # the output cap bound to the model (None: the model's own)

    @property
    def chars(self) -> int:
        return sum(m.chars for m in self.messages)

    def as_json(self) -> dict[str, object]:
        return {
            "purpose": self.purpose,
            "summarised_messages": self.summarised,
            "messages": [{"role": m.role, "chars": m.chars} for m in self.messages],
            "chars": self.chars,
            "max_tokens": self.max_tokens,
            "tools": 0,
        }


def summariser_requests(
    history: Conversation, turn_prefix: Conversation | None = None, *, rules: RulesProfile
) -> tuple[SummariserRequest, ...]:
    """The requests one compaction sends: the history's, then the split turn's prefix's (when there is one;
    pass none for an attempt whose first request failed: Mycel stops there)."""
    if rules is RulesProfile.DEV:
        first = SummariserRequest(
            "history",
            history.count,
            (
                SummariserMessage("system", (_prompt(DEV_SYSTEM_PROMPT),)),
                SummariserMessage(
                    "human",
                    (Part.of(DEV_LEAD, history), Part.of("\n\n"), _prompt(DEV_SUMMARY_PROMPT)),
                ),
            ),
            DEV_MAX_TOKENS,
        )
    else:
        first = SummariserRequest(
            "history",
            history.count,
            (
                SummariserMessage("system", (_prompt(MAIN_SUMMARY_PROMPT),)),
                SummariserMessage("human", (Part.of(MAIN_LEAD, history),)),
            ),
            None,
        )
    if turn_prefix is None or not turn_prefix.count:
        return (first,)
    prefix = SummariserRequest(
        "turn prefix",
        turn_prefix.count,
        (
            SummariserMessage("system", (_prompt(SPLIT_TURN_PREFIX_PROMPT),)),
            SummariserMessage("human", (Part.of(PREFIX_LEAD, turn_prefix),)),
        ),
        None,
    )
    return (first, prefix)


def planned_requests(plan: CompactionPlan, *, rules: RulesProfile) -> tuple[SummariserRequest, ...]:
    """The requests a compaction plan sends, with their text (the dry-run's): none when it summarises
    nothing."""
    if plan.compact_up_to_index is None:
        return ()
    history = Conversation(plan.summarize_count, len(plan.conversation_text), plan.conversation_text)
    prefix = Conversation(plan.turn_prefix_count, len(plan.prefix_text), plan.prefix_text)
    return summariser_requests(history, prefix if plan.split_turn else None, rules=rules)

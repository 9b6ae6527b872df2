"""Mycel's model-call memory rules, re-stated for the demo's fake agent loop.

Mycel prunes and compacts only the request it sends to the model (reference §3); the checkpoints keep
the full history. The demo model node does the same so that the `summaries` rows it writes, and the
`usage_metadata.input_tokens` it reports, agree with the messages in the checkpoints. This is our own
restatement of the documented behaviour (pruning §3.2, estimate §3.3, trigger §3.4, split §3.6–3.7).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

SUMMARY_PREFIX = "[Conversation Summary]\n"


@dataclass(frozen=True, slots=True)
class MemoryRules:
    """The memory settings the demo's model node applies (Mycel's defaults unless a model is small)."""

    context_limit: int = 128_000
    soft_trim_chars: int = 3000
    hard_clear_threshold: int = 10_000
    protect_recent: int = 3
    keep_recent_tokens: int = 20_000
    threshold: float = 0.7

    @property
    def effective_keep_recent(self) -> int:
        cap = int(self.context_limit * 0.4)
        return cap if 0 < cap < self.keep_recent_tokens else self.keep_recent_tokens


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One row Mycel's summary store would have saved at a model call."""

    summary_text: str
    compact_up_to_index: int
    compacted_at: int
    is_split_turn: bool
    split_turn_prefix: str | None


@dataclass(slots=True)
class MemoryState:
    """Per-thread cache, like one MemoryMiddleware instance (the summary survives between calls)."""

    rules: MemoryRules
    summary_text: str | None = None
    compact_up_to_index: int = 0
    saved: list[SummaryRow] = field(default_factory=list)


def content_chars(message: BaseMessage) -> int:
    content = message.content
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, dict):
            text = block.get("text", "")
            total += len(text) if isinstance(text, str) else 0
        else:
            total += len(block)
    return total


def message_tokens(message: BaseMessage) -> int:
    """The compactor's per-message estimate: chars // 2, floored per block."""
    content = message.content
    if isinstance(content, str):
        return len(content) // 2
    total = 0
    for block in content:
        if isinstance(block, dict):
            text = block.get("text", "")
            total += len(text) // 2 if isinstance(text, str) else 0
        else:
            total += len(block) // 2
    return total


def estimate_tokens(messages: Sequence[BaseMessage]) -> int:
    """The trigger estimate: all characters // 2."""
    return sum(content_chars(m) for m in messages) // 2


def pruned(messages: Sequence[BaseMessage], rules: MemoryRules) -> list[BaseMessage]:
    """Copies with old large string tool results trimmed or cleared; recent tool-calling steps protected."""
    protected: set[str] = set()
    steps = 0
    for message in reversed(messages):
        if steps >= rules.protect_recent:
            break
        if isinstance(message, AIMessage) and message.tool_calls:
            protected.update(str(call.get("id")) for call in message.tool_calls)
            steps += 1
    result: list[BaseMessage] = []
    for message in messages:
        content = message.content
        if (
            isinstance(message, ToolMessage)
            and message.tool_call_id not in protected
            and isinstance(content, str)
            and len(content) > rules.soft_trim_chars
        ):
            if len(content) > rules.hard_clear_threshold:
                text = f"[Tool output cleared \u2014 {len(content)} chars]"
            else:
                half = rules.soft_trim_chars // 2
                text = content[:half] + "\n\n[...trimmed...]\n\n" + content[-half:]
            message = message.model_copy(update={"content": text})
        result.append(message)
    return result


def _adjust_boundary(messages: Sequence[BaseMessage], split_idx: int) -> int:
    while split_idx < len(messages):
        if isinstance(messages[split_idx], HumanMessage):
            break
        split_idx -= 1
        if split_idx <= 0:
            break
    return max(split_idx, 1)


def split_index(messages: Sequence[BaseMessage], keep_recent_tokens: int) -> int:
    """How many leading messages a compaction summarises (0 = nothing to summarise)."""
    if len(messages) <= 2:
        return 0
    kept = 0
    for i in range(len(messages) - 1, -1, -1):
        tokens = message_tokens(messages[i])
        if kept + tokens > keep_recent_tokens:
            split_idx = _adjust_boundary(messages, i + 1)
            return split_idx if split_idx > 1 else 0
        kept += tokens
    return 0


def turn_prefix_length(to_keep: Sequence[BaseMessage], context_limit: int) -> int:
    """Length of the split-turn prefix, or 0 when the kept part fits in 60 % of the limit."""
    if len(to_keep) <= 1:
        return 0
    budget = int(context_limit * 0.5 * 1.2)
    if sum(message_tokens(m) for m in to_keep) <= budget:
        return 0
    accumulated = 0
    end = max(len(to_keep) - 1, 0)
    for i, message in enumerate(to_keep):
        tokens = message_tokens(message)
        if accumulated + tokens > budget:
            end = i
            break
        accumulated += tokens
    return _adjust_boundary(to_keep, end)


def _digest(messages: Sequence[BaseMessage]) -> str:
    humans = sum(isinstance(m, HumanMessage) for m in messages)
    ais = sum(isinstance(m, AIMessage) for m in messages)
    tools = sum(isinstance(m, ToolMessage) for m in messages)
    first = next((m for m in messages if isinstance(m, HumanMessage)), None)
    opening = ""
    if first is not None:
        text = first.content if isinstance(first.content, str) else str(first.content)
        opening = f"\n- First request: {text[:120]}"
    return (
        "## Compacted context\n"
        f"- Requests so far: {humans} from the user, {ais} assistant replies, {tools} tool results."
        f"{opening}\n- Outstanding: continue from the most recent request."
    )


def model_view(messages: Sequence[BaseMessage], state: MemoryState) -> list[BaseMessage]:
    """What Mycel would send to the model for `messages`, saving a summary row when it compacts."""
    rules = state.rules
    view = pruned(messages, rules)
    if estimate_tokens(view) > int(rules.context_limit * rules.threshold):
        cut = split_index(view, rules.effective_keep_recent)
        if cut >= 2:
            to_summarize, to_keep = view[:cut], view[cut:]
            prefix_len = turn_prefix_length(to_keep, rules.context_limit)
            text = _digest(to_summarize)
            prefix_text: str | None = None
            if prefix_len:
                prefix = to_keep[:prefix_len]
                opening = prefix[0].content if isinstance(prefix[0].content, str) else ""
                prefix_text = f"Turn prefix summary: the user asked for {opening[:100]}"
                text = f"{text}\n\n---\n\n**Turn Context (split turn):**\n\n{prefix_text}"
                to_keep = to_keep[prefix_len:]
            state.summary_text = text
            state.compact_up_to_index = len(view) - len(to_keep)
            state.saved.append(
                SummaryRow(
                    summary_text=text,
                    compact_up_to_index=state.compact_up_to_index,
                    compacted_at=len(messages),
                    is_split_turn=prefix_text is not None,
                    split_turn_prefix=prefix_text,
                )
            )
            return [SystemMessage(content=SUMMARY_PREFIX + text), *to_keep]
    if state.summary_text and 0 < state.compact_up_to_index <= len(view):
        return [
            SystemMessage(content=SUMMARY_PREFIX + state.summary_text),
            *view[state.compact_up_to_index :],
        ]
    return view

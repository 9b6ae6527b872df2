"""Structural problems in a thread that matter to the model: unmatched tool calls, bad cut points, duplicates.

Providers reject (or silently mis-handle) a tool result without its call and a call without its result;
after a compaction the kept part should start with a human message. Mycel's split-turn path can start it
with an AI message and can cut a tool call away from its results; this module says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memory_core.compaction import CompactionPlan
from memory_core.messages import Message, MessageType


class IssueKind(StrEnum):
    CALL_WITHOUT_RESULT = "call_without_result"
    RESULT_WITHOUT_CALL = "result_without_call"
    KEPT_STARTS_WITH_TOOL_RESULT = "kept_starts_with_tool_result"
    KEPT_STARTS_WITH_AI = "kept_starts_with_ai"
    RESULT_CUT_FROM_CALL = "result_cut_from_call"  # the call was summarised away, its result kept
    DUPLICATE_MESSAGE_ID = "duplicate_message_id"
    DUPLICATE_TOOL_CALL_ID = "duplicate_tool_call_id"


@dataclass(frozen=True, slots=True)
class IntegrityIssue:
    kind: IssueKind
    index: int | None  # stored index of the message concerned
    detail: str
    tool_call_id: str | None = None


def integrity_issues(
    messages: Sequence[Message], *, plan: CompactionPlan | None = None
) -> tuple[IntegrityIssue, ...]:
    """Every issue in `messages`; with a plan of the same messages, also the issues of its cut."""
    issues: list[IntegrityIssue] = []
    call_index: dict[str, int] = {}
    answered: set[str] = set()
    call_counts: Counter[str] = Counter()
    for i, message in enumerate(messages):
        if message.type is MessageType.AI:
            for call in message.tool_calls:
                if not call.id:
                    issues.append(
                        IntegrityIssue(IssueKind.CALL_WITHOUT_RESULT, i, f"{call.name} call has no id")
                    )
                    continue
                call_counts[call.id] += 1
                call_index.setdefault(call.id, i)
        elif message.type is MessageType.TOOL:
            call_id = message.tool_call_id
            if not call_id or call_id not in call_index:
                issues.append(
                    IntegrityIssue(
                        IssueKind.RESULT_WITHOUT_CALL,
                        i,
                        "tool result with no tool_call_id"
                        if not call_id
                        else f"no earlier AI message calls {call_id}",
                        call_id,
                    )
                )
            else:
                answered.add(call_id)
    for call_id, index in call_index.items():
        if call_id not in answered:
            issues.append(
                IntegrityIssue(
                    IssueKind.CALL_WITHOUT_RESULT, index, f"tool call {call_id} has no result", call_id
                )
            )
    for call_id, count in call_counts.items():
        if count > 1:
            issues.append(
                IntegrityIssue(
                    IssueKind.DUPLICATE_TOOL_CALL_ID,
                    call_index[call_id],
                    f"tool call id {call_id} is used {count} times",
                    call_id,
                )
            )
    message_ids = Counter(m.id for m in messages if m.id)
    for i, message in enumerate(messages):
        if message.id and message_ids[message.id] > 1:
            issues.append(
                IntegrityIssue(
                    IssueKind.DUPLICATE_MESSAGE_ID, i, f"message id {message.id} appears more than once"
                )
            )
            message_ids[message.id] = 0  # report each id once, at its first occurrence
    if plan is not None:
        issues.extend(cut_issues(messages, plan=plan))
    return tuple(
        sorted(issues, key=lambda issue: (issue.index if issue.index is not None else -1, issue.kind))
    )


def cut_issues(messages: Sequence[Message], *, plan: CompactionPlan) -> tuple[IntegrityIssue, ...]:
    """Issues of the kept part that Mycel would send after the plan's compaction."""
    start = plan.compact_up_to_index
    if start is None or start >= len(messages):
        return ()
    issues: list[IntegrityIssue] = []
    first = messages[start]
    if first.type is MessageType.TOOL:
        issues.append(
            IntegrityIssue(
                IssueKind.KEPT_STARTS_WITH_TOOL_RESULT,
                start,
                "the kept part starts with a tool result (its call is in the summary)",
                first.tool_call_id,
            )
        )
    elif first.type is MessageType.AI:
        issues.append(
            IntegrityIssue(IssueKind.KEPT_STARTS_WITH_AI, start, "the kept part starts with an AI message")
        )
    summarised_calls = {
        call.id for m in messages[:start] if m.type is MessageType.AI for call in m.tool_calls if call.id
    }
    kept_calls: set[str] = set()
    for i in range(start, len(messages)):
        message = messages[i]
        if message.type is MessageType.AI:
            kept_calls.update(call.id for call in message.tool_calls if call.id)
        elif (
            message.type is MessageType.TOOL
            and message.tool_call_id in summarised_calls
            and message.tool_call_id not in kept_calls
        ):
            issues.append(
                IntegrityIssue(
                    IssueKind.RESULT_CUT_FROM_CALL,
                    i,
                    f"the call {message.tool_call_id} is summarised but its result is sent",
                    message.tool_call_id,
                )
            )
    return tuple(issues)

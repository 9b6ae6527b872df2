"""Integrity checks: unmatched calls and results, duplicates, and where a compaction would cut."""

from __future__ import annotations

from typing import Any

from memory_core.compaction import plan_compaction
from memory_core.integrity import IssueKind, integrity_issues
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, message_from_dict


def _thread(*raws: dict[str, Any]) -> tuple[Message, ...]:
    return tuple(message_from_dict(r) for r in raws)


def _ai(call_ids: list[str | None], content: str = "", id_: str | None = None) -> dict[str, Any]:
    return {
        "type": "ai",
        "content": content,
        "id": id_,
        "tool_calls": [{"id": c, "name": "Bash"} for c in call_ids],
    }


def _tool(call_id: str | None, content: str = "ok", id_: str | None = None) -> dict[str, Any]:
    return {"type": "tool", "content": content, "tool_call_id": call_id, "id": id_}


def test_clean_thread_has_no_issues() -> None:
    messages = _thread(
        {"type": "human", "content": "hi", "id": "h"}, _ai(["c1"], id_="a"), _tool("c1", id_="t")
    )
    assert integrity_issues(messages) == ()


def test_call_without_result_and_result_without_call_are_reported() -> None:
    messages = _thread(
        {"type": "human", "content": "hi"}, _ai(["c1", "c2"]), _tool("c1"), _tool("zz"), _tool(None)
    )
    found = {(i.kind, i.index, i.tool_call_id) for i in integrity_issues(messages)}
    assert found == {
        (IssueKind.CALL_WITHOUT_RESULT, 1, "c2"),
        (IssueKind.RESULT_WITHOUT_CALL, 3, "zz"),
        (IssueKind.RESULT_WITHOUT_CALL, 4, None),
    }


def test_result_before_its_call_counts_as_without_call() -> None:
    messages = _thread(_tool("c1"), _ai(["c1"]))
    kinds = sorted(i.kind for i in integrity_issues(messages))
    assert kinds == [IssueKind.CALL_WITHOUT_RESULT, IssueKind.RESULT_WITHOUT_CALL]


def test_duplicate_ids_are_reported_once_each() -> None:
    messages = _thread(
        {"type": "human", "content": "a", "id": "same"},
        {"type": "human", "content": "b", "id": "same"},
        _ai(["c1"]),
        _tool("c1"),
        _ai(["c1"]),
        _tool("c1"),
    )
    kinds = [i.kind for i in integrity_issues(messages)]
    assert kinds.count(IssueKind.DUPLICATE_MESSAGE_ID) == 1
    assert kinds.count(IssueKind.DUPLICATE_TOOL_CALL_ID) == 1


def test_split_turn_cut_that_starts_with_an_ai_message_is_reported() -> None:
    # One huge turn after a short history: Mycel splits the turn and keeps it from an AI message on.
    raws: list[dict[str, Any]] = [
        {"type": "human", "content": "old question " * 10},
        {"type": "ai", "content": "old answer " * 10, "tool_calls": []},
        {"type": "human", "content": "new task"},
    ]
    for n in range(6):
        raws += [_ai([f"c{n}"], content="step"), _tool(f"c{n}", content="r" * 1200)]
    messages = _thread(*raws)
    memory = MemorySettings(
        context_limit=2000, keep_recent_tokens=600, soft_trim_chars=5000, hard_clear_threshold=9000
    )
    plan = plan_compaction(messages, settings=memory)
    assert plan.split_turn and plan.compact_up_to_index is not None
    kinds = {i.kind for i in integrity_issues(messages, plan=plan)}
    assert IssueKind.KEPT_STARTS_WITH_AI in kinds


def test_cut_that_separates_a_result_from_its_call_is_reported() -> None:
    raws: list[dict[str, Any]] = [
        {"type": "human", "content": "q" * 400},
        _ai(["c1"], content="a" * 400),
        {"type": "human", "content": "steer"},
        _tool("c1", content="late result"),
        _ai([], content="done"),
    ]
    messages = _thread(*raws)
    plan = plan_compaction(messages, settings=MemorySettings(context_limit=1000, keep_recent_tokens=20))
    assert plan.compact_up_to_index == 2
    found = {(i.kind, i.index) for i in integrity_issues(messages, plan=plan)}
    assert (IssueKind.RESULT_CUT_FROM_CALL, 3) in found

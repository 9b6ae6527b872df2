"""Hypothesis strategies for message lists and settings shaped like the shared vectors' random cases."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, message_from_dict

CALL_IDS = st.sampled_from(["c1", "c2", "c3", "c4", "c5", "", None])
TEXT = st.text(alphabet="ab \u00e9\u4e2d", max_size=120)
BLOCK = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.just({"type": "image_url", "image_url": {"url": "data:x"}}),
    TEXT,
)
CONTENT = st.one_of(TEXT, TEXT, TEXT, st.lists(BLOCK, max_size=3))


def _message(kind: str, content: Any, call_ids: list[str | None], position: int) -> dict[str, Any]:
    raw: dict[str, Any] = {"type": kind, "content": content, "id": f"m{position}"}
    if kind == "ai":
        raw["tool_calls"] = [{"id": c, "name": "Tool", "args": {}} for c in call_ids]
    if kind == "tool":
        raw["tool_call_id"] = call_ids[0] if call_ids else None
    return raw


RAW_MESSAGE = st.tuples(
    st.sampled_from(["human", "ai", "ai", "tool", "tool", "tool", "system"]),
    CONTENT,
    st.lists(CALL_IDS, max_size=3),
)


@st.composite
def message_lists(draw: st.DrawFn, max_size: int = 24) -> tuple[Message, ...]:
    raws = draw(st.lists(RAW_MESSAGE, max_size=max_size))
    return tuple(message_from_dict(_message(k, c, ids, i)) for i, (k, c, ids) in enumerate(raws))


@st.composite
def settings(draw: st.DrawFn) -> MemorySettings:
    return MemorySettings(
        soft_trim_chars=draw(st.integers(1, 60)),
        hard_clear_threshold=draw(st.integers(1, 120)),
        protect_recent=draw(st.integers(0, 4)),
        keep_recent_tokens=draw(st.integers(0, 150)),
        context_limit=draw(st.integers(1, 600)),
        threshold=draw(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 1.0])),
    )


@st.composite
def threads(draw: st.DrawFn, max_turns: int = 8) -> tuple[Message, ...]:
    """Conversation-shaped threads: turns of human → (AI tool calls → results)* → AI answer, with steers."""
    raws: list[dict[str, Any]] = []
    call_number = 0
    for _ in range(draw(st.integers(1, max_turns))):
        raws.append({"type": "human", "content": draw(TEXT)})
        for _ in range(draw(st.integers(0, 4))):
            ids: list[str | None] = []
            for _ in range(draw(st.integers(1, 2))):
                call_number += 1
                ids.append(draw(st.sampled_from([f"c{call_number}"] * 6 + ["c1", "", None])))
            raws.append(
                {"type": "ai", "content": draw(TEXT), "tool_calls": [{"id": c, "name": "T"} for c in ids]}
            )
            for call_id in ids:
                size = draw(st.sampled_from([0, 5, 40, 90, 150, 260, 400]))
                content: Any = (
                    "r" * size if draw(st.integers(0, 9)) else [{"type": "text", "text": "b" * size}]
                )
                raws.append({"type": "tool", "content": content, "tool_call_id": call_id})
            if draw(st.integers(0, 7)) == 0:
                raws.append({"type": "human", "content": draw(TEXT)})  # a steer inside the turn
        raws.append({"type": "ai", "content": draw(TEXT), "tool_calls": []})
    return tuple(message_from_dict({**raw, "id": f"m{i}"}) for i, raw in enumerate(raws))


@st.composite
def thread_settings(draw: st.DrawFn) -> MemorySettings:
    return MemorySettings(
        soft_trim_chars=draw(st.integers(10, 100)),
        hard_clear_threshold=draw(st.integers(20, 300)),
        protect_recent=draw(st.integers(0, 3)),
        keep_recent_tokens=draw(st.integers(0, 300)),
        context_limit=draw(st.integers(50, 2000)),
        threshold=draw(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9])),
    )

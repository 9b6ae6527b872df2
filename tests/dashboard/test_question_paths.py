"""A question goes down the layers and comes back: following one thread id from the export view and from
`/api/threads/ID/calls/` to the stores never enters memory_core/cli/, and no call climbs from a lower
layer back into a higher one (the path of issue 24: the export climbed a floor 19 times and entered cli/
7 times)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from django.urls import reverse

from mycel_dashboard.api.tokens import create_token
from tests.core.test_layers import RANK, layer_of

ROOT = Path(__file__).resolve().parents[2]
THREAD = "m_0D8EzdJXJhk9-2"  # the sample thread with seven summaries
# Calls a lower layer makes into a higher one by design: a callback it was handed (a sort key, the compute
# function the one cache layer, memory_core/memo.py, runs on a miss), which the trace cannot tell from a
# call it chose to make.
CALLBACKS = {"<lambda>", "<genexpr>", "<listcomp>", "<dictcomp>", "<setcomp>"}
HANDED_CALLBACKS = {"memory_core.memo"}


def _module(frame: FrameType) -> str | None:
    path = Path(frame.f_code.co_filename)
    if not path.is_relative_to(ROOT) or path.parts[len(ROOT.parts)] not in ("memory_core", "mycel_dashboard"):
        return None
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@contextmanager
def traced() -> Iterator[tuple[set[str], list[str]]]:
    """Every project module entered, and every call that went up a layer (caller -> callee)."""
    entered: set[str] = set()
    upward: list[str] = []

    def on_call(frame: FrameType, event: str, arg: Any) -> Callable[..., Any] | None:
        if event != "call":
            return None
        callee = _module(frame)
        if callee is None:
            return None
        entered.add(callee)
        caller_frame = frame.f_back
        caller = _module(caller_frame) if caller_frame is not None else None
        handed = caller in HANDED_CALLBACKS or frame.f_code.co_name in CALLBACKS
        if caller is not None and not handed and RANK[layer_of(callee)] > RANK[layer_of(caller)]:
            upward.append(f"{caller} -> {callee}.{frame.f_code.co_name}")
        return None

    sys.setprofile(on_call)
    try:
        yield entered, upward
    finally:
        sys.setprofile(None)


def _memory_core_upward(upward: list[str]) -> list[str]:
    return [u for u in upward if u.startswith("memory_core")]


def test_the_api_calls_question_never_enters_the_cli_nor_climbs(client, sample_home: Path, viewer) -> None:
    token = create_token(viewer)[1]
    url = reverse("api_calls", args=[THREAD])
    with traced() as (entered, upward):
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200 and response.json()["count"] == 12
    assert any(m.startswith("memory_core.stores") for m in entered)  # the trace saw the way down
    assert "memory_core.app.thread" in entered
    assert sorted(m for m in entered if m.startswith("memory_core.cli")) == []
    assert _memory_core_upward(upward) == []


def test_the_export_view_never_enters_the_cli_nor_climbs(viewer_client, sample_home: Path) -> None:
    url = reverse("thread_export", args=[THREAD])
    with traced() as (entered, upward):
        response = viewer_client.post(url, {"format": "json"})
    assert response.status_code == 200 and response.json()["thread_id"] == THREAD
    assert any(m.startswith("memory_core.stores") for m in entered)
    assert "memory_core.app.export" in entered
    assert sorted(m for m in entered if m.startswith("memory_core.cli")) == []
    assert _memory_core_upward(upward) == []


@pytest.mark.parametrize(
    ("caller", "callee", "climbs"),
    [
        ("memory_core.stores.reader", "memory_core.app.thread", True),
        ("memory_core.app.thread", "memory_core.stores.reader", False),
        ("memory_core.app.export", "memory_core.cli.threads", True),
    ],
)
def test_a_climb_is_what_the_trace_counts(caller: str, callee: str, climbs: bool) -> None:
    assert (RANK[layer_of(callee)] > RANK[layer_of(caller)]) is climbs

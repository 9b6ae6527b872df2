"""The call page names what Mycel changes in the request at call time (docs/request-time-changes.md), on
the sample home Mycel main wrote: main adds no steer note, even to the calls after its one owner steer, and
the page says which call-time changes the record cannot reproduce."""

from __future__ import annotations

import html
from pathlib import Path

from django.urls import reverse

STEERED = "m_0D8EzdJXJhk9-3"  # its owner steered while the run was active (message 3)


def _body(client, number: int) -> str:
    response = client.get(reverse("call", args=[STEERED, number]))
    assert response.status_code == 200
    return response.content.decode()


def test_main_says_what_it_changes_at_call_time_and_adds_no_note(viewer_client, sample_home: Path) -> None:
    body = _body(viewer_client, 2)  # the call right after the steer
    assert 'id="request-time"' in body and "read from OpenDCAI/Mycel main 9a39b22e" in body
    tools = body.split('id="request-time-tools"', 1)[1].split("</li>", 1)[0]
    assert "<code>ToolRunner</code>" in tools and "core/runtime/runner.py" in tools
    assert "not reproducible: the tool definitions ToolRunner adds from Mycel&#x27;s tool registry" in tools
    caching = body.split('id="request-time-prompt_caching"', 1)[1].split("</li>", 1)[0]
    assert (
        "no change: PromptCachingMiddleware adds cache_control only when request.model is a ChatAnthropic"
        in (html.unescape(caching))
    )
    # Main's SteeringMiddleware injects the steer as a stored message and adds nothing to the request.
    assert "Steer note" not in body and 'id="request-time-steer_note"' not in body
    assert body.count('<li class="msg ') == 1 + 4  # system prompt + messages 0-3
    steer = body.split('id="req-4"', 1)[1].split("</li>", 1)[0]
    assert "Also vacuum the database when the index is done." in steer and ">owner steer</span>" in steer

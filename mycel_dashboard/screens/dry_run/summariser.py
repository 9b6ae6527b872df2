"""Optional: ask a real model for the summary a dry-run would produce. Off unless configured; writes nothing.

Any OpenAI-compatible chat-completions endpoint: DASHBOARD_SUMMARY_URL (…/v1/chat/completions),
DASHBOARD_SUMMARY_MODEL, DASHBOARD_SUMMARY_API_KEY (optional), DASHBOARD_SUMMARY_TIMEOUT (seconds, 60).
DASHBOARD_SUMMARY_PROMPT replaces the dashboard's own default prompt (it is not Mycel's).
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from memory_core.compaction import DEFAULT_SUMMARY_PROMPT
from memory_core.messages import text_of


@dataclass(frozen=True, slots=True)
class SummaryEndpoint:
    url: str
    model: str
    api_key: str | None
    timeout_s: float


@dataclass(frozen=True, slots=True)
class SummaryExchange:
    """The request we sent (without the key) and what came back, for display."""

    request: dict[str, Any]
    summary: str | None
    error: str | None
    status: int | None


def configured_endpoint() -> SummaryEndpoint | None:
    url = os.environ.get("DASHBOARD_SUMMARY_URL", "").strip()
    model = os.environ.get("DASHBOARD_SUMMARY_MODEL", "").strip()
    if not url or not model:
        return None
    try:
        timeout = float(os.environ.get("DASHBOARD_SUMMARY_TIMEOUT", "60"))
    except ValueError:
        timeout = 60.0
    return SummaryEndpoint(
        url=url, model=model, api_key=os.environ.get("DASHBOARD_SUMMARY_API_KEY") or None, timeout_s=timeout
    )


def summary_prompt() -> str:
    return os.environ.get("DASHBOARD_SUMMARY_PROMPT", "").strip() or DEFAULT_SUMMARY_PROMPT


def build_request(endpoint: SummaryEndpoint, *, prompt: str, conversation: str) -> dict[str, Any]:
    return {
        "model": endpoint.model,
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": f"The conversation to summarise:\n\n{conversation}"},
        ],
    }


def _summary_of(body: Any) -> str | None:
    try:
        content = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(content, list):  # some servers answer with content blocks
        content = text_of(content)
    return content if isinstance(content, str) else None


def generate_summary(endpoint: SummaryEndpoint, *, prompt: str, conversation: str) -> SummaryExchange:
    """POST one chat-completions request; every failure comes back as `error`, never raised."""
    payload = build_request(endpoint, prompt=prompt, conversation=conversation)
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(  # noqa: S310 - the URL is the operator's own configuration
        endpoint.url, data=json.dumps(payload).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=endpoint.timeout_s) as response:  # noqa: S310
            status = response.status
            body = json.loads(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        return SummaryExchange(payload, None, f"the endpoint answered HTTP {exc.code}", exc.code)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        return SummaryExchange(payload, None, f"could not reach the endpoint: {exc}", None)
    except ValueError:
        return SummaryExchange(payload, None, "the endpoint did not answer JSON", None)
    summary = _summary_of(body)
    if summary is None:
        return SummaryExchange(payload, None, "the answer had no choices[0].message.content", status)
    return SummaryExchange(payload, summary, None, status)

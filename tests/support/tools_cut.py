"""What the Tool-output pressure screen shows of `mycel-memory tools --json` (which prints every list
whole), cut here from the whole report the way the page describes it: the oracle the page's sum
(memory_core/app/tool_pages.py, summed thread by thread) is held to."""

from __future__ import annotations

from typing import Any

from memory_core.app import tool_pages as shown


def page_tools(document: dict[str, Any]) -> dict[str, Any]:
    """Each long list cut to its first entries, `<list>_count` its length."""
    cut = _cut(
        _cut(document, "thread_totals", shown.THREAD_TOTALS_SHOWN), "re_requests", shown.RE_REQUESTS_SHOWN
    )
    return {
        **cut,
        "tools": [
            {
                **_cut(tool, "threads", shown.TOOL_THREADS_SHOWN),
                "days": [_cut(day, "thread_ids", shown.DAY_THREADS_SHOWN) for day in tool["days"]],
            }
            for tool in document["tools"]
        ],
    }


def _cut(document: dict[str, Any], key: str, size: int) -> dict[str, Any]:
    return {**document, key: document[key][:size], f"{key}_count": len(document[key])}

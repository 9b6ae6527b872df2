"""A bundle as a readable Markdown transcript: every message with its role, tool calls and results with
the timeline's pruning badges, each summary at its compaction boundary, each model call marked.

Pure: it reads only the (already redacted) bundle. Every text from the thread is untrusted, so it goes in
a code fence longer than any run of backticks inside it, ids go in code spans the same way, and every
other value from the data (a model name inside the limit's explanation, the rules' reason, a count) goes
through `plain`: nothing in a message or a name can close its block or become Markdown or HTML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_BACKTICKS = re.compile(r"`+")
_ROLES = {"human": "Human", "ai": "AI", "tool": "Tool result", "system": "System"}


def fence(text: str, info: str = "") -> str:
    """`text` in a fenced block no line of it can close: one backtick longer than its longest run."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text}\n{marks}"


def code(text: str) -> str:
    """An inline code span for an id or a name (quoted as JSON, so control characters show as escapes)."""
    shown = json.dumps(text, ensure_ascii=False)[1:-1]
    longest = max((len(run) for run in _BACKTICKS.findall(shown)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if shown.startswith("`") or shown.endswith("`") or not shown else ""
    return f"{marks}{pad}{shown}{pad}{marks}"


# What starts inline Markdown or HTML mid-line (block syntax needs a line start, and `plain` keeps one line).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>&~|])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_LINE_BREAKS = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def plain(value: object) -> str:
    """A value from the data as inert Markdown prose on one line: HTML's <, > and & as entities, the other
    characters inline Markdown acts on backslash-escaped, control characters and line breaks as a space."""
    text = _LINE_BREAKS.sub(" ", str(value))
    return _MARKDOWN_SPECIAL.sub(lambda m: _HTML.get(m.group(1)) or "\\" + m.group(1), text)


def _count(value: object) -> str:
    """A count with thousands separators; anything else as it came (then through `plain`)."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def badge(decision: Mapping[str, Any]) -> str | None:
    """The pruning badge in the timeline's words (None when memory leaves the message alone)."""
    action = decision.get("action")
    original = decision.get("original_chars") or 0
    if action == "soft_trimmed":
        return f"soft-trimmed {plain(_count(original))} → {plain(_count(decision.get('chars', 0)))} chars"
    if action == "hard_cleared":
        return f"hard-cleared (was {plain(_count(original))} chars)"
    if action == "protected":
        step = re.search(r"AI step #(\d+)", str(decision.get("rule", "")))
        return "protected" + (f" by AI step #{step.group(1)} from the end" if step else "")
    return None


def bundle_markdown(bundle: Mapping[str, Any]) -> str:
    """The transcript of a bundle (memory_core/app/export.py)."""
    thread = bundle.get("thread") or {}
    config = bundle.get("config") or {}
    messages: Sequence[Mapping[str, Any]] = bundle.get("messages") or []
    pruning = {d["index"]: d for d in bundle.get("pruning") or []}
    calls = {c["message_index"]: c for c in bundle.get("calls") or []}
    boundaries: dict[int, list[Mapping[str, Any]]] = {}
    for summary in bundle.get("summaries") or []:
        boundaries.setdefault(summary["compact_up_to_index"], []).append(summary)
    settings = config.get("settings") or {}
    lines = [
        f"# Thread {code(str(bundle.get('thread_id', '')))}",
        "",
        f"- name: {code(str(thread.get('name') or ''))}, model: {code(str(thread.get('model') or ''))}, "
        f"layout: {plain(thread.get('layout'))}",
        f"- checkpoint {code(str(bundle.get('checkpoint_id', '')))}: {len(messages)} messages, "
        f"{len(calls)} model calls",
        f"- context limit {plain(_count(config.get('context_limit', 0)))} "
        f"({plain(config.get('context_limit_source'))}); "
        f"rules {plain(config.get('rules'))} ({plain(config.get('rules_reason'))}); soft_trim_chars "
        f"{plain(settings.get('soft_trim_chars'))}, hard_clear_threshold "
        f"{plain(settings.get('hard_clear_threshold'))}, protect_recent {plain(settings.get('protect_recent'))}, "
        f"keep_recent_tokens {plain(settings.get('keep_recent_tokens'))}",
        f"- exported {plain(bundle.get('exported_at'))} by mycel-memory, secrets redacted (inside texts, masked with * to their length); badges are "
        "what memory does at the next model call under this config",
    ]
    for issue in bundle.get("integrity") or []:
        lines.append(f"- integrity: {plain(issue.get('kind'))} at message {plain(issue.get('index'))}")
    tool_names = {
        call.get("id"): call.get("name")
        for m in messages
        for call in m.get("tool_calls") or []
        if isinstance(call, Mapping)
    }
    active = [s for s in bundle.get("summaries") or [] if s.get("is_active")]
    boundary = max((int(s.get("compact_up_to_index", 0)) for s in active), default=0)
    for index, message in enumerate(messages):
        for summary in boundaries.get(index, ()):
            lines += ["", *_summary_lines(summary)]
        if index in calls:
            lines += ["", _call_line(calls[index])]
        summarised = index < boundary
        lines += ["", *_message_lines(index, message, pruning.get(index), tool_names, summarised=summarised)]
    for at, summaries in sorted(boundaries.items()):
        if at >= len(messages):
            for summary in summaries:
                lines += ["", *_summary_lines(summary)]
    return "\n".join(lines) + "\n"


def _summary_lines(summary: Mapping[str, Any]) -> list[str]:
    state = "active" if summary.get("is_active") else "inactive"
    split = ", split turn" if summary.get("is_split_turn") else ""
    lines = [
        f"### Summary {code(str(summary.get('summary_id', '')))} — {state}{split}: replaces messages "
        f"0–{int(summary.get('compact_up_to_index', 0)) - 1}",
        "",
        fence(str(summary.get("summary_text", "")), "text"),
    ]
    prefix = summary.get("split_turn_prefix")
    if prefix:
        lines += ["", "Split-turn prefix:", "", fence(str(prefix), "text")]
    return lines


def _call_line(call: Mapping[str, Any]) -> str:
    tokens = call.get("estimated_tokens") or {}
    compacted = ""
    if call.get("compacted"):
        compacted = "; compacted first" + ("" if call.get("summary_stored") else " (summary not stored)")
    return (
        f"**▶ model call {plain(call.get('call'))}** — sent {plain(call.get('request_messages'))} messages, "
        f"~{plain(_count(tokens.get('sent', 0)))} tokens (Mycel's estimate) of a "
        f"{plain(_count(call.get('context_limit', 0)))} limit"
        f"{compacted}"
    )


def _message_lines(
    index: int,
    message: Mapping[str, Any],
    decision: Mapping[str, Any] | None,
    tool_names: Mapping[Any, Any],
    *,
    summarised: bool,
) -> list[str]:
    kind = str(message.get("type", ""))
    title = f"## #{index} {_ROLES.get(kind) or plain(kind)}"
    if kind == "tool":
        name = message.get("name") or tool_names.get(message.get("tool_call_id"))
        title += f" of {code(str(name or '?'))}"
        if message.get("status") == "error":
            title += " (error)"
    badges = [b for b in (badge(decision) if decision else None,) if b]
    if summarised and kind == "tool":
        badges.insert(0, "summarised")  # behind the active summary's boundary: the model gets the summary
    if badges:
        title += " — " + ", ".join(f"**{b}**" for b in badges)
    lines = [title, "", fence(_text(message.get("content")), "text")]
    for call in message.get("tool_calls") or []:
        args = json.dumps(call.get("args", {}), ensure_ascii=False, indent=2)
        lines += [
            "",
            f"Tool call {code(str(call.get('name', '')))} ({code(str(call.get('id') or ''))}):",
            "",
            fence(args, "json"),
        ]
    return lines


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else ():
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        else:
            parts.append(json.dumps(block, ensure_ascii=False))
    return "\n".join(parts)

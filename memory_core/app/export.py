"""A thread (or one checkpoint) as one self-contained, redacted JSON document.

Every part is what another command already prints, by the same function: `thread` is `thread --json`,
`calls` is `calls --json`, `checkpoints` the list `thread --json` gives; `messages` are the checkpoint's
messages as LangChain message dicts. `config` holds everything the plan and the dry-run need, so
`plan --bundle` and `dry-run --bundle` run with no Mycel file present (memory_core/export/read.py).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict
from datetime import datetime
from typing import Any

from memory_core.app.errors import UnknownThread
from memory_core.app.thread import thread_detail
from memory_core.app.thread_settings import ThreadMemorySettings, thread_memory_settings
from memory_core.compaction import CompactionPlan, plan_compaction
from memory_core.config import redact_secrets
from memory_core.export.markdown import bundle_markdown
from memory_core.export.read import FORMAT, VERSION
from memory_core.integrity import integrity_issues
from memory_core.messages import Message, MessageType
from memory_core.model_view import newest_active
from memory_core.records import SummaryRow, ThreadRow, loud_messages
from memory_core.rules.profile import RulesProfile, rules_reason
from memory_core.stores.reader import MycelReader
from memory_core.stores.redact import encodable_data, masked_texts
from memory_core.tokens import content_chars

FORMATS = ("json", "md")


class ExportError(ValueError):
    """An export that cannot be made (unknown thread or checkpoint): one line for the CLI and the page."""


def message_dict(message: Message) -> dict[str, Any]:
    """A message as a LangChain message dict (model_dump's keys), which `messages_from_dicts` reads back."""
    data: dict[str, Any] = {
        "type": message.raw_type if message.type is MessageType.OTHER else message.type.value,
        "content": message.content if isinstance(message.content, str) else list(message.content),
        "id": message.id,
    }
    if message.name is not None:
        data["name"] = message.name
    if message.type is MessageType.AI:
        data["tool_calls"] = [
            {"id": c.id, "name": c.name, "args": dict(c.args), "type": "tool_call"}
            for c in message.tool_calls
        ]
    if message.tool_call_id is not None:
        data["tool_call_id"] = message.tool_call_id
    if message.status is not None:
        data["status"] = message.status
    if message.usage_metadata is not None:
        data["usage_metadata"] = dict(message.usage_metadata)
    if message.model_name is not None:
        data["response_metadata"] = {"model_name": message.model_name}
    if message.metadata is not None:
        data["metadata"] = dict(message.metadata)
    return data


def export_bundle(
    reader: MycelReader, thread_id: str, *, checkpoint_id: str | None = None, exported_at: datetime
) -> dict[str, Any]:
    """The bundle of `thread_id` at its head (or at `checkpoint_id`), redacted; ExportError when the
    thread or the checkpoint is unknown."""
    # The bundle's parts are `thread --json` and `calls --json` exactly.
    try:
        detail = thread_detail(reader, thread_id, rules=None)
    except UnknownThread as exc:
        raise ExportError(str(exc)) from None
    row = detail.row
    state = reader.get_state(thread_id, checkpoint_id or row.head_checkpoint_id).value
    if state is None:
        where = f"no checkpoint {checkpoint_id!r}" if checkpoint_id else "no readable checkpoint"
        raise ExportError(f"thread {thread_id!r} has {where}")
    messages = state.messages
    resolved = thread_memory_settings(reader.locations, row)
    profile, reason = rules_reason(override=None, layout=row.layout)
    plan = plan_compaction(messages, settings=resolved.settings, keep_newest=profile is RulesProfile.DEV)
    summaries = reader.list_summaries(thread_id).value
    calls = detail.calls
    if checkpoint_id:
        # The record up to the chosen checkpoint: the calls whose AI message it holds.
        calls = [c for c in calls if c["message_index"] < len(messages)]
    bundle = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at.isoformat(),
        "thread_id": thread_id,
        "checkpoint_id": state.checkpoint.checkpoint_id,
        "thread": detail.answer(),
        "messages": [message_dict(m) for m in messages],
        "checkpoints": detail.data["checkpoints"],
        "summaries": [_summary_json(s) for s in summaries],
        "calls": calls,
        "pruning": _pruning_json(plan),
        "config": _config_json(row, resolved, profile, reason, summaries),
        "integrity": [
            {"kind": i.kind.value, "index": i.index, "detail": i.detail, "tool_call_id": i.tool_call_id}
            for i in integrity_issues(messages, plan=plan)
        ],
        # What reading met, as `thread` warns on stderr (an absent side store is normal, so not said).
        "warnings": [
            *loud_messages(detail.problems),
            *detail.warnings,
        ],
    }
    # The project's one rule (memory_core/secrets.py): secret keys at any depth and key-shaped values, then
    # the secrets inside texts (a tool output's `OPENAI_API_KEY=sk-…`), masked to their length so that
    # `plan --bundle` prunes the bundle's messages exactly as the live thread's.
    redacted: dict[str, Any] = masked_texts(encodable_data(redact_secrets(bundle)))
    return redacted


def _summary_json(row: SummaryRow) -> dict[str, Any]:
    return {
        "summary_id": row.summary_id,
        "compact_up_to_index": row.compact_up_to_index,
        "compacted_at": row.compacted_at,
        "is_active": row.is_active,
        "is_split_turn": row.is_split_turn,
        "created_at": row.created_at.isoformat() if row.created_at else "",
        "store": row.store,
        "summary_text": row.summary_text,
        "split_turn_prefix": row.split_turn_prefix,
    }


def _pruning_json(plan: CompactionPlan) -> list[dict[str, Any]]:
    """What memory does to each message at the next call, under the config in force (the badges)."""
    return [
        {
            "index": d.index,
            "action": d.action.value,
            "rule": d.rule,
            "original_chars": d.original_chars,
            "chars": content_chars(d.message.content),
        }
        for d in plan.pruning.decisions
    ]


def _config_json(
    row: ThreadRow,
    resolved: ThreadMemorySettings,
    profile: RulesProfile,
    reason: str,
    summaries: list[SummaryRow],
) -> dict[str, Any]:
    """The config in force: effective settings, the limit and where it comes from, the rules, and the
    inputs of Mycel dev's step (its active summary and the head's breaker)."""
    active = newest_active(summaries)
    return {
        "settings": asdict(resolved.settings),
        "context_limit": resolved.limit.value,
        "context_limit_source": resolved.limit.explanation,
        "rules": profile.value,
        "rules_reason": reason,
        "active_summary": None
        if active is None
        else {"text": active.summary_text, "compact_up_to_index": active.compact_up_to_index},
        "breaker": {"failure_count": row.breaker_failures or 0, "open": row.breaker_open},
        "problems": [p.message for p in resolved.problems],
    }


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def export_filename(thread_id: str, fmt: str, checkpoint_id: str | None = None) -> str:
    """A download name from any thread id: its safe characters (at most 60) and a hash of the whole id,
    so `..`, slashes, quotes and control characters never reach a header or a path."""
    slug = _UNSAFE.sub("-", thread_id).strip("-.")[:60].strip("-.") or "thread"
    whole = thread_id + "\0" + (checkpoint_id or "")
    return f"mycel-{slug}-{hashlib.sha256(whole.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}.{fmt}"


def export_text(bundle: dict[str, Any], fmt: str) -> str:
    """The file's text: the bundle as JSON, or its Markdown transcript (the page downloads the same)."""
    if fmt == "md":
        return bundle_markdown(bundle)
    return json.dumps(bundle, ensure_ascii=False, indent=2) + "\n"


def export_summary(bundle: dict[str, Any], fmt: str) -> dict[str, Any]:
    """What the audit row keeps of an export: which checkpoint, how much, in which format."""
    return {
        "format": fmt,
        "checkpoint_id": bundle["checkpoint_id"],
        "messages": len(bundle["messages"]),
        "calls": len(bundle["calls"]),
        "summaries": len(bundle["summaries"]),
    }

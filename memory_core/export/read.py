"""A bundle read back, strictly: what `plan --bundle` and `dry-run --bundle` plan from.

A bundle is data from elsewhere: every field used is checked for its type, nothing in it is ever run, and
a file that is not our bundle (another format, another version, a field of the wrong kind) is refused
with one line naming what is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, UnknownMessageType, messages_from_dicts
from memory_core.model_view import ActiveSummary
from memory_core.records import BreakerState
from memory_core.rules.profile import RulesProfile, UnknownRules, parse_rules

# What a bundle says it is (memory_core/app/export.py writes them); kept here so that reading a bundle
# imports nothing of the stores.
FORMAT = "mycel-memory-export"
VERSION = 1


class BundleError(ValueError):
    """Not a bundle this version can read: one line saying what is wrong."""


@dataclass(frozen=True, slots=True)
class BundleInputs:
    """What planning needs, as the bundle recorded it."""

    thread_id: str
    checkpoint_id: str
    messages: tuple[Message, ...]
    settings: MemorySettings
    context_limit: int
    context_limit_source: str
    rules: RulesProfile
    rules_reason: str
    active_summary: ActiveSummary | None
    breaker: BreakerState


def read_bundle(document: Any) -> BundleInputs:
    """The planning inputs of a parsed bundle; BundleError for anything that is not one."""
    if not isinstance(document, Mapping) or document.get("format") != FORMAT:
        raise BundleError(f'not a mycel-memory export bundle (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise BundleError(f"bundle version {document.get('version')!r} is not {VERSION}, the one this reads")
    config = _mapping(document, "config")
    rules_text = _text(config, "rules", "config.rules")
    try:
        rules = parse_rules(rules_text)
    except UnknownRules as exc:
        raise BundleError(f"config.rules: {exc}") from None
    return BundleInputs(
        thread_id=_text(document, "thread_id", "thread_id"),
        checkpoint_id=_text(document, "checkpoint_id", "checkpoint_id"),
        messages=_messages(document.get("messages")),
        settings=_settings(_mapping(config, "settings", "config.settings")),
        context_limit=_int(config, "context_limit", "config.context_limit", minimum=1),
        context_limit_source=_text(config, "context_limit_source", "config.context_limit_source"),
        rules=rules,
        rules_reason=_text(config, "rules_reason", "config.rules_reason"),
        active_summary=_active_summary(config.get("active_summary")),
        breaker=_breaker(_mapping(config, "breaker", "config.breaker")),
    )


def _mapping(data: Mapping[str, Any], key: str, name: str | None = None) -> Mapping[str, Any]:
    value = data.get(key)
    if not isinstance(value, Mapping):
        raise BundleError(f"{name or key} must be an object")
    return value


def _text(data: Mapping[str, Any], key: str, name: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise BundleError(f"{name} must be a string")
    return value


def _int(data: Mapping[str, Any], key: str, name: str, *, minimum: int) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise BundleError(f"{name} must be an integer >= {minimum}")
    return value


def _messages(value: Any) -> tuple[Message, ...]:
    if not isinstance(value, list):
        raise BundleError("messages must be a list of message objects")
    for position, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise BundleError(f"message {position} is not an object")
        try:
            messages_from_dicts([item], strict=True)
        except UnknownMessageType as exc:
            raise BundleError(f"message {position}: {exc} (expected human, ai, tool or system)") from None
    return messages_from_dicts(value, strict=True)


# Each setting's smallest value, as the plan's flags accept them (0: nothing protected / keep nothing).
_MINIMUM = {"protect_recent": 0, "keep_recent_tokens": 0, "reserve_tokens": 0}


def _settings(data: Mapping[str, Any]) -> MemorySettings:
    values: dict[str, Any] = {}
    for field in fields(MemorySettings):
        name = f"config.settings.{field.name}"
        if field.name not in data:
            raise BundleError(f"{name} is missing")
        if field.name == "threshold":
            value = data[field.name]
            ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
            if not ok or value < 0:
                raise BundleError(f"{name} must be a number >= 0")
            values[field.name] = float(value)
        elif field.name == "fixed_trigger_tokens":
            values[field.name] = None if data[field.name] is None else _int(data, field.name, name, minimum=1)
        else:
            values[field.name] = _int(data, field.name, name, minimum=_MINIMUM.get(field.name, 1))
    unknown = sorted(set(data) - {f.name for f in fields(MemorySettings)})
    if unknown:
        raise BundleError(f"config.settings: unknown setting {unknown[0]!r}")
    return MemorySettings(**values)


def _active_summary(value: Any) -> ActiveSummary | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise BundleError("config.active_summary must be an object or null")
    text = _text(value, "text", "config.active_summary.text")
    return ActiveSummary(
        text, _int(value, "compact_up_to_index", "config.active_summary.compact_up_to_index", minimum=0)
    )


def _breaker(data: Mapping[str, Any]) -> BreakerState:
    failures = _int(data, "failure_count", "config.breaker.failure_count", minimum=0)
    is_open = data.get("open")
    if not isinstance(is_open, bool):
        raise BundleError("config.breaker.open must be true or false")
    return BreakerState(failures, is_open)

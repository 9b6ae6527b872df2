"""MemorySettings from one runtime.json-shaped document, the way Mycel's middleware would receive them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core.config.model import ConfigProblem, Severity
from memory_core.config.schema import KEY_SPECS, LEGACY_TOP_LEVEL_KEYS, _Invalid, coerce_value
from memory_core.settings import DEFAULT_CONTEXT_LIMIT, MemorySettings

_MEMORY_FIELDS: Mapping[str, str] = {
    "soft_trim_chars": "memory.pruning.soft_trim_chars",
    "hard_clear_threshold": "memory.pruning.hard_clear_threshold",
    "protect_recent": "memory.pruning.protect_recent",
    "reserve_tokens": "memory.compaction.reserve_tokens",
    "keep_recent_tokens": "memory.compaction.keep_recent_tokens",
}


def lookup(document: Mapping[str, Any], key_path: str) -> tuple[bool, Any]:
    """(found, value) for a dotted key path in a nested document."""
    node: Any = document
    for part in key_path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def settings_from_document(
    document: Mapping[str, Any], *, context_limit: int | None = None
) -> tuple[MemorySettings, list[ConfigProblem]]:
    """MemorySettings from memory.pruning.* / memory.compaction.* (Mycel's defaults where absent or invalid).

    context_limit wins over the document's runtime.context_limit; with neither, Mycel's 128000 fallback.
    """
    problems: list[ConfigProblem] = []
    values: dict[str, Any] = {}
    for field_name, key_path in _MEMORY_FIELDS.items():
        found, raw = lookup(document, key_path)
        values[field_name] = KEY_SPECS[key_path].default
        if not found:
            continue
        value, found_problems = coerce_value(key_path, raw)
        problems.extend(found_problems)
        if value is not None and not isinstance(value, _Invalid):
            values[field_name] = value
    for name in LEGACY_TOP_LEVEL_KEYS:
        if name in document:
            problems.append(
                ConfigProblem(
                    severity=Severity.WARNING,
                    key_path=name,
                    message=f"Top-level {name!r} is ignored by Mycel (its own defaults file sets it first); "
                    f"write it as runtime.{name}.",
                )
            )
    limit = context_limit
    if limit is None:
        found, raw = lookup(document, "runtime.context_limit")
        if found:
            value, found_problems = coerce_value("runtime.context_limit", raw)
            problems.extend(found_problems)
            if isinstance(value, int) and value > 0:
                limit = value
    return MemorySettings(context_limit=limit or DEFAULT_CONTEXT_LIMIT, **values), problems

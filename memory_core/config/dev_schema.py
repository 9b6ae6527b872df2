"""Mycel dev's memory config schema as data, and its strict checks (reference mycel-dev.md §4.8).

Dev's Pydantic models forbid unknown keys (extra="forbid") and take flags only as real booleans
(StrictBool); integers stay lax (Pydantic turns "20", 20.0 and true into ints) but every one must be > 0.
A failed check is not a warning on dev: the agent does not start. The messages name the key and the rule
the way Pydantic words it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memory_core.config.model import ConfigLayerName, ConfigProblem, Severity
from memory_core.config.schema import INVALID, LEGACY_TOP_LEVEL_KEYS, KeySpec, ValueKind

PRUNING = "memory.pruning"
COMPACTION = "memory.compaction"
TRIGGER_TOKENS = "memory.compaction.trigger_tokens"

DEV_KEY_SPECS: Mapping[str, KeySpec] = {
    f"{PRUNING}.enabled": KeySpec(kind=ValueKind.BOOL, default=True),
    f"{PRUNING}.soft_trim_chars": KeySpec(kind=ValueKind.INT, default=3000, gt=0),
    f"{PRUNING}.hard_clear_threshold": KeySpec(kind=ValueKind.INT, default=10000, gt=0),
    f"{PRUNING}.protect_recent": KeySpec(kind=ValueKind.INT, default=3, gt=0),
    f"{PRUNING}.trim_tool_results": KeySpec(kind=ValueKind.BOOL, default=True),
    f"{COMPACTION}.enabled": KeySpec(kind=ValueKind.BOOL, default=True),
    f"{COMPACTION}.reserve_tokens": KeySpec(kind=ValueKind.INT, default=16384, gt=0),
    f"{COMPACTION}.keep_recent_tokens": KeySpec(kind=ValueKind.INT, default=20000, gt=0),
    f"{COMPACTION}.min_messages": KeySpec(kind=ValueKind.INT, default=20, gt=0),
    TRIGGER_TOKENS: KeySpec(
        kind=ValueKind.INT,
        default=None,
        nullable=True,
        gt=0,
        description="Absolute token count above which dev compacts; null: int(0.7 x the context limit).",
    ),
}

# The keys an agent's compact_json may hold: it is merged into memory.compaction and nowhere else.
COMPACT_JSON_KEYS: tuple[str, ...] = tuple(
    key.removeprefix(COMPACTION + ".") for key in DEV_KEY_SPECS if key.startswith(COMPACTION + ".")
)

# Top-level sections dev's settings declare; only memory is modelled here, the others are not memory's.
_DEV_TOP_LEVEL = frozenset({"runtime", "memory", "tools", "mcp", "system_prompt", "workspace_root"})

# Keys carried over from Mycel main (which reads some and ignores others), and what to do on dev instead.
_MAIN_ERA_RATIO = (
    "a Mycel main-era key (main ignores it too: its ratio is fixed at 0.7); on dev set trigger_tokens"
)
MAIN_ONLY_HINTS: Mapping[str, str] = {
    f"{COMPACTION}.threshold": _MAIN_ERA_RATIO,
    f"{COMPACTION}.compaction_threshold": _MAIN_ERA_RATIO,
    f"{COMPACTION}.context_limit": "the context limit is runtime.context_limit (or the model's), not a compaction key",
    f"{COMPACTION}.spill_buffer": "the spill buffer is tools.spill_buffer, not a compaction key",
    "memory.spill_buffer": "the spill buffer is tools.spill_buffer",
    "context_limit": "only Mycel main reads it (it folds old-style top-level keys into runtime); "
    "dev has runtime.context_limit only",
}

_INT_TEXT = re.compile(r"^\s*[+-]?\d+\s*$")


def dev_defaults_document() -> dict[str, Any]:
    """Dev's config/defaults/runtime.json, memory part (a fresh copy each call)."""
    document: dict[str, Any] = {"memory": {"pruning": {}, "compaction": {}}}
    for key, spec in DEV_KEY_SPECS.items():
        section, name = key.split(".")[1:]
        document["memory"][section][name] = spec.default
    return document


def _refused(key_path: str, rule: str, layer: ConfigLayerName | None) -> ConfigProblem:
    message = (
        f"{key_path}: {rule}. Mycel dev refuses this config (ValidationError): the agent does not start."
    )
    return ConfigProblem(severity=Severity.ERROR, key_path=key_path, message=message, layer=layer)


def coerce_dev_value(
    key_path: str, value: Any, *, layer: ConfigLayerName | None = None
) -> tuple[Any, list[ConfigProblem]]:
    """The value dev's model would hold for one known key (INVALID when it refuses), and why."""
    spec = DEV_KEY_SPECS[key_path]
    if value is None:
        if spec.nullable:
            return None, []
        rule = (
            "Input should be a valid boolean"
            if spec.kind is ValueKind.BOOL
            else "Input should be a valid integer"
        )
        return INVALID, [_refused(key_path, f"null is not allowed ({rule})", layer)]
    if spec.kind is ValueKind.BOOL:
        if isinstance(value, bool):
            return value, []
        rule = f'{value!r} is not a boolean (StrictBool: only true or false, no "yes", 1 or "true")'
        return INVALID, [_refused(key_path, rule, layer)]
    lax_int = (
        isinstance(value, bool | int)
        or (isinstance(value, float) and value.is_integer())
        or (isinstance(value, str) and _INT_TEXT.match(value) is not None)
    )
    number = int(value) if lax_int else None
    if number is None:
        return INVALID, [
            _refused(key_path, f"{value!r} is not an integer (Input should be a valid integer)", layer)
        ]
    if spec.gt is not None and number <= spec.gt:
        nullable = " or null" if spec.nullable else ""
        rule = f"{number} is not allowed: it must be an integer greater than {spec.gt:g}{nullable}"
        return INVALID, [_refused(key_path, rule, layer)]
    problems = []
    if not isinstance(value, int) or isinstance(value, bool):
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path=key_path,
                message=f"{key_path}: {value!r} is read as {number} (Pydantic's lax integers); write {number}.",
                layer=layer,
            )
        )
    return number, problems


def _unknown(key_path: str, layer: ConfigLayerName | None) -> ConfigProblem:
    hint = MAIN_ONLY_HINTS.get(key_path)
    rule = "unknown key (Extra inputs are not permitted)" + (f"; {hint}" if hint else "")
    return _refused(key_path, rule, layer)


def dev_document_problems(
    document: Mapping[str, Any], *, layer: ConfigLayerName | None
) -> list[ConfigProblem]:
    """Dev's structural refusals for a settings-shaped document: unknown keys, main's top-level keys.

    Values of known keys are checked by coerce_dev_value when the layers are merged.
    """
    problems: list[ConfigProblem] = []
    for key, value in document.items():
        if key in LEGACY_TOP_LEVEL_KEYS:
            hint = MAIN_ONLY_HINTS.get(
                key, "only Mycel main reads it (it folds old-style top-level keys into runtime)"
            )
            problems.append(
                _refused(key, f"unknown top-level key (Extra inputs are not permitted); {hint}", layer)
            )
        elif key not in _DEV_TOP_LEVEL:
            problems.append(_unknown(key, layer))
        elif key == "memory":
            problems.extend(_memory_problems(value, layer))
    return problems


def compact_json_problems(compact_json: Any, *, layer: ConfigLayerName | None) -> list[ConfigProblem]:
    """Dev's refusals for an agent's compact_json (merged as memory.compaction): it must be an object of
    compaction keys."""
    if not isinstance(compact_json, Mapping):
        return [
            _refused(
                COMPACTION, f"compact_json must be a JSON object, not {type(compact_json).__name__}", layer
            )
        ]
    return _section_problems(compact_json, COMPACTION, layer)


def _memory_problems(memory: Any, layer: ConfigLayerName | None) -> list[ConfigProblem]:
    if not isinstance(memory, Mapping):
        return [_refused("memory", "must be a JSON object", layer)]
    problems: list[ConfigProblem] = []
    for key, value in memory.items():
        path = f"memory.{key}"
        if path in (PRUNING, COMPACTION):
            if not isinstance(value, Mapping):
                problems.append(_refused(path, "must be a JSON object", layer))
            else:
                problems.extend(_section_problems(value, path, layer))
        else:
            problems.append(_unknown(path, layer))
    return problems


def _section_problems(
    section: Mapping[str, Any], prefix: str, layer: ConfigLayerName | None
) -> list[ConfigProblem]:
    return [_unknown(f"{prefix}.{key}", layer) for key in section if f"{prefix}.{key}" not in DEV_KEY_SPECS]

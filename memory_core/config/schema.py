"""Mycel's runtime.json keys, their defaults and Pydantic's checks, as data (reference §4.2).

validate_value() answers for one key the way Mycel's schema would, plus what Mycel then does with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from memory_core.config.model import ConfigProblem, Severity


class ValueKind(StrEnum):
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    OBJECT = "object"
    STR_LIST = "str_list"
    INT_MAP = "int_map"  # tool name -> int
    MODE_MAP = "mode_map"  # tool name -> "inline" | "deferred"


@dataclass(frozen=True, slots=True, kw_only=True)
class KeySpec:
    """One leaf key Mycel's schema declares, with the check Pydantic applies."""

    kind: ValueKind
    default: Any
    nullable: bool = False
    gt: float | None = None
    ge: float | None = None
    le: float | None = None
    unused: str = ""  # non-empty: what Mycel's code does instead of reading it
    description: str = ""


# Mycel's old-style runtime keys: the loader folds top-level copies into "runtime" only when unset,
# and the system defaults file sets all of them at top level first (reference §4.1).
LEGACY_TOP_LEVEL_KEYS: tuple[str, ...] = (
    "context_limit",
    "enable_audit_log",
    "allowed_extensions",
    "block_dangerous_commands",
    "block_network_commands",
    "queue_mode",
    "temperature",
    "max_tokens",
    "model_kwargs",
)

DEEP_MERGED_SECTIONS: tuple[str, ...] = ("runtime", "memory", "tools")

DEFAULT_SPILL_THRESHOLDS: Mapping[str, int] = {
    "Grep": 20_000,
    "Glob": 20_000,
    "run_command": 50_000,
    "command_status": 50_000,
    "Fetch": 50_000,
}

_ENABLED_NOTE = (
    "Mycel only checks pruning.enabled OR compaction.enabled to decide whether the memory middleware "
    "exists at all: false here alone disables nothing; both false removes pruning and compaction and "
    "makes Mycel's agent construction fail (AttributeError in LeonAgent.__init__)."
)

KEY_SPECS: Mapping[str, KeySpec] = {
    "runtime.temperature": KeySpec(kind=ValueKind.FLOAT, default=None, nullable=True, ge=0.0, le=2.0),
    "runtime.max_tokens": KeySpec(kind=ValueKind.INT, default=None, nullable=True, gt=0),
    "runtime.model_kwargs": KeySpec(kind=ValueKind.OBJECT, default={}),
    "runtime.context_limit": KeySpec(
        kind=ValueKind.INT,
        default=0,
        ge=0,
        description="Context window in tokens; 0 = look the model up (fallback 128,000).",
    ),
    "runtime.enable_audit_log": KeySpec(kind=ValueKind.BOOL, default=True),
    "runtime.allowed_extensions": KeySpec(kind=ValueKind.STR_LIST, default=None, nullable=True),
    "runtime.block_dangerous_commands": KeySpec(kind=ValueKind.BOOL, default=True),
    "runtime.block_network_commands": KeySpec(kind=ValueKind.BOOL, default=False),
    "runtime.queue_mode": KeySpec(
        kind=ValueKind.STR,
        default="steer",
        unused="Deprecated: Mycel copies it onto the agent and never uses it.",
    ),
    "memory.pruning.enabled": KeySpec(kind=ValueKind.BOOL, default=True, description=_ENABLED_NOTE),
    "memory.pruning.soft_trim_chars": KeySpec(
        kind=ValueKind.INT,
        default=3000,
        gt=0,
        description="Tool results longer than this (characters) are trimmed to head + tail.",
    ),
    "memory.pruning.hard_clear_threshold": KeySpec(
        kind=ValueKind.INT,
        default=10000,
        gt=0,
        description="Tool results longer than this (characters) are replaced by a one-line note.",
    ),
    "memory.pruning.protect_recent": KeySpec(
        kind=ValueKind.INT,
        default=3,
        gt=0,
        description="Results of the last N tool-calling AI steps are never pruned.",
    ),
    "memory.pruning.trim_tool_results": KeySpec(
        kind=ValueKind.BOOL,
        default=True,
        unused="Mycel never reads trim_tool_results; pruning happens regardless of it.",
    ),
    "memory.compaction.enabled": KeySpec(kind=ValueKind.BOOL, default=True, description=_ENABLED_NOTE),
    "memory.compaction.reserve_tokens": KeySpec(
        kind=ValueKind.INT,
        default=16384,
        gt=0,
        unused="Mycel stores reserve_tokens on its compactor but never uses it in any calculation.",
    ),
    "memory.compaction.keep_recent_tokens": KeySpec(
        kind=ValueKind.INT,
        default=20000,
        gt=0,
        description="Newest messages worth this many estimated tokens are kept verbatim "
        "(capped at 0.4 x the context limit).",
    ),
    "memory.compaction.min_messages": KeySpec(
        kind=ValueKind.INT,
        default=20,
        gt=0,
        unused="Mycel never reads min_messages: compaction does not wait for a message count.",
    ),
    "tools.spill_buffer.enabled": KeySpec(kind=ValueKind.BOOL, default=True),
    "tools.spill_buffer.default_threshold": KeySpec(
        kind=ValueKind.INT,
        default=50_000,
        gt=0,
        description="Tool outputs larger than this many UTF-8 bytes are written to a file.",
    ),
    "tools.spill_buffer.thresholds": KeySpec(kind=ValueKind.INT_MAP, default=dict(DEFAULT_SPILL_THRESHOLDS)),
    "tools.tool_modes": KeySpec(kind=ValueKind.MODE_MAP, default={}),
}

# Keys people write that Mycel main does not have at all, with what happens instead.
MISPLACED_KEYS: Mapping[str, str] = {
    "memory.spill_buffer": "There is no memory.spill_buffer: Mycel reads the spill buffer from tools.spill_buffer.",
    "memory.compaction.trigger_tokens": "trigger_tokens exists only on Mycel's dev branch; main ignores it and "
    "compacts above int(context limit x 0.7).",
    "memory.compaction.threshold": "The compaction threshold is fixed at 0.7 in Mycel's code; this key is ignored.",
    "memory.compaction.summary_model": "Mycel summarises with the thread's own model; summary_model is ignored.",
}

# Mycel main's real tool names (core/tools/*/service.py) and the stale names its spill code uses.
STALE_TOOL_NAMES: Mapping[str, str] = {
    "run_command": "Bash",
    "command_status": "Bash",
    "Fetch": "WebFetch",
    "read_file": "Read",
}

_BOOL_STRINGS = {
    "true": True,
    "false": False,
    "yes": True,
    "no": False,
    "on": True,
    "off": False,
    "t": True,
    "f": False,
    "y": True,
    "n": False,
    "1": True,
    "0": False,
}


class _Invalid:
    """Marker for a value Pydantic would reject."""


INVALID = _Invalid()


@cache
def system_defaults_document() -> Mapping[str, Any]:
    """Our bundled copy of Mycel main's config/defaults/runtime.json (old-style keys at top level)."""
    text = resources.files("memory_core").joinpath("data/runtime_defaults.json").read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):  # pragma: no cover - bundled data
        raise TypeError("runtime_defaults.json must hold an object")
    return data


def spec_for(key_path: str) -> KeySpec | None:
    return KEY_SPECS.get(key_path)


def _problem(severity: Severity, key_path: str, message: str) -> ConfigProblem:
    return ConfigProblem(severity=severity, key_path=key_path, message=message)


def _coerce_int(key_path: str, raw: Any, problems: list[ConfigProblem]) -> int | _Invalid:
    if isinstance(raw, bool):
        problems.append(
            _problem(Severity.WARNING, key_path, f"{raw!r} is a boolean; Mycel reads it as {int(raw)}.")
        )
        return int(raw)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and math.isfinite(raw) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str):
        try:
            value = int(raw.strip())
        except ValueError:
            pass
        else:
            problems.append(
                _problem(
                    Severity.WARNING, key_path, f"{raw!r} is text; Mycel converts it to the number {value}."
                )
            )
            return value
    problems.append(
        _problem(Severity.ERROR, key_path, f"{raw!r} is not a whole number; Mycel would refuse the config.")
    )
    return INVALID


def _coerce_float(key_path: str, raw: Any, problems: list[ConfigProblem]) -> float | _Invalid:
    if isinstance(raw, int | float) and not isinstance(raw, bool) and math.isfinite(raw):
        return float(raw)
    if isinstance(raw, str):
        try:
            value = float(raw.strip())
        except ValueError:
            pass
        else:
            if math.isfinite(value):
                problems.append(
                    _problem(
                        Severity.WARNING,
                        key_path,
                        f"{raw!r} is text; Mycel converts it to the number {value}.",
                    )
                )
                return value
    problems.append(
        _problem(Severity.ERROR, key_path, f"{raw!r} is not a number; Mycel would refuse the config.")
    )
    return INVALID


def _coerce_bool(key_path: str, raw: Any, problems: list[ConfigProblem]) -> bool | _Invalid:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        problems.append(
            _problem(Severity.WARNING, key_path, f"{raw} is a number; Mycel reads it as {bool(raw)}.")
        )
        return bool(raw)
    if isinstance(raw, str) and raw.strip().lower() in _BOOL_STRINGS:
        value = _BOOL_STRINGS[raw.strip().lower()]
        problems.append(_problem(Severity.WARNING, key_path, f"{raw!r} is text; Mycel reads it as {value}."))
        return value
    problems.append(
        _problem(Severity.ERROR, key_path, f"{raw!r} is not true/false; Mycel would refuse the config.")
    )
    return INVALID


def _check_bounds(key_path: str, spec: KeySpec, value: float, problems: list[ConfigProblem]) -> bool:
    if spec.gt is not None and not value > spec.gt:
        problems.append(
            _problem(
                Severity.ERROR, key_path, f"Must be greater than {spec.gt:g}; Mycel would refuse {value:g}."
            )
        )
        return False
    if spec.ge is not None and not value >= spec.ge:
        problems.append(
            _problem(Severity.ERROR, key_path, f"Must be at least {spec.ge:g}; Mycel would refuse {value:g}.")
        )
        return False
    if spec.le is not None and not value <= spec.le:
        problems.append(
            _problem(Severity.ERROR, key_path, f"Must be at most {spec.le:g}; Mycel would refuse {value:g}.")
        )
        return False
    return True


def _coerce_map(key_path: str, spec: KeySpec, raw: Any, problems: list[ConfigProblem]) -> Any:
    if not isinstance(raw, Mapping):
        problems.append(
            _problem(Severity.ERROR, key_path, "Must be a JSON object; Mycel would refuse the config.")
        )
        return INVALID
    result: dict[str, Any] = {}
    for name, item in raw.items():
        item_path = f"{key_path}.{name}"
        if spec.kind is ValueKind.INT_MAP:
            value: Any = _coerce_int(item_path, item, problems)
            if isinstance(value, int) and value <= 0:
                problems.append(
                    _problem(
                        Severity.WARNING,
                        item_path,
                        f"Mycel accepts {value} here (no check on per-tool thresholds), so every non-empty "
                        f"output of {name} would be spilled to a file.",
                    )
                )
        else:
            value = item
            if item not in ("inline", "deferred"):
                problems.append(
                    _problem(Severity.ERROR, item_path, f'{item!r} must be "inline" or "deferred".')
                )
                value = INVALID
        if isinstance(value, _Invalid):
            return INVALID
        result[str(name)] = value
    return result


def coerce_value(key_path: str, raw: Any) -> tuple[Any, list[ConfigProblem]]:
    """The value Mycel's schema would end up with for one key (or INVALID), and every finding."""
    problems: list[ConfigProblem] = []
    if key_path in MISPLACED_KEYS:
        return raw, [_problem(Severity.WARNING, key_path, MISPLACED_KEYS[key_path])]
    if key_path.startswith("tools.spill_buffer.thresholds."):
        tool = key_path.removeprefix("tools.spill_buffer.thresholds.")
        single = _coerce_map(
            "tools.spill_buffer.thresholds", KEY_SPECS["tools.spill_buffer.thresholds"], {tool: raw}, problems
        )
        return (INVALID if isinstance(single, _Invalid) else single[tool]), problems
    spec = KEY_SPECS.get(key_path)
    if spec is None:
        return raw, [
            _problem(Severity.WARNING, key_path, "Mycel does not know this key and silently ignores it.")
        ]
    if raw is None:
        if spec.nullable:
            return None, problems
        problems.append(
            _problem(
                Severity.WARNING,
                key_path,
                "null has no effect: Mycel drops null values, so the lower layer's value (or the default) stays.",
            )
        )
        return None, problems
    value: Any
    if spec.kind is ValueKind.INT:
        value = _coerce_int(key_path, raw, problems)
    elif spec.kind is ValueKind.FLOAT:
        value = _coerce_float(key_path, raw, problems)
    elif spec.kind is ValueKind.BOOL:
        value = _coerce_bool(key_path, raw, problems)
    elif spec.kind is ValueKind.STR:
        value = raw if isinstance(raw, str) else INVALID
        if value is INVALID:
            problems.append(
                _problem(Severity.ERROR, key_path, f"{raw!r} is not text; Mycel would refuse the config.")
            )
    elif spec.kind is ValueKind.OBJECT:
        value = dict(raw) if isinstance(raw, Mapping) else INVALID
        if value is INVALID:
            problems.append(
                _problem(Severity.ERROR, key_path, "Must be a JSON object; Mycel would refuse the config.")
            )
    elif spec.kind is ValueKind.STR_LIST:
        ok = isinstance(raw, list) and all(isinstance(item, str) for item in raw)
        value = list(raw) if ok else INVALID
        if not ok:
            problems.append(_problem(Severity.ERROR, key_path, "Must be a list of text values or null."))
    else:
        value = _coerce_map(key_path, spec, raw, problems)
    if (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not _check_bounds(key_path, spec, value, problems)
    ):
        value = INVALID
    if not isinstance(value, _Invalid) and spec.unused:
        problems.append(_problem(Severity.WARNING, key_path, spec.unused))
    if value is False and key_path in ("memory.pruning.enabled", "memory.compaction.enabled"):
        problems.append(_problem(Severity.WARNING, key_path, _ENABLED_NOTE))
    return value, problems


def validate_value(key_path: str, raw: Any) -> ConfigProblem | None:
    """The most serious finding for one key's value (for the editor form), or None when all is well."""
    _, problems = coerce_value(key_path, raw)
    order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
    return min(problems, key=lambda p: order[p.severity]) if problems else None

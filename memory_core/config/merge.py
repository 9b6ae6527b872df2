"""Mycel's layered runtime.json merge (reference §4.1), with the layer each effective value came from."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from memory_core.config.checks import combination_problems
from memory_core.config.model import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    EffectiveValue,
    Severity,
    SpillBufferSettings,
)
from memory_core.config.schema import (
    DEEP_MERGED_SECTIONS,
    INVALID,
    KEY_SPECS,
    LEGACY_TOP_LEVEL_KEYS,
    MISPLACED_KEYS,
    KeySpec,
    coerce_value,
    system_defaults_document,
)
from memory_core.memory_settings import DEFAULT_CONTEXT_LIMIT, MemorySettings

_PRECEDENCE = {name: rank for rank, name in enumerate(ConfigLayerName)}
# Top-level keys Mycel's settings know but whose content the dashboard does not model.
_OTHER_TOP_LEVEL = frozenset({"mcp", "skills", "system_prompt", "workspace_root"})


def system_layer() -> ConfigLayer:
    """Mycel's own defaults file (our bundled copy) as the lowest layer."""
    return ConfigLayer(
        name=ConfigLayerName.SYSTEM,
        document=system_defaults_document(),
        source="Mycel defaults (config/defaults/runtime.json)",
    )


def _is_spec_prefix(key_path: str) -> bool:
    prefix = key_path + "."
    return any(k.startswith(prefix) for k in (*KEY_SPECS, *MISPLACED_KEYS))


def _walk(node: Mapping[str, Any], prefix: str) -> Iterator[tuple[str, Any, bool]]:
    """(key path, value, known) for every leaf under a deep-merged section."""
    for key, value in node.items():
        path = f"{prefix}.{key}"
        if path in KEY_SPECS or path in MISPLACED_KEYS:
            yield path, value, True
        elif isinstance(value, Mapping) and _is_spec_prefix(path):
            yield from _walk(value, path)
        elif path.startswith("tools.") and not path.startswith("tools.spill_buffer"):
            continue  # Mycel's other tool settings: real keys, just not memory-related
        else:
            yield path, value, False


def layer_problems(layer: ConfigLayer) -> list[ConfigProblem]:
    """Structural findings for one file: unknown keys, old-style top-level keys, ignored nulls, bad types."""
    problems: list[ConfigProblem] = []

    def add(severity: Severity, key_path: str, message: str) -> None:
        problems.append(
            ConfigProblem(severity=severity, key_path=key_path, message=message, layer=layer.name)
        )

    for key, value in layer.document.items():
        if key in DEEP_MERGED_SECTIONS:
            if not isinstance(value, Mapping):
                add(Severity.ERROR, key, f"{key!r} must be a JSON object; Mycel would refuse the config.")
                continue
            for path, leaf, known in _walk(value, key):
                if not known:
                    add(Severity.WARNING, path, "Mycel does not know this key and silently ignores it.")
                elif leaf is None:
                    add(
                        Severity.WARNING,
                        path,
                        "null here has no effect: Mycel's merge skips nulls, so a lower layer's value "
                        "(or Mycel's default) stays.",
                    )
        elif key in LEGACY_TOP_LEVEL_KEYS:
            if layer.name is not ConfigLayerName.SYSTEM:
                add(
                    Severity.WARNING,
                    key,
                    f"Top-level {key!r} is silently ignored: Mycel folds old-style keys into runtime only when "
                    f"unset, and its own defaults file already sets {key!r} at top level. "
                    f'Write it nested instead: {{"runtime": {{"{key}": ...}}}}.',
                )
        elif key not in _OTHER_TOP_LEVEL:
            add(Severity.WARNING, key, "Mycel does not know this top-level key and silently ignores it.")
    return problems


def _deep_merge(
    target: dict[str, Any],
    source: Mapping[str, Any],
    prefix: str,
    layer: ConfigLayerName,
    provenance: dict[str, ConfigLayerName],
) -> None:
    # Mirrors Mycel: nested objects merge key by key, None in a higher tier is skipped.
    for key, value in source.items():
        path = f"{prefix}.{key}"
        if value is None:
            continue
        if isinstance(value, Mapping) and isinstance(target.get(key), Mapping):
            merged = dict(target[key])
            _deep_merge(merged, value, path, layer, provenance)
            target[key] = merged
        elif isinstance(value, Mapping):
            target[key] = {}
            provenance[path] = layer  # an empty object still counts as set
            _deep_merge(target[key], value, path, layer, provenance)
        else:
            target[key] = value
            provenance[path] = layer


def _layer_for(key_path: str, provenance: Mapping[str, ConfigLayerName]) -> ConfigLayerName | None:
    prefix = key_path + "."
    found = [layer for path, layer in provenance.items() if path == key_path or path.startswith(prefix)]
    return max(found, key=_PRECEDENCE.__getitem__) if found else None


def _lookup(document: Mapping[str, Any], key_path: str) -> tuple[bool, Any]:
    node: Any = document
    for part in key_path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _ordered(layers: Sequence[ConfigLayer]) -> list[ConfigLayer]:
    ordered = sorted(layers, key=lambda layer: _PRECEDENCE[layer.name])  # stable within a tier
    if not any(layer.name is ConfigLayerName.SYSTEM for layer in ordered):
        ordered.insert(0, system_layer())
    return ordered


def _effective_value(
    key_path: str, spec: KeySpec, merged: Mapping[str, Any], layer: ConfigLayerName | None
) -> tuple[Any, ConfigLayerName, list[ConfigProblem]]:
    found, raw = _lookup(merged, key_path)
    if not found or layer is None:
        return spec.default, ConfigLayerName.SYSTEM, []
    value, problems = coerce_value(key_path, raw)
    problems = [_with_layer(p, layer) for p in problems]
    if layer is ConfigLayerName.SYSTEM:
        problems = [_demote(p) for p in problems]
    if value is INVALID:
        note = f" Until it is fixed the dashboard uses Mycel's default ({spec.default!r})."
        problems = [
            ConfigProblem(severity=p.severity, key_path=p.key_path, message=p.message + note, layer=p.layer)
            if p.severity is Severity.ERROR
            else p
            for p in problems
        ]
        return spec.default, layer, problems
    return value, layer, problems


def _with_layer(problem: ConfigProblem, layer: ConfigLayerName) -> ConfigProblem:
    return ConfigProblem(
        severity=problem.severity, key_path=problem.key_path, message=problem.message, layer=layer
    )


def _demote(problem: ConfigProblem) -> ConfigProblem:
    # Mycel's own defaults: the same facts, but nobody chose them, so they are notes, not warnings.
    severity = Severity.INFO if problem.severity is Severity.WARNING else problem.severity
    return ConfigProblem(
        severity=severity, key_path=problem.key_path, message=problem.message, layer=problem.layer
    )


def merge_layers(layers: Sequence[ConfigLayer], *, context_limit: int | None = None) -> EffectiveConfig:
    """Merge runtime.json layers as Mycel's loader does; every value carries the layer it came from.

    Mycel's system defaults are added when no system layer is given. context_limit (e.g. from
    resolve_context_limit) wins over runtime.context_limit; with neither, Mycel's 128000 fallback.
    """
    ordered = _ordered(layers)
    problems: list[ConfigProblem] = []
    merged: dict[str, Any] = {}
    provenance: dict[str, ConfigLayerName] = {}
    for layer in ordered:
        problems.extend(layer_problems(layer))
        for key, value in layer.document.items():
            if key in DEEP_MERGED_SECTIONS and isinstance(value, Mapping):
                section = dict(merged.get(key) or {})
                _deep_merge(section, value, key, layer.name, provenance)
                merged[key] = section
            elif key not in DEEP_MERGED_SECTIONS and key not in LEGACY_TOP_LEVEL_KEYS and value is not None:
                merged[key] = value  # mcp, skills, system_prompt: the highest tier that has it wins
    runtime = dict(merged.get("runtime") or {})
    for layer in ordered:  # the old-style fold: system first, so the defaults file always wins
        for key in LEGACY_TOP_LEVEL_KEYS:
            if key in layer.document and key not in runtime and layer.document[key] is not None:
                runtime[key] = layer.document[key]
                provenance[f"runtime.{key}"] = layer.name
    merged["runtime"] = runtime

    values: dict[str, EffectiveValue] = {}
    for key_path, spec in KEY_SPECS.items():
        value, layer_name, found = _effective_value(key_path, spec, merged, _layer_for(key_path, provenance))
        problems.extend(found)
        values[key_path] = EffectiveValue(key_path=key_path, value=value, layer=layer_name)
    thresholds = values["tools.spill_buffer.thresholds"].value
    for tool, threshold in thresholds.items():
        path = f"tools.spill_buffer.thresholds.{tool}"
        values[path] = EffectiveValue(
            key_path=path, value=threshold, layer=_layer_for(path, provenance) or ConfigLayerName.SYSTEM
        )

    limit = context_limit
    if limit is None:
        configured = values["runtime.context_limit"].value
        limit = configured if isinstance(configured, int) and configured > 0 else DEFAULT_CONTEXT_LIMIT
    settings = MemorySettings(
        soft_trim_chars=values["memory.pruning.soft_trim_chars"].value,
        hard_clear_threshold=values["memory.pruning.hard_clear_threshold"].value,
        protect_recent=values["memory.pruning.protect_recent"].value,
        reserve_tokens=values["memory.compaction.reserve_tokens"].value,
        keep_recent_tokens=values["memory.compaction.keep_recent_tokens"].value,
        context_limit=limit,
    )
    spill = SpillBufferSettings(
        enabled=values["tools.spill_buffer.enabled"].value,
        default_threshold=values["tools.spill_buffer.default_threshold"].value,
        thresholds=thresholds,
    )
    problems.extend(
        combination_problems(values, settings=settings, context_limit_given=context_limit is not None)
    )
    return EffectiveConfig(
        document=merged,
        values=values,
        settings=settings,
        spill=spill,
        problems=tuple(problems),
        sources={layer.name: layer.source for layer in ordered},
    )

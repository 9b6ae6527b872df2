"""Mycel dev's memory config layers: repo defaults → the agent's compact_json → constructor overrides.

Dev reads no runtime.json (commit 0b1c0034, reference mycel-dev.md §4.8); the agent's
`agent.agent_configs.compact_json` is deep-merged into memory.compaction. Files main would read are
reported as ignored, never merged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_core.config.dev_schema import (
    COMPACTION,
    DEV_KEY_SPECS,
    TRIGGER_TOKENS,
    coerce_dev_value,
    compact_json_problems,
    dev_defaults_document,
    dev_document_problems,
)
from memory_core.config.model import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    EffectiveValue,
    Severity,
    SpillBufferSettings,
)
from memory_core.config.schema import INVALID
from memory_core.memory_settings import DEFAULT_CONTEXT_LIMIT, MemorySettings

DEFAULTS_SOURCE = "Mycel dev defaults (config/defaults/runtime.json)"
IGNORED_FILE_NOTE = "Mycel dev does not read this file"


def compact_json_source(agent_id: str) -> str:
    """Where an agent's compact_json lives, in the words the page and the CLI use."""
    return f"agent.agent_configs.compact_json for agent {agent_id}"


@dataclass(frozen=True, slots=True, kw_only=True)
class IgnoredFile:
    """A runtime.json on disk that Mycel main would read and dev does not."""

    path: str
    document: Mapping[str, Any]


def _deep_merge(
    target: dict[str, Any],
    source: Mapping[str, Any],
    prefix: str,
    layer: ConfigLayerName,
    provenance: dict[str, ConfigLayerName],
    *,
    skip_nulls: bool,
) -> None:
    for key, value in source.items():
        path = f"{prefix}.{key}" if prefix else key
        if value is None and skip_nulls:
            continue  # dev's loader drops nulls (_remove_none_values) before validating
        if isinstance(value, Mapping) and isinstance(target.get(key), Mapping):
            merged = dict(target[key])
            _deep_merge(merged, value, path, layer, provenance, skip_nulls=skip_nulls)
            target[key] = merged
        else:
            target[key] = value
            provenance[path] = layer


def _ignored_file_problems(ignored: IgnoredFile) -> list[ConfigProblem]:
    problems = [
        ConfigProblem(
            severity=Severity.WARNING,
            key_path="",
            message=f"{ignored.path}: {IGNORED_FILE_NOTE} (it stopped loading runtime.json files); "
            "only Mycel main applies it.",
        )
    ]
    memory = ignored.document.get("memory")
    spill = (
        (ignored.document.get("tools") or {}).get("spill_buffer")
        if isinstance(ignored.document.get("tools"), Mapping)
        else None
    )
    named = [f"memory.{k}" for k in memory] if isinstance(memory, Mapping) else []
    if spill is not None:
        named.append("tools.spill_buffer")
    named += [k for k in ("context_limit",) if k in ignored.document]
    for key in named:
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path=key,
                message=f"{key} in {ignored.path} is read only by Mycel main; on dev, memory.compaction "
                "keys go in the agent's compact_json.",
            )
        )
    return problems


def merge_dev_layers(
    *,
    compact_json: Any = None,
    agent_id: str = "",
    overrides: Mapping[str, Any] | None = None,
    ignored_files: Sequence[IgnoredFile] = (),
    context_limit: int | None = None,
) -> EffectiveConfig:
    """Merge dev's layers; every value carries the layer it came from, every refusal names its key.

    compact_json None means the agent has none (defaults apply). A value dev refuses shows its default
    here, with the error saying that dev would not start the agent at all.
    """
    layers = [
        ConfigLayer(name=ConfigLayerName.SYSTEM, document=dev_defaults_document(), source=DEFAULTS_SOURCE)
    ]
    problems: list[ConfigProblem] = []
    if compact_json is not None:
        layers.append(
            ConfigLayer(
                name=ConfigLayerName.AGENT,
                document={"memory": {"compaction": compact_json}},
                source=compact_json_source(agent_id) if agent_id else "agent compact_json",
            )
        )
        problems.extend(compact_json_problems(compact_json, layer=ConfigLayerName.AGENT))
    if overrides:
        layers.append(ConfigLayer(name=ConfigLayerName.OVERRIDE, document=overrides, source="overrides"))
        problems.extend(dev_document_problems(overrides, layer=ConfigLayerName.OVERRIDE))
    for ignored in ignored_files:
        problems.extend(_ignored_file_problems(ignored))

    merged: dict[str, Any] = {}
    provenance: dict[str, ConfigLayerName] = {}
    for layer in layers:
        if layer.name is ConfigLayerName.AGENT and not isinstance(compact_json, Mapping):
            continue  # refused above; nothing of it can be merged
        # compact_json is merged as stored; only the loader's own documents lose their nulls
        _deep_merge(
            merged,
            layer.document,
            "",
            layer.name,
            provenance,
            skip_nulls=layer.name is not ConfigLayerName.AGENT,
        )

    values: dict[str, EffectiveValue] = {}
    for key_path, spec in DEV_KEY_SPECS.items():
        layer_name = provenance.get(key_path, ConfigLayerName.SYSTEM)
        raw = _lookup(merged, key_path, spec.default)
        value, found = coerce_dev_value(key_path, raw, layer=layer_name)
        problems.extend(found)
        if value is INVALID:
            value = spec.default
        values[key_path] = EffectiveValue(key_path=key_path, value=value, layer=layer_name)

    limit = context_limit if context_limit is not None else DEFAULT_CONTEXT_LIMIT
    settings = MemorySettings(
        soft_trim_chars=values["memory.pruning.soft_trim_chars"].value,
        hard_clear_threshold=values["memory.pruning.hard_clear_threshold"].value,
        protect_recent=values["memory.pruning.protect_recent"].value,
        reserve_tokens=values[f"{COMPACTION}.reserve_tokens"].value,
        keep_recent_tokens=values[f"{COMPACTION}.keep_recent_tokens"].value,
        context_limit=limit,
        fixed_trigger_tokens=values[TRIGGER_TOKENS].value,
    )
    return EffectiveConfig(
        document=merged,
        values=values,
        settings=settings,
        spill=SpillBufferSettings(),
        problems=tuple(problems),
        sources={layer.name: layer.source for layer in layers},
    )


def _lookup(document: Mapping[str, Any], key_path: str, default: Any) -> Any:
    node: Any = document
    for part in key_path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return node


def compact_json_with(current: Any, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The agent's compact_json with `changes` (compaction key -> value; None removes it) applied."""
    document = dict(current) if isinstance(current, Mapping) else {}
    for key, value in changes.items():
        name = key.removeprefix(COMPACTION + ".")
        if (
            value is None
        ):  # null and absent mean the same to dev: the default (for trigger_tokens, 0.7 x limit)
            document.pop(name, None)
        else:
            document[name] = value
    return document

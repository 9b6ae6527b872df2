"""The values memory_core.config hands out: layers, problems, effective values with provenance."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memory_core.config.redact import redact_secrets
from memory_core.memory_settings import MemorySettings


class ConfigLayerName(StrEnum):
    """Mycel's config tiers, lowest precedence first (main: reference §4.1; dev reads only system, agent, override)."""

    SYSTEM = "system"  # Mycel's config/defaults/runtime.json plus its schema defaults
    USER = "user"  # ~/.leon/runtime.json
    PROJECT = "project"  # <workspace>/.leon/runtime.json
    AGENT = "agent"  # Mycel dev only: agent.agent_configs.compact_json, deep-merged into memory.compaction
    OVERRIDE = "override"  # constructor / CLI overrides, merged last


class Severity(StrEnum):
    ERROR = "error"  # Mycel would refuse the file (Pydantic validation error)
    WARNING = "warning"  # accepted, but Mycel does something surprising with it
    INFO = "info"  # worth knowing, nothing wrong


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigProblem:
    """One finding about a key, worded as what Mycel's code actually does."""

    severity: Severity
    key_path: str  # dotted, e.g. "memory.pruning.soft_trim_chars"; "" for the whole document
    message: str
    layer: ConfigLayerName | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigLayer:
    """One runtime.json-shaped document and where it came from."""

    name: ConfigLayerName
    document: Mapping[str, Any]
    source: str = ""  # a path or a label, for display only


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectiveValue:
    key_path: str
    value: Any
    layer: ConfigLayerName


@dataclass(frozen=True, slots=True, kw_only=True)
class SpillBufferSettings:
    """tools.spill_buffer as Mycel's spill middleware reads it (reference §5)."""

    enabled: bool = True
    default_threshold: int = 50_000
    thresholds: Mapping[str, int] = field(
        default_factory=lambda: {
            "Grep": 20_000,
            "Glob": 20_000,
            "run_command": 50_000,
            "command_status": 50_000,
            "Fetch": 50_000,
        }
    )

    def threshold_for(self, tool_name: str) -> int:
        """Bytes above which Mycel spills this tool's output to a file."""
        return self.thresholds.get(tool_name, self.default_threshold)


@dataclass(frozen=True, slots=True, kw_only=True)
class EffectiveConfig:
    """The merged config Mycel would run with, each leaf value tagged with its layer."""

    document: Mapping[str, Any]  # the merged runtime.json document (nested form)
    values: Mapping[str, EffectiveValue]  # dotted key path -> value + layer
    settings: MemorySettings
    spill: SpillBufferSettings
    problems: tuple[ConfigProblem, ...]
    sources: Mapping[ConfigLayerName, str] = field(default_factory=dict)  # layer -> file it was read from

    def value(self, key_path: str) -> Any:
        return self.values[key_path].value

    def layer_of(self, key_path: str) -> ConfigLayerName:
        return self.values[key_path].layer

    @property
    def display_document(self) -> Mapping[str, Any]:
        """The merged document with secret-looking values hidden."""
        result: Mapping[str, Any] = redact_secrets(self.document)
        return result

    @property
    def errors(self) -> tuple[ConfigProblem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[ConfigProblem, ...]:
        return tuple(p for p in self.problems if p.severity is Severity.WARNING)

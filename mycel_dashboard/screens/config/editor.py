"""The Config screen's editor: which keys it offers, in which sections, and the proposal from the URL.

A proposal is a set of key → value pairs from the page's URL. It is applied as Mycel's highest layer
(overrides) on top of the files, so the what-if shows exactly what Mycel would run with; saving writes
the same pairs into the chosen layer file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memory_core.config import KEY_SPECS, ConfigLayerName, EffectiveConfig
from memory_core.config.schema import ValueKind

# The keys the editor offers, in page order, with the slider range (min, max, step) for numbers.
# Sliders are a convenience only: the number input beside each accepts any value Mycel accepts.
SLIDERS: Mapping[str, tuple[int, int, int]] = {
    "memory.pruning.soft_trim_chars": (100, 20_000, 100),
    "memory.pruning.hard_clear_threshold": (500, 100_000, 500),
    "memory.pruning.protect_recent": (1, 20, 1),
    "memory.compaction.keep_recent_tokens": (1_000, 200_000, 1_000),
    "memory.compaction.reserve_tokens": (1_024, 131_072, 1_024),
    "memory.compaction.min_messages": (1, 200, 1),
    "runtime.context_limit": (0, 1_000_000, 1_000),
    "tools.spill_buffer.default_threshold": (1_000, 500_000, 1_000),
}
TOGGLES: tuple[str, ...] = (
    "memory.pruning.enabled",
    "memory.pruning.trim_tool_results",
    "memory.compaction.enabled",
    "tools.spill_buffer.enabled",
)
THRESHOLD_SLIDER = (1_000, 500_000, 1_000)
SECTIONS: tuple[tuple[str, str], ...] = (
    ("memory.pruning.", "Pruning (layer 1: tool results at every model call)"),
    ("memory.compaction.", "Compaction (layer 2: summary of older history)"),
    ("runtime.", "Context limit"),
    ("tools.spill_buffer", "Spill buffer (large tool outputs to files)"),
)

# Where Mycel's documentation and its code part ways, for the settings on this screen (reference App. B).
DOC_VS_CODE: tuple[str, ...] = (
    "memory.compaction.min_messages is documented as the minimum history before compaction; Mycel's code "
    "never reads it — compaction fires whenever the estimate is above 70 % of the context limit.",
    "The compaction threshold is fixed at 0.7 in Mycel's code (agent construction passes 0.7); there is no "
    "key for it, so memory.compaction.threshold or trigger_tokens are ignored.",
    "pruning.enabled / compaction.enabled: the docs say false disables that layer. Mycel only checks whether "
    "either is true; one false alone changes nothing, and both false makes agent construction fail.",
    "trim_tool_results and reserve_tokens are accepted but never used.",
    'Old-style top-level keys (e.g. "context_limit": 50000 at the top of runtime.json, as in Mycel\'s '
    'examples) are ignored: only the nested form {"runtime": {"context_limit": …}} works. Saves here '
    "always write the nested form.",
    "protect_recent counts tool-calling AI steps, not tool messages; hard-cleared results keep a one-line "
    "marker instead of disappearing.",
    "A thresholds object replaces Mycel's default per-tool thresholds instead of adding to them; "
    "run_command, command_status and Fetch match no real tool.",
)


@dataclass(frozen=True, slots=True)
class Proposal:
    """Valid proposed values (coerced the way Mycel would), and the refusals, keyed by dotted path."""

    values: Mapping[str, Any] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)

    def changes(self, effective: EffectiveConfig) -> dict[str, Any]:
        """The proposed values that differ from what Mycel runs with now."""
        return {
            key: value
            for key, value in self.values.items()
            if key not in effective.values or effective.value(key) != value
        }


def editor_keys(effective: EffectiveConfig) -> list[str]:
    """Every key the editor shows: memory, context limit, spill buffer and one threshold per known tool."""
    keys = [
        k
        for k in KEY_SPECS
        if k.startswith(("memory.", "tools.spill_buffer.")) or k == "runtime.context_limit"
    ]
    keys.remove("tools.spill_buffer.thresholds")
    keys.extend(f"tools.spill_buffer.thresholds.{tool}" for tool in effective.spill.thresholds)
    return keys


@dataclass(frozen=True, slots=True)
class EditorRow:
    key_path: str
    name: str  # the last part of the key, for the label
    kind: str  # "int" or "bool"
    value: Any  # what Mycel runs with now
    proposed: Any  # what the form holds (the raw text when it was refused)
    layer: ConfigLayerName
    slider: tuple[int, int, int] | None
    minimum: int | None
    description: str
    unused: str
    error: str | None
    changed: bool

    @property
    def input_id(self) -> str:
        return "cfg-" + self.key_path.replace(".", "-")


@dataclass(frozen=True, slots=True)
class EditorSection:
    title: str
    rows: tuple[EditorRow, ...]


def _minimum(key_path: str) -> int | None:
    spec = KEY_SPECS.get(key_path)
    if spec is None:
        return 1  # per-tool thresholds: Mycel accepts anything, 1 is the least that makes sense
    if spec.gt is not None:
        return int(spec.gt) + 1
    return int(spec.ge) if spec.ge is not None else None


def editor_sections(
    effective: EffectiveConfig, proposal: Proposal, raw: Mapping[str, str]
) -> tuple[EditorSection, ...]:
    """The editor's rows, grouped the way Mycel's runtime.json is."""
    rows: list[EditorRow] = []
    for key in editor_keys(effective):
        spec = KEY_SPECS.get(key)
        boolean = spec is not None and spec.kind is ValueKind.BOOL
        value = effective.value(key)
        if key in proposal.errors:
            proposed: Any = raw.get(key, "")
        else:
            proposed = proposal.values.get(key, value)
        slider = None if boolean else SLIDERS.get(key, THRESHOLD_SLIDER)
        if slider is not None and isinstance(proposed, int):
            slider = (min(slider[0], proposed), max(slider[1], proposed), slider[2])
        rows.append(
            EditorRow(
                key_path=key,
                name=key.rsplit(".", 1)[-1],
                kind="bool" if boolean else "int",
                value=value,
                proposed=proposed,
                layer=effective.layer_of(key),
                slider=slider,
                minimum=None if boolean else _minimum(key),
                description=spec.description if spec else "Bytes above which this tool's output is spilled.",
                unused=spec.unused if spec else "",
                error=proposal.errors.get(key),
                changed=key not in proposal.errors and proposed != value,
            )
        )
    sections = []
    for prefix, title in SECTIONS:
        chosen = tuple(r for r in rows if r.key_path.startswith(prefix))
        if chosen:
            sections.append(EditorSection(title=title, rows=chosen))
    return tuple(sections)

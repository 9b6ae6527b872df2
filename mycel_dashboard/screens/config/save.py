"""Saving the Config screen's proposal: the overrides document, a save preview per layer file, history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.config import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    KeyChange,
    Severity,
    apply_change,
    document_changes,
)
from memory_core.config.merge import layer_problems
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import HistoryEntry, LayerFile, list_history, list_layer_files


def override_document(changes: Mapping[str, Any]) -> dict[str, Any]:
    """The proposal in Mycel's nested runtime.json form (used as the overrides layer)."""
    document: dict[str, Any] = {}
    for key, value in changes.items():
        document = apply_change(document, key, value)
    return document


@dataclass(frozen=True, slots=True)
class SavePreview:
    """What saving the proposal into one layer file would change, and what the file held when read."""

    layer: LayerFile
    document: Mapping[str, Any]  # the new document (nested form, every other key kept)
    changes: tuple[KeyChange, ...]
    shadowed: tuple[str, ...]  # keys a higher layer sets, so this save would not change what Mycel runs
    problems: tuple[ConfigProblem, ...]  # findings about the new file

    @property
    def sha256(self) -> str:
        return self.layer.file.sha256 or ""


def layer_file(
    locations: MycelLocations, name: ConfigLayerName, *, project_dir: Path | None
) -> LayerFile | None:
    """One layer file as read now (None when the project layer has no known folder)."""
    return next((f for f in list_layer_files(locations, project_dir=project_dir) if f.name is name), None)


def save_preview(layer: LayerFile, changes: Mapping[str, Any], effective: EffectiveConfig) -> SavePreview:
    """The new document for `layer` with `changes` applied. Raises ValueError for a value Mycel would refuse."""
    document: dict[str, Any] = dict(layer.file.document)
    for key, value in changes.items():
        document = apply_change(document, key, value)
    shadowed = tuple(
        key
        for key in changes
        if key in effective.values
        and layer.name is ConfigLayerName.USER
        and effective.layer_of(key) in (ConfigLayerName.PROJECT, ConfigLayerName.OVERRIDE)
    )
    problems = tuple(
        p
        for p in layer_problems(ConfigLayer(name=layer.name, document=document))
        if p.severity is not Severity.INFO
    )
    return SavePreview(
        layer=layer,
        document=document,
        # An empty file shows up as one leaf with an empty path: not a change to show.
        changes=document_changes(layer.file.document, document),
        shadowed=shadowed,
        problems=problems,
    )


@dataclass(frozen=True, slots=True)
class LayerHistory:
    layer: LayerFile
    entries: tuple[HistoryEntry, ...]


def layer_histories(layers: Sequence[LayerFile]) -> tuple[LayerHistory, ...]:
    return tuple(LayerHistory(layer=layer, entries=list_history(layer.path)) for layer in layers)

"""Saving the Config screen's proposal: the overrides document, a save preview per layer file, the project
folder's check, and the history with what restoring each kept version would change."""

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
    shown_changes,
)
from memory_core.config.merge import layer_problems
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import (
    ConfigFileError,
    HistoryEntry,
    LayerFile,
    list_history,
    list_layer_files,
    read_history_version,
)

# Kept versions listed per layer (newest first); `mycel-memory config history` lists them all.
HISTORY_SHOWN = 20


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


def project_folder_problem(locations: MycelLocations, project_dir: Path | None) -> str | None:
    """Why the project layer cannot be saved here: its folder does not exist on this machine (a thread's
    cwd is where Mycel ran, often another machine or another user's home). None when it can be."""
    if project_dir is None or project_dir.is_dir():
        return None
    if locations.project_dir is not None:
        return f"MYCEL_PROJECT_DIR names {project_dir}, which does not exist on this machine."
    return (
        f"{project_dir} does not exist on this machine: it was the thread's working folder (Mycel's cwd) "
        "on the machine it ran on. To save a project layer, set MYCEL_PROJECT_DIR to the project's folder "
        "here and restart the dashboard."
    )


@dataclass(frozen=True, slots=True)
class HistoryRow:
    """One kept version of a layer file, and what restoring it would change in the file as it is now."""

    entry: HistoryEntry
    changes: tuple[KeyChange, ...]  # secret-looking values masked
    problem: str | None = None  # the version cannot be read, so it cannot be restored

    @property
    def version(self) -> str:
        return self.entry.path.name


def history_row(layer: LayerFile, entry: HistoryEntry) -> HistoryRow:
    try:
        version = read_history_version(layer.path, entry.path.name)
    except ConfigFileError as exc:
        return HistoryRow(entry=entry, changes=(), problem=str(exc))
    if version.problems:
        return HistoryRow(entry=entry, changes=(), problem=version.problems[0].message)
    return HistoryRow(entry=entry, changes=shown_changes(layer.file.document, version.document))


@dataclass(frozen=True, slots=True)
class LayerHistory:
    layer: LayerFile
    rows: tuple[HistoryRow, ...]
    older: int  # kept versions beyond the ones listed


def layer_histories(layers: Sequence[LayerFile]) -> tuple[LayerHistory, ...]:
    histories = []
    for layer in layers:
        entries = list_history(layer.path)
        rows = tuple(history_row(layer, entry) for entry in entries[:HISTORY_SHOWN])
        histories.append(LayerHistory(layer=layer, rows=rows, older=max(len(entries) - HISTORY_SHOWN, 0)))
    return tuple(histories)


@dataclass(frozen=True, slots=True)
class RestorePreview:
    """What restoring one kept version would do to the layer file as read now, shown before confirming."""

    layer: LayerFile
    row: HistoryRow
    refusal: str | None  # why there is nothing to confirm

    @property
    def sha256(self) -> str:
        return self.layer.file.sha256 or ""


def restore_preview(layer: LayerFile, version: str) -> RestorePreview | str:
    """The preview of restoring `version` into `layer`, or why it is not a version of that file."""
    entry = next((e for e in list_history(layer.path) if e.path.name == version), None)
    if entry is None:
        return f"{version} is not a saved version of {layer.path} (see its history)."
    row = history_row(layer, entry)
    refusal = row.problem
    if refusal is None and entry.absent and not layer.file.exists:
        refusal = f"{layer.path} does not exist: it is already “no file”."
    elif refusal is None and not row.changes and layer.file.exists and not entry.absent:
        refusal = "The file already holds this version's values: restoring it would change nothing."
    return RestorePreview(layer=layer, row=row, refusal=refusal)

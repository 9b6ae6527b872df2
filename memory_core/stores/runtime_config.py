"""Mycel's runtime.json layer files, models.json and pricing_cache.json, read tolerantly, and the layer
files' history. Reads never raise: a missing or broken file becomes a ConfigProblem. Saving a layer is on
the write side (stores/write/config_files.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_core.config import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    Severity,
    merge_layers,
    redact_secrets,
)
from memory_core.context_limits import ContextLimit, resolve_context_limit
from memory_core.memo import Key, Memo
from memory_core.stores.confined import NotConfined, read_confined
from memory_core.stores.locations import MycelLocations, resolve_locations
from memory_core.stores.redact import encodable_data

RUNTIME_FILE = "runtime.json"
HISTORY_DIR = ".history"
BACKUP_PREFIX = f"{RUNTIME_FILE}.bak-"
# What a save wrote, kept beside the versions it replaced: when the file is later changed outside the
# dashboard, the past before that change still reads what the dashboard wrote.
WRITTEN_PREFIX = f"{RUNTIME_FILE}.wrote-"
STAMP_FORMAT = "%Y%m%dT%H%M%S"
STAMP_LENGTH = len("20261204T205500")
# An empty version named so says the file did not exist until that save: the past can read "no file".
ABSENT_SUFFIX = ".absent"


class ConfigFileError(Exception):
    """A config write the dashboard refused or could not do; the message says why, plainly."""


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonFile:
    """One JSON config file as read: the raw document (for editing) and what went wrong, if anything."""

    path: Path
    exists: bool
    document: Mapping[str, Any]  # {} when missing or invalid; secrets NOT redacted: never display this
    sha256: str | None  # of the bytes read; None when the file does not exist
    problems: tuple[ConfigProblem, ...] = ()

    @property
    def display_document(self) -> Mapping[str, Any]:
        result: Mapping[str, Any] = redact_secrets(self.document)
        return result


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerFile:
    name: ConfigLayerName
    file: JsonFile

    @property
    def path(self) -> Path:
        return self.file.path

    def as_layer(self) -> ConfigLayer:
        return ConfigLayer(name=self.name, document=self.file.document, source=str(self.file.path))


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedConfig:
    """Everything the config page shows: layers as read, the merged result, and the context limit used."""

    layers: tuple[LayerFile, ...]
    effective: EffectiveConfig
    context_limit: ContextLimit
    problems: tuple[ConfigProblem, ...]  # file problems + merge problems
    past_notes: tuple[str, ...] = ()  # read as of a moment: the layers whose content then is unknown


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedLayer:
    path: Path
    sha256: str | None  # of what was written; None when the layer went back to no file
    backup: Path  # the replaced version in .history/ (an empty `.absent` marker when there was no file)


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    path: Path
    saved_at: datetime  # when the version was replaced (from the backup's name)
    size: int
    sha256: str
    absent: bool = False  # the version was "no file": the save at saved_at created it
    # When the version was written, i.e. in force from (the backup keeps the replaced file's mtime);
    # None for "no file", which held from the start.
    since: datetime | None = None


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _problem(severity: Severity, key_path: str, message: str, layer: ConfigLayerName | None) -> ConfigProblem:
    return ConfigProblem(severity=severity, key_path=key_path, message=message, layer=layer)


def read_json_file(path: Path, *, layer: ConfigLayerName | None = None) -> JsonFile:
    """Read one JSON object file; missing, unreadable or invalid files come back as problems, not exceptions."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JsonFile(path=path, exists=False, document={}, sha256=None)
    except OSError as exc:
        message = f"{path} could not be read ({exc.strerror or exc}); it is treated as empty."
        return _unreadable(path, None, message, layer)
    return _json_file(path, data, layer)


def _json_file(path: Path, data: bytes, layer: ConfigLayerName | None) -> JsonFile:
    digest = sha256_of(data)
    try:
        # A "\ud800" escape parses to a lone surrogate, which no page or file write could encode.
        document = encodable_data(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        message = (
            f"{path} is not valid JSON{where}; Mycel would fail to load it. It is treated as empty here."
        )
        return _unreadable(path, digest, message, layer)
    if not isinstance(document, dict):
        message = f"{path} holds a JSON {type(document).__name__}, not an object; it is treated as empty."
        return _unreadable(path, digest, message, layer)
    return JsonFile(path=path, exists=True, document=document, sha256=digest)


def _unreadable(path: Path, digest: str | None, message: str, layer: ConfigLayerName | None) -> JsonFile:
    return JsonFile(
        path=path,
        exists=True,
        document={},
        sha256=digest,
        problems=(_problem(Severity.ERROR, "", message, layer),),
    )


def layer_paths(
    locations: MycelLocations | None = None, *, project_dir: Path | None = None
) -> dict[ConfigLayerName, Path]:
    """The runtime.json files the dashboard reads and may write: user, and project when one is known."""
    locations = locations or resolve_locations()
    paths = {ConfigLayerName.USER: locations.config_home / RUNTIME_FILE}
    project = project_dir or locations.project_dir
    if project is not None:
        paths[ConfigLayerName.PROJECT] = project / ".leon" / RUNTIME_FILE
    return paths


def list_layer_files(
    locations: MycelLocations | None = None, *, project_dir: Path | None = None
) -> tuple[LayerFile, ...]:
    """The user and project runtime.json files as read (missing ones included, with exists=False)."""
    return tuple(
        LayerFile(name=name, file=read_json_file(path, layer=name))
        for name, path in layer_paths(locations, project_dir=project_dir).items()
    )


def get_models_file(locations: MycelLocations | None = None) -> JsonFile:
    """~/.leon/models.json (display it through display_document: it holds provider API keys)."""
    return read_json_file((locations or resolve_locations()).config_home / "models.json")


def get_pricing_file(locations: MycelLocations | None = None) -> JsonFile:
    return read_json_file((locations or resolve_locations()).config_home / "pricing_cache.json")


# Per content of the four files it reads: a thread page asks for its threads' config several times.
_LOADED: Memo[LoadedConfig] = Memo("config.loaded", max_entries=64)


def _files_version(paths: Iterable[Path]) -> tuple[Hashable, ...]:
    """Each file's content digest (they are small; a stat would miss two same-size writes in one tick)."""
    version: list[Hashable] = []
    for path in paths:
        try:
            version.append((str(path), hashlib.blake2b(path.read_bytes(), digest_size=16).digest()))
        except OSError as exc:
            version.append((str(path), type(exc).__name__))
    return tuple(version)


def get_loaded_config(
    locations: MycelLocations | None = None,
    *,
    model: str | None = None,
    project_dir: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    as_of: datetime | None = None,
) -> LoadedConfig:
    """Read every layer, resolve the context limit for `model` as Mycel would, and merge; kept per content
    of the files read, so they are parsed and merged again only when one changed.

    `as_of` reads the layer files as they were then (`layer_file_at`: the record's config, which no save
    made later can move); models.json and the pricing cache are read as they are, a catalogue of windows."""
    locations = locations or resolve_locations()
    catalogue = [locations.config_home / "models.json", locations.config_home / "pricing_cache.json"]
    layer_files = layer_paths(locations, project_dir=project_dir)
    past: tuple[PastLayer, ...] | None = None
    if as_of is None:
        version = _files_version([*layer_files.values(), *catalogue])
    else:
        past = tuple(layer_file_at(name, path, as_of) for name, path in layer_files.items())
        layers_then = tuple((p.version, p.unknown_since, p.file.file.sha256) for p in past)
        version = (layers_then, *_files_version(catalogue))
    key = Key(
        version,
        what=(
            "loaded-config",
            model,
            json.dumps(overrides, sort_keys=True, default=repr) if overrides else None,
        ),
    )
    return _LOADED.get_or_compute(key, lambda: _load_config(locations, model, project_dir, overrides, past))


def _load_config(
    locations: MycelLocations,
    model: str | None,
    project_dir: Path | None,
    overrides: Mapping[str, Any] | None,
    past: tuple[PastLayer, ...] | None,
) -> LoadedConfig:
    if past is None:
        layers = list_layer_files(locations, project_dir=project_dir)
        unknown: tuple[str, ...] = ()
    else:
        layers = tuple(p.file for p in past)
        unknown = tuple(p.note for p in past if p.note is not None)
    models, pricing = get_models_file(locations), get_pricing_file(locations)
    config_layers = [layer.as_layer() for layer in layers]
    if overrides:
        config_layers.append(
            ConfigLayer(name=ConfigLayerName.OVERRIDE, document=overrides, source="overrides")
        )
    runtime_limit = merge_layers(config_layers).value("runtime.context_limit")
    limit = resolve_context_limit(
        model,
        runtime_context_limit=runtime_limit if isinstance(runtime_limit, int) else 0,
        models_document=models.document,
        pricing_document=pricing.document,
    )
    effective = merge_layers(config_layers, context_limit=limit.value)
    file_problems = [p for layer in layers for p in layer.file.problems] + list(
        models.problems + pricing.problems
    )
    return LoadedConfig(
        layers=layers,
        effective=effective,
        context_limit=limit,
        problems=tuple(file_problems) + effective.problems,
        past_notes=unknown,
    )


def list_history(path: Path) -> tuple[HistoryEntry, ...]:
    """Earlier versions of a layer file kept in .history/ beside it, newest first: only regular, singly
    linked files in a .history that is a real folder (stores/confined.py), so none is read from elsewhere."""
    history = path.parent / HISTORY_DIR
    entries = []
    if history.is_symlink():
        return ()
    try:
        candidates = list(history.iterdir())
    except OSError:
        return ()
    for candidate in candidates:
        if not candidate.name.startswith(BACKUP_PREFIX):
            continue
        stamp = candidate.name.removeprefix(BACKUP_PREFIX)[:STAMP_LENGTH]
        absent = candidate.name.endswith(ABSENT_SUFFIX)
        try:
            saved_at = datetime.strptime(stamp, STAMP_FORMAT).replace(tzinfo=UTC)
            data, _ = read_confined(path.parent, (HISTORY_DIR, candidate.name))
            stat = candidate.lstat()
        except (ValueError, OSError):
            continue
        if absent and data:
            continue  # a marker holds nothing; one that does is not ours
        entry = HistoryEntry(
            path=candidate,
            saved_at=saved_at,
            size=len(data),
            sha256=sha256_of(data),
            absent=absent,
            since=None if absent else _utc_ns(stat.st_mtime_ns),
        )
        entries.append((stat.st_ctime_ns, entry))
    # Two saves in one second share a stamp: the order they were written in (ctime) decides.
    ordered = sorted(entries, key=lambda pair: (pair[1].saved_at, pair[0], pair[1].path.name), reverse=True)
    return tuple(entry for _, entry in ordered)


def _utc_ns(ns: int) -> datetime:
    return datetime.fromtimestamp(ns / 1_000_000_000, tz=UTC)


# Per .history folder and its state: a fleet asks for the same few layer files' pasts thousands of times.
_HISTORIES: Memo[tuple[HistoryEntry, ...]] = Memo("config.histories", max_entries=64)


def _history_of(path: Path) -> tuple[HistoryEntry, ...]:
    try:
        stat = (path.parent / HISTORY_DIR).stat()
    except OSError:
        return ()
    key = Key(store=str(path), what=(stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns))
    return _HISTORIES.get_or_compute(key, lambda: list_history(path))


@dataclass(frozen=True, slots=True, kw_only=True)
class PastLayer:
    """One layer file as it was at a moment: the version then in force, or "unknown" when the file was
    changed afterwards outside the dashboard (its content then was kept nowhere)."""

    file: LayerFile
    version: str | None  # the .history version read; None: the file as it is now
    unknown_since: datetime | None = None  # set when the content then is unknown: it changed at this time

    @property
    def note(self) -> str | None:
        if self.unknown_since is None:
            return None
        return (
            f"{self.file.path} was changed at {self.unknown_since:%Y-%m-%d %H:%M:%S} UTC outside the dashboard, "
            "after this thread's calls; what it held then was kept nowhere, so the record reads this layer as "
            "absent (Mycel's defaults) rather than as it is today."
        )


def layer_file_at(name: ConfigLayerName, path: Path, at: datetime) -> PastLayer:
    """The layer file as it was at `at`: the version the first save after `at` replaced (the dashboard's
    history), else the file now when it was written before `at`."""
    history = _history_of(path)
    later = [e for e, replaced in zip(history, _replaced_at(path, history), strict=True) if replaced > at]
    version: str | None = None
    if later:
        entry = later[-1]  # newest first: the last of them is the first save after `at`
        version = entry.path.name
        try:
            file = read_history_version(path, version)
        except ConfigFileError:  # gone since it was listed: what it held is unknown
            return _unknown(name, path, version, entry.saved_at)
        since = entry.since
    else:
        file = read_json_file(path, layer=name)
        since = _mtime(path) if file.exists else None
    if since is not None and since > at:
        written = _written_at(path, at)
        if written is None:
            return _unknown(name, path, version, since)
        file = written
    return PastLayer(file=LayerFile(name=name, file=replace(file, path=path)), version=version)


def _replaced_at(path: Path, history: tuple[HistoryEntry, ...]) -> list[datetime]:
    """When each version gave way, newest first. A save's stamp has whole seconds, so each takes the first
    known write (the next version's time, the file's, a kept copy's: all to the nanosecond) within its
    second and after the older ones': a call in the same second as a save reads what it ran with."""
    writes = sorted(
        {when for when, _ in _written_of(path)}
        | {t for t in (_mtime(path),) if t is not None}
        | {e.since for e in history if e.since is not None}
    )
    replaced: list[datetime] = []
    floor = datetime.min.replace(tzinfo=UTC)
    for entry in reversed(history):  # oldest first: each save's write comes after the one before it
        if entry.since is not None:  # and after the version it replaced was written
            floor = max(floor, entry.since)
        window = [
            t for t in writes if entry.saved_at <= t < entry.saved_at + timedelta(seconds=1) and t > floor
        ]
        replaced.append(window[0] if window else entry.saved_at)
        floor = max(floor, replaced[-1])
    return replaced[::-1]


def _written_at(path: Path, at: datetime) -> JsonFile | None:
    """What the dashboard's newest save before `at` wrote, if that save kept it and no later save before
    `at` went without: the file held it until the change outside the dashboard that followed."""
    kept = [(when, name) for when, name in _written_of(path) if when <= at]
    if not kept:
        return None
    when, name = kept[0]
    if any(when < entry.saved_at <= at for entry in _history_of(path)):
        return None  # a save that kept no copy came after it
    try:
        data, _ = read_confined(path.parent, (HISTORY_DIR, name))
    except (NotConfined, OSError):
        return None
    if name.endswith(ABSENT_SUFFIX):
        return None if data else JsonFile(path=path, exists=False, document={}, sha256=None)
    return _json_file(path, data, None)


_WRITTEN: Memo[tuple[tuple[datetime, str], ...]] = Memo("config.written", max_entries=64)


def _written_of(path: Path) -> tuple[tuple[datetime, str], ...]:
    try:
        stat = (path.parent / HISTORY_DIR).stat()
    except OSError:
        return ()
    key = Key(store=str(path), what=(stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns))
    return _WRITTEN.get_or_compute(key, lambda: _list_written(path))


def _list_written(path: Path) -> tuple[tuple[datetime, str], ...]:
    """The copies of what saves wrote (WRITTEN_PREFIX), newest first, each at its write time (the copy's
    mtime: written at the save, to the nanosecond, where a name's stamp has whole seconds)."""
    history = path.parent / HISTORY_DIR
    if history.is_symlink():
        return ()
    try:
        copies = [p for p in history.iterdir() if p.name.startswith(WRITTEN_PREFIX)]
    except OSError:
        return ()
    found = []
    for copy in copies:
        try:
            found.append((_utc_ns(copy.lstat().st_mtime_ns), copy.name))
        except OSError:
            continue
    return tuple(sorted(found, reverse=True))


def _unknown(name: ConfigLayerName, path: Path, version: str | None, since: datetime) -> PastLayer:
    empty = JsonFile(path=path, exists=False, document={}, sha256=None)
    return PastLayer(file=LayerFile(name=name, file=empty), version=version, unknown_since=since)


def change_points(locations: MycelLocations, project_dir: Path | None = None) -> tuple[datetime, ...]:
    """Every moment a layer file changed, as far as is known (saves, versions' write times, the files'
    mtimes): two moments between the same points read the same config (a fleet resolves it once each)."""
    points: set[datetime] = set()
    for path in layer_paths(locations, project_dir=project_dir).values():
        for entry in _history_of(path):
            points.update(t for t in (entry.saved_at, entry.since) if t is not None)
        points.update(when for when, _ in _written_of(path))
        if (written := _mtime(path)) is not None:
            points.add(written)
    return tuple(sorted(points))


def _mtime(path: Path) -> datetime | None:
    try:
        return _utc_ns(path.stat().st_mtime_ns)
    except OSError:
        return None


def history_version(path: Path, version: str) -> Path:
    """Where the saved version named `version` of a layer file lives: `.history/` beside the file (the
    one place versions are kept); ConfigFileError for a name that cannot be one."""
    if "/" in version or "\\" in version or not version.startswith(BACKUP_PREFIX):
        raise ConfigFileError(f"{version!r} is not a version name (see the layer's history).")
    return path.parent / HISTORY_DIR / version


def read_history_version(path: Path, version: str) -> JsonFile:
    """The saved version named `version` of a layer file, read the way `list_history` reads it (a regular,
    singly linked file in a real .history folder); ConfigFileError for any other file."""
    where = history_version(path, version)
    try:
        data, _ = read_confined(path.parent, (HISTORY_DIR, version))
        if version.endswith(ABSENT_SUFFIX) and not data:
            return JsonFile(path=where, exists=False, document={}, sha256=None)
    except NotConfined as exc:
        raise ConfigFileError(f"Refusing {where}: {exc}. Nothing was changed.") from None
    except OSError as exc:
        raise ConfigFileError(f"Cannot read {where}: {exc.strerror or exc}. Nothing was changed.") from None
    return _json_file(where, data, None)

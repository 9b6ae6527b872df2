"""Mycel's runtime.json layer files, models.json and pricing_cache.json: read tolerantly, saved safely.

Reads never raise: a missing or broken file becomes a ConfigProblem. Writes go only to the user or
project runtime.json, atomically, after a backup in .history/ beside the file, and only if the file
still has the content (sha256) it had when it was read.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.config import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    Severity,
    contains_redaction,
    merge_layers,
    redact_secrets,
)
from memory_core.context_limits import ContextLimit, resolve_context_limit
from memory_core.stores.locations import MycelLocations, resolve_locations
from memory_core.stores.redact import encodable_data

RUNTIME_FILE = "runtime.json"
HISTORY_DIR = ".history"
_BACKUP_PREFIX = f"{RUNTIME_FILE}.bak-"
_STAMP = "%Y%m%dT%H%M%S"
_LOCK_WAIT_S = 10.0

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; saves there are checked but not serialised
    fcntl = None  # type: ignore[assignment]


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


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedLayer:
    path: Path
    sha256: str
    backup: Path | None  # None when the file did not exist before


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryEntry:
    path: Path
    saved_at: datetime  # when the version was replaced (from the backup's name)
    size: int
    sha256: str


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


def get_loaded_config(
    locations: MycelLocations | None = None,
    *,
    model: str | None = None,
    project_dir: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> LoadedConfig:
    """Read every layer, resolve the context limit for `model` as Mycel would, and merge."""
    locations = locations or resolve_locations()
    layers = list_layer_files(locations, project_dir=project_dir)
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
    )


def _checked_target(path: Path, allowed: Sequence[Path]) -> Path:
    if ".." in path.parts:
        raise ConfigFileError(f"Refusing {path}: config paths may not contain '..'.")
    if path.name != RUNTIME_FILE:
        raise ConfigFileError(f"Refusing {path}: only runtime.json layer files can be written.")
    target = path.absolute()
    for candidate in allowed:
        if candidate.absolute() != target:
            continue
        home = candidate.parent.resolve()
        resolved = target.resolve()
        if resolved.parent != home or resolved.name != RUNTIME_FILE:
            raise ConfigFileError(f"Refusing {path}: it is a link that points outside {home}.")
        return resolved
    names = ", ".join(str(p) for p in allowed) or "none"
    raise ConfigFileError(f"Refusing {path}: it is not one of the runtime.json layer files ({names}).")


def _fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be fsynced
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _atomic_write(target: Path, data: bytes, *, mode: int | None = None) -> None:
    try:
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise ConfigFileError(
            f"Cannot write in {target.parent}: {exc.strerror or exc}. Nothing was changed."
        ) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise ConfigFileError(
            f"Could not write {target}: {exc.strerror or exc}. Nothing was changed."
        ) from exc
    _fsync_dir(target.parent)


def _write_backup(target: Path, data: bytes, now: datetime) -> Path:
    history = target.parent / HISTORY_DIR
    try:
        history.mkdir(exist_ok=True)
    except OSError as exc:
        raise ConfigFileError(
            f"Cannot keep a backup in {history}: {exc.strerror or exc}. Nothing was changed."
        ) from exc
    stamp = now.strftime(_STAMP)
    backup = history / f"{_BACKUP_PREFIX}{stamp}"
    counter = 1
    while backup.exists():
        counter += 1
        backup = history / f"{_BACKUP_PREFIX}{stamp}-{counter}"
    _atomic_write(backup, data)
    return backup


@contextlib.contextmanager
def _saves_serialised(folder: Path) -> Iterator[None]:
    """Hold an exclusive flock on the layer's folder while a save checks and replaces the file.

    Every dashboard worker (process or thread) opens the folder itself, so two saves of the same preview
    take turns: the second reads the first one's file and is refused instead of overwriting it.
    """
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError as exc:
        raise ConfigFileError(f"Cannot open {folder}: {exc.strerror or exc}. Nothing was changed.") from exc
    try:
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                    break  # a filesystem without flock: the sha256 check below still runs
                if time.monotonic() > deadline:
                    raise ConfigFileError(
                        f"Another save of {folder} is still running; try again. Nothing was changed."
                    ) from exc
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # releases the lock


def save_layer(
    path: Path,
    document: Mapping[str, Any],
    *,
    expected_sha256: str | None,
    locations: MycelLocations | None = None,
    project_dir: Path | None = None,
    now: datetime | None = None,
) -> SavedLayer:
    """Write a layer file atomically after backing up the current version.

    expected_sha256 is the hash the file had when it was read (None: it did not exist). Raises
    ConfigFileError, with nothing changed, if the file moved on since, the path is not a layer file,
    the document holds redacted placeholders, or the directory cannot be written.
    """
    target = _checked_target(path, list(layer_paths(locations, project_dir=project_dir).values()))
    if contains_redaction(document):
        raise ConfigFileError("Refusing to save: the document contains hidden (redacted) values.")
    if not target.parent.is_dir():
        if expected_sha256 is not None:
            raise ConfigFileError(f"{target} was deleted since you opened it; reload before saving.")
        # A first save creates the folder anyway; the lock below needs it to exist.
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigFileError(f"Cannot create {target.parent}: {exc.strerror or exc}.") from exc
    with _saves_serialised(target.parent):
        try:
            current: bytes | None = target.read_bytes()
        except FileNotFoundError:
            current = None
        except OSError as exc:
            raise ConfigFileError(f"Cannot read {target} before saving: {exc.strerror or exc}.") from exc
        current_sha = sha256_of(current) if current is not None else None
        if current_sha != expected_sha256:
            if current is None:
                raise ConfigFileError(f"{target} was deleted since you opened it; reload before saving.")
            if expected_sha256 is None:
                raise ConfigFileError(
                    f"{target} was created by someone else since you opened it; reload first."
                )
            raise ConfigFileError(
                f"{target} was edited by hand since you opened it; reload to see the changes."
            )
        data = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        when = now or datetime.now(UTC)
        backup = _write_backup(target, current, when) if current is not None else None
        mode = target.stat().st_mode & 0o777 if current is not None else None
        _atomic_write(target, data, mode=mode)
    return SavedLayer(path=target, sha256=sha256_of(data), backup=backup)


def list_history(path: Path) -> tuple[HistoryEntry, ...]:
    """Earlier versions of a layer file kept in .history/ beside it, newest first."""
    history = path.parent / HISTORY_DIR
    entries = []
    try:
        candidates = list(history.iterdir())
    except OSError:
        return ()
    for candidate in candidates:
        if not candidate.name.startswith(_BACKUP_PREFIX) or candidate.is_symlink() or not candidate.is_file():
            continue
        stamp = candidate.name.removeprefix(_BACKUP_PREFIX).split("-")[0]
        try:
            saved_at = datetime.strptime(stamp, _STAMP).replace(tzinfo=UTC)
            data = candidate.read_bytes()
        except (ValueError, OSError):
            continue
        entries.append(
            HistoryEntry(path=candidate, saved_at=saved_at, size=len(data), sha256=sha256_of(data))
        )
    return tuple(sorted(entries, key=lambda e: (e.saved_at, e.path.name), reverse=True))


def history_version(path: Path, version: str) -> Path:
    """Where the saved version named `version` of a layer file lives: `.history/` beside the file (the
    one place versions are kept); ConfigFileError for a name that cannot be one."""
    if "/" in version or "\\" in version or not version.startswith(_BACKUP_PREFIX):
        raise ConfigFileError(f"{version!r} is not a version name (see the layer's history).")
    return path.parent / HISTORY_DIR / version


def restore_version(
    path: Path,
    version: str,
    *,
    expected_sha256: str | None,
    locations: MycelLocations | None = None,
    project_dir: Path | None = None,
    now: datetime | None = None,
) -> SavedLayer:
    """Put the saved version named `version` back (the current one is backed up first, so a restore can
    be undone)."""
    backup = history_version(path, version)
    known = {entry.path.resolve() for entry in list_history(path)}
    if backup.resolve() not in known:
        raise ConfigFileError(f"Refusing {backup}: it is not a saved version of {path}.")
    restored = read_json_file(backup)
    if restored.problems:
        raise ConfigFileError(restored.problems[0].message)
    return save_layer(
        path,
        restored.document,
        expected_sha256=expected_sha256,
        locations=locations,
        project_dir=project_dir,
        now=now,
    )

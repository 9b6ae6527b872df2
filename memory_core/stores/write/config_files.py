"""Mycel's runtime.json layer files saved safely: only the user or project runtime.json, atomically, after a
backup in .history/ beside the file, and only if the file still has the content (sha256) it had when it
was read. The reads (and the history) are in stores/runtime_config.py."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_core.config import contains_redaction
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import (
    ABSENT_SUFFIX,
    BACKUP_PREFIX,
    HISTORY_DIR,
    RUNTIME_FILE,
    STAMP_FORMAT,
    WRITTEN_PREFIX,
    ConfigFileError,
    SavedLayer,
    history_version,
    layer_paths,
    list_history,
    read_history_version,
    sha256_of,
)

_LOCK_WAIT_S = 10.0

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock; saves there are checked but not serialised
    fcntl = None  # type: ignore[assignment]


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


def _write_backup(target: Path, data: bytes | None, now: datetime) -> Path:
    """Keep the version a save replaces in .history/; `None` (no file yet) leaves an empty marker, so the
    history can say the file did not exist before this save."""
    history = target.parent / HISTORY_DIR
    if history.is_symlink():
        # A linked .history would receive the current file (secrets and all) wherever the link points.
        raise ConfigFileError(
            f"Refusing to keep a backup in {history}: it is a symlink. Nothing was changed."
        )
    try:
        history.mkdir(exist_ok=True)
    except OSError as exc:
        raise ConfigFileError(
            f"Cannot keep a backup in {history}: {exc.strerror or exc}. Nothing was changed."
        ) from exc
    stamp = now.strftime(STAMP_FORMAT)
    suffix = ABSENT_SUFFIX if data is None else ""
    backup = history / f"{BACKUP_PREFIX}{stamp}{suffix}"
    counter = 1
    while backup.exists():
        counter += 1
        backup = history / f"{BACKUP_PREFIX}{stamp}-{counter}{suffix}"
    _atomic_write(backup, data or b"")
    if data is not None:  # the version keeps the time it was written: the past reads it from then on
        try:
            replaced = target.stat()
            os.utime(backup, ns=(replaced.st_atime_ns, replaced.st_mtime_ns))
        except OSError:
            pass  # it then reads as written at the save: a past before it reads as unknown, never wrong
    return backup


def _keep_written(target: Path, data: bytes | None) -> None:
    """Keep what a save wrote (`None`: back to no file) in .history/, once written: if the file is later
    changed outside the dashboard, the past before that change still reads what was there. Without the
    copy that past reads as unknown, never wrong, so a copy that cannot be kept does not undo the save."""
    history = target.parent / HISTORY_DIR  # _write_backup made it, and refused a symlink
    stamp = datetime.now(UTC).strftime(STAMP_FORMAT)
    suffix = ABSENT_SUFFIX if data is None else ""
    copy = history / f"{WRITTEN_PREFIX}{stamp}{suffix}"
    counter = 1
    while copy.exists():
        counter += 1
        copy = history / f"{WRITTEN_PREFIX}{stamp}-{counter}{suffix}"
    with contextlib.suppress(ConfigFileError, OSError):
        _atomic_write(copy, data or b"")
        if data is not None:  # it holds what the file held from its write on, to the nanosecond
            written = target.stat()
            os.utime(copy, ns=(written.st_atime_ns, written.st_mtime_ns))


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


def apply_layer(
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
        backup = _write_backup(target, current, when)
        mode = target.stat().st_mode & 0o777 if current is not None else None
        _atomic_write(target, data, mode=mode)
        _keep_written(target, data)
    return SavedLayer(path=target, sha256=sha256_of(data), backup=backup)


def apply_restore(
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
    restored = read_history_version(path, version)
    if restored.problems:
        raise ConfigFileError(restored.problems[0].message)
    if not restored.exists:
        return _remove_layer(path, expected_sha256=expected_sha256, now=now)
    return apply_layer(
        path,
        restored.document,
        expected_sha256=expected_sha256,
        locations=locations,
        project_dir=project_dir,
        now=now,
    )


def _remove_layer(path: Path, *, expected_sha256: str | None, now: datetime | None) -> SavedLayer:
    """Back to "no file": the current version goes to .history/ first, so this too can be undone."""
    with _saves_serialised(path.parent):
        try:
            current = path.read_bytes()
        except FileNotFoundError:
            raise ConfigFileError(f"{path} does not exist: there is nothing to remove.") from None
        except OSError as exc:
            raise ConfigFileError(f"Cannot read {path} before removing it: {exc.strerror or exc}.") from exc
        if sha256_of(current) != expected_sha256:
            raise ConfigFileError(
                f"{path} was edited by hand since you opened it; reload to see the changes."
            )
        backup = _write_backup(path, current, now or datetime.now(UTC))
        try:
            path.unlink()
        except OSError as exc:
            raise ConfigFileError(f"Could not remove {path}: {exc.strerror or exc}.") from exc
        _fsync_dir(path.parent)
        _keep_written(path, None)
    return SavedLayer(path=path, sha256=None, backup=backup)

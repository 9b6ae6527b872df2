"""Reading a file whose folder or name comes from the data (a spilled tool output, a saved config version)
only when it is what it claims to be: a regular file, linked once, in a real folder.

Checked on the open file itself, so nothing can be swapped between the check and the read: every folder
below `root` is opened with O_NOFOLLOW relative to the one above it, the file too, and fstat then decides.
A symlink anywhere below `root`, a hard link to a file elsewhere (st_nlink > 1), a pipe or a device is
refused; a pipe is opened non-blocking, so it cannot hold a worker. `root` itself may be reached through a
symlink (a user's ~/.leon may be one): the folders that hold the files are the ones below it.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotConfined(OSError):
    """The file is not a regular, singly linked file reached through real folders; the message says which."""


def read_confined(root: Path, parts: Sequence[str], *, max_bytes: int | None = None) -> tuple[bytes, int]:
    """The bytes of `root/parts…` (at most `max_bytes`) and the file's size; NotConfined for a refused
    file, another OSError when it cannot be opened at all (FileNotFoundError when it is missing)."""
    if not parts or any(part in {"", ".", ".."} or "/" in part for part in parts):
        raise NotConfined(f"{'/'.join(parts)!r} is not a plain name inside {root}")
    fd = _open_folder(str(root), None, root, follow=True)
    try:
        for part in parts[:-1]:
            inner = _open_folder(part, fd, root / part)
            os.close(fd)
            fd = inner
        try:
            file_fd = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=fd)
        except OSError as exc:
            raise _refusal(exc, root.joinpath(*parts)) from exc
    finally:
        os.close(fd)
    try:
        facts = os.fstat(file_fd)
        where = root.joinpath(*parts)
        if not stat.S_ISREG(facts.st_mode):
            raise NotConfined(f"{where} is not a regular file")
        if facts.st_nlink != 1:
            raise NotConfined(f"{where} is a hard link ({facts.st_nlink} names for one file)")
        with os.fdopen(file_fd, "rb", closefd=False) as handle:
            data = handle.read() if max_bytes is None else handle.read(max_bytes)
        return data, facts.st_size
    finally:
        os.close(file_fd)


def _open_folder(name: str, dir_fd: int | None, shown: Path, *, follow: bool = False) -> int:
    flags = os.O_RDONLY | _DIRECTORY | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(exc, shown) from exc


def _refusal(exc: OSError, where: Path) -> OSError:
    """O_NOFOLLOW on a symlink fails with ELOOP (or ENOTDIR for a folder): name it as the refusal it is."""
    if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENOTDIR and where.is_symlink()):
        return NotConfined(f"{where} is a symlink")
    return exc

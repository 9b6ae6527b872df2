"""A folder that refuses new entries, for tests of refused writes; it must hold for root too (CI runs as root)."""

from __future__ import annotations

import array
import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# linux/fs.h: the attribute `chattr +i` sets. Root ignores permission bits but not this flag, which binds it
# the way a read-only mount does (os.access says no, nothing can be created or removed in the folder).
_FS_IOC_GETFLAGS = 0x80086601
_FS_IOC_SETFLAGS = 0x40086602
_FS_IMMUTABLE_FL = 0x10


@contextmanager
def unwritable_folder(folder: Path) -> Iterator[None]:
    """Inside the block, nobody can create a file in folder: mode 0555 for a user, immutable for root."""
    if os.geteuid() != 0:
        mode = folder.stat().st_mode & 0o777
        folder.chmod(0o555)
        try:
            assert not os.access(folder, os.W_OK), f"{folder} is still writable"
            yield
        finally:
            folder.chmod(mode)
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        flags = array.array("i", [0])
        try:
            fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
            fcntl.ioctl(fd, _FS_IOC_SETFLAGS, array.array("i", [flags[0] | _FS_IMMUTABLE_FL]))
        except OSError as exc:
            pytest.fail(
                f"Cannot make {folder} read-only for root ({exc.strerror}): this needs CAP_LINUX_IMMUTABLE "
                "and a filesystem with chattr attributes; run the tests as a normal user instead.",
                pytrace=False,
            )
        try:
            assert not os.access(folder, os.W_OK), f"{folder} is still writable"
            yield
        finally:
            fcntl.ioctl(fd, _FS_IOC_SETFLAGS, array.array("i", [flags[0]]))
    finally:
        os.close(fd)

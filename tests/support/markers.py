"""Marks given by folder: every test under a folder carries its mark. tests/conftest.py applies them at
collection, before `-m` selects; a `pytestmark` in a conftest.py would mark nothing (pytest reads it from
test modules only)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
FOLDER_MARKS = {"browser": TESTS / "browser"}


def folder_marks(path: Path) -> list[str]:
    """The marks a test in the file at `path` carries for the folder it is in."""
    where = path.resolve()
    return [mark for mark, folder in FOLDER_MARKS.items() if where.is_relative_to(folder)]

"""The first entries of a long list in some order, kept while the list streams by: a fleet's page shows
the first hundred of a million rows and how many there were, and a sum of it holds only those."""

from __future__ import annotations

from bisect import insort
from typing import Any, Generic, TypeVar

V = TypeVar("V")


class Leaders(Generic[V]):
    """The `size` values of smallest key seen (keys unique: callers break ties), and how many were seen."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.count = 0
        self._first: list[tuple[Any, V]] = []

    def add(self, key: Any, value: V) -> None:
        self.count += 1
        if len(self._first) < self.size or key < self._first[-1][0]:
            insort(self._first, (key, value), key=lambda entry: entry[0])
            del self._first[self.size :]

    def values(self) -> list[V]:
        """The kept values, smallest key first."""
        return [value for _, value in self._first]

"""Small per-process caches for derived values (each gunicorn worker keeps its own)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class BoundedCache(OrderedDict[tuple[object, ...], T]):
    """A small LRU for per-process derived values keyed by immutable facts (e.g. a head checkpoint id).

    Safe under gunicorn's threads: lookups and evictions hold a lock; two threads missing the same key
    may both compute it (the values are equal), never a KeyError from an eviction in between.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.lock = threading.Lock()

    def cached(self, key: tuple[object, ...]) -> T | None:
        """The value kept under `key` (now the most recently used), or None."""
        with self.lock:
            if key in self:
                self.move_to_end(key)
                return self[key]
        return None

    def put(self, key: tuple[object, ...], value: T) -> None:
        """Keep `value` under `key`, evicting the least recently used beyond `size`."""
        with self.lock:
            self[key] = value
            self.move_to_end(key)
            while len(self) > self.size:
                self.popitem(last=False)

    def get_or_compute(self, key: tuple[object, ...], compute: Callable[[], T]) -> T:
        found = self.cached(key)
        if found is not None:
            return found
        value = compute()
        self.put(key, value)
        return value


_DERIVED: BoundedCache[tuple[object, Any]] = BoundedCache(64)


def derived_from(source: object, key: tuple[object, ...], compute: Callable[[], T]) -> T:
    """A value computed from `source`, kept while `source` is the very same object.

    The reader hands back the same thread-list object while Mycel's files are unchanged, so orderings and
    selections over 10,000 threads are computed once per files version, not once per request. The entry
    holds `source` itself, so its id cannot be reused by another object while it is cached.
    """
    full_key = (id(source), *key)
    entry = _DERIVED.get_or_compute(full_key, lambda: (source, compute()))
    if entry[0] is not source:
        with _DERIVED.lock:
            _DERIVED.pop(full_key, None)
        entry = _DERIVED.get_or_compute(full_key, lambda: (source, compute()))
    return entry[1]  # type: ignore[no-any-return]

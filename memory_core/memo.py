"""The one cache layer: every value derived from Mycel's files is kept in a Memo, under one key discipline.

The rule, stated once: checkpoints are immutable (append-only), so a value derived from (store identity
and version, thread, head checkpoint, settings digest) never goes stale. Nothing here is ever invalidated,
only evicted (bounded LRU) or dropped by `reset()`. A key that leaves out something the value depends on
is the only way to serve a wrong value, so `Key` names every part, and `what` holds the rest.

One lock policy: each memo has one lock, held only to look up, store or evict, never while a value is
computed. Concurrent misses of the same key compute it once (single-flight): the first caller computes,
the others wait for its value. A result the caller marks as not worth keeping (`keep=` returns False,
e.g. a read that met a lock or a time limit) is handed to the callers waiting for it but not kept, so the
next request tries again. A value computed across a `reset()` is not kept either.

What is deliberately not a Memo: pure functions of their own argument, where nothing about a store is in
the key and a value can never be wrong, such as the tokenizer's encodings and its content-hash token counts
(memory_core/tokens.py) and the time of a checkpoint id (stores/threads.py). They keep `functools` caches.
The head facts file (stores/derived.py) is the persistent layer under this one: its in-process registry
is a Memo, so `reset()` makes the next reader start as a new process would, from the file.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, NamedTuple, TypeVar

V = TypeVar("V")


class Key(NamedTuple):
    """What a kept value was derived from. Leave a part None only when the value does not depend on it.

    A tuple, not a dataclass: a list of 10,000 threads builds and hashes 10,000 keys per request.
    """

    # the store's identity and version: a file's identity, the files' version, or a content hash
    store: Hashable
    thread: str | None = None
    head: str | None = None  # the head checkpoint id the value was derived from
    settings: str | None = None  # a digest of the settings it was derived under (`digest`)
    what: Hashable = ()  # anything else it depends on (which value, a checkpoint count, a limit…)


def digest(*parts: object) -> str:
    """A short stable digest of settings or other values for a Key (their reprs must be deterministic)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class MemoStats:
    """One memo's counters since the process started (or since the last `reset()`)."""

    name: str
    hits: int
    misses: int  # computed here (each a single flight)
    waits: int  # missed, but another caller was already computing it
    entries: int
    max_entries: int


@dataclass(eq=False)
class _Flight(Generic[V]):
    done: threading.Event = field(default_factory=threading.Event)
    value: V | None = None
    ok: bool = False


def _always(_value: object) -> bool:
    return True


class Memo(Generic[V]):
    """A bounded LRU of derived values under `Key`s, with single-flight misses, registered by name."""

    def __init__(self, name: str, *, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"memo {name!r}: max_entries must be at least 1")
        self.name = name
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[Key, V] = OrderedDict()
        self._flights: dict[Key, _Flight[V]] = {}
        self._generation = 0
        self._hits = self._misses = self._waits = 0
        _register(self)

    def get(self, key: Key) -> V | None:
        """The value kept under `key` (now the most recently used), or None."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                self._hits += 1
                return self._entries[key]
            self._misses += 1
        return None

    def get_many(self, keys: Iterable[Key]) -> list[V | None]:
        """`get` for many keys under one hold of the lock (a list of 10,000 rows asks for all of them)."""
        found: list[V | None] = []
        with self._lock:
            for key in keys:
                value = self._entries.get(key)
                if value is None:
                    self._misses += 1
                else:
                    self._entries.move_to_end(key)
                    self._hits += 1
                found.append(value)
        return found

    def put(self, key: Key, value: V) -> None:
        """Keep `value` under `key`, evicting the least recently used beyond `max_entries`."""
        with self._lock:
            self._keep(key, value)

    def get_or_compute(self, key: Key, compute: Callable[[], V], *, keep: Callable[[V], bool] = _always) -> V:
        """The value under `key`, computing it once however many callers miss it together.

        `keep(value)` False: the value is returned (to the waiters too) but not kept. If `compute` raises,
        the error reaches its caller and each waiter tries again.
        """
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    self._hits += 1
                    return self._entries[key]
                flight = self._flights.get(key)
                leading = flight is None
                if flight is None:
                    flight = self._flights[key] = _Flight()
                    self._misses += 1
                    generation = self._generation
                else:
                    self._waits += 1
            if leading:
                return self._lead(key, flight, generation, compute, keep)
            flight.done.wait()
            if flight.ok:
                return flight.value  # type: ignore[return-value]  # set together with ok

    def _lead(
        self,
        key: Key,
        flight: _Flight[V],
        generation: int,
        compute: Callable[[], V],
        keep: Callable[[V], bool],
    ) -> V:
        try:
            value = compute()
            kept = keep(value)
        except BaseException:
            with self._lock:
                if self._flights.get(key) is flight:
                    del self._flights[key]
            flight.done.set()
            raise
        with self._lock:
            if self._flights.get(key) is flight:
                del self._flights[key]
            if kept and generation == self._generation:
                self._keep(key, value)
        flight.value, flight.ok = value, True
        flight.done.set()
        return value

    def _keep(self, key: Key, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every kept value and the counters; values being computed now will not be kept."""
        with self._lock:
            self._entries.clear()
            self._generation += 1
            self._hits = self._misses = self._waits = 0

    def stats(self) -> MemoStats:
        with self._lock:
            return MemoStats(
                self.name, self._hits, self._misses, self._waits, len(self._entries), self.max_entries
            )


# Weak, so a memo made by a test goes away with it; the product's memos live as long as their modules.
_MEMOS: weakref.WeakValueDictionary[str, Memo[object]] = weakref.WeakValueDictionary()
_MEMOS_LOCK = threading.Lock()


def _register(memo: Memo[V]) -> None:
    with _MEMOS_LOCK:
        if memo.name in _MEMOS:
            raise ValueError(f"a memo named {memo.name!r} exists already")
        _MEMOS[memo.name] = memo  # type: ignore[assignment]  # stored for clear() and stats() only


def reset() -> None:
    """Forget every derived value in the process, as a new process would start (tests, benchmarks)."""
    with _MEMOS_LOCK:
        memos = list(_MEMOS.values())
    for memo in memos:
        memo.clear()


def stats() -> dict[str, MemoStats]:
    """Every registered memo's counters, by name."""
    with _MEMOS_LOCK:
        memos = list(_MEMOS.values())
    return {memo.name: memo.stats() for memo in sorted(memos, key=lambda m: m.name)}

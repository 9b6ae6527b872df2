"""Values derived from one immutable object the reader hands back (the thread list of one version of
Mycel's files), kept in a memo (memory_core/memo.py) while that very object is in use."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar, cast

from memory_core.memo import Key, Memo

T = TypeVar("T")

_DERIVED: Memo[tuple[object, Any]] = Memo("dashboard.derived_from_list", max_entries=64)


def derived_from(source: object, what: Hashable, compute: Callable[[], T]) -> T:
    """A value computed from `source`, kept while `source` is the very same object.

    The reader hands back the same thread-list tuple while Mycel's files are unchanged, so orderings and
    selections over 10,000 threads are computed once per files version, not once per request. The entry
    holds `source` itself, so its id cannot be reused by another object while it is kept.
    """
    entry = _DERIVED.get_or_compute(Key(store=id(source), what=what), lambda: (source, compute()))
    return cast(T, entry[1])

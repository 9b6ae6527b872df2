"""The one cache layer: bounded LRU, single-flight misses, transient results not kept, reset and stats."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from memory_core import memo
from memory_core.memo import Key, Memo

_names = itertools.count()


def _memo(max_entries: int = 4) -> Memo[str]:
    return Memo(f"test-memo-{next(_names)}", max_entries=max_entries)


def test_least_recently_used_entry_is_evicted_beyond_the_bound() -> None:
    kept = _memo(max_entries=2)
    kept.put(Key("a"), "A")
    kept.put(Key("b"), "B")
    assert kept.get(Key("a")) == "A"  # now "b" is the least recently used
    kept.put(Key("c"), "C")
    assert kept.get(Key("b")) is None
    assert (kept.get(Key("a")), kept.get(Key("c"))) == ("A", "C")
    assert kept.stats().entries == 2


def test_every_part_of_the_key_tells_values_apart() -> None:
    kept = _memo(max_entries=8)
    base = Key("store-v1", thread="t", head="h1", settings=memo.digest(0.7, 100), what="series")
    kept.put(base, "base")
    for other in (
        Key("store-v2", thread="t", head="h1", settings=base.settings, what="series"),
        Key("store-v1", thread="u", head="h1", settings=base.settings, what="series"),
        Key("store-v1", thread="t", head="h2", settings=base.settings, what="series"),
        Key("store-v1", thread="t", head="h1", settings=memo.digest(0.7, 200), what="series"),
        Key("store-v1", thread="t", head="h1", settings=base.settings, what="rail"),
    ):
        assert kept.get(other) is None
    assert (
        kept.get(Key("store-v1", thread="t", head="h1", settings=memo.digest(0.7, 100), what="series"))
        == "base"
    )


def test_concurrent_misses_of_one_key_compute_once_and_all_get_the_value() -> None:
    kept = _memo()
    calls = 0
    started = threading.Event()

    def compute() -> str:
        nonlocal calls
        calls += 1
        started.set()
        # Hold the computation until all seven others have arrived and are waiting: a fixed sleep
        # let a slow CI machine start some of them after the value was kept (hits, not waits).
        deadline = time.monotonic() + 10
        while kept.stats().waits < 7 and time.monotonic() < deadline:
            time.sleep(0.01)
        return "value"

    results: list[str] = []
    lock = threading.Lock()

    def ask() -> None:
        found = kept.get_or_compute(Key("s", thread="t"), compute)
        with lock:
            results.append(found)

    first = threading.Thread(target=ask)
    first.start()
    started.wait(5)
    others = [threading.Thread(target=ask) for _ in range(7)]
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join(15)
    assert calls == 1
    assert results == ["value"] * 8
    stats = kept.stats()
    assert (stats.misses, stats.waits, stats.entries) == (1, 7, 1)


def test_a_result_marked_not_to_keep_is_returned_but_computed_again_next_time() -> None:
    kept = _memo()
    answers = iter(["locked", "fine"])

    def keep(value: str) -> bool:
        return value != "locked"

    assert kept.get_or_compute(Key("s"), lambda: next(answers), keep=keep) == "locked"
    assert kept.stats().entries == 0
    assert kept.get_or_compute(Key("s"), lambda: next(answers), keep=keep) == "fine"
    assert kept.get_or_compute(Key("s"), lambda: "never computed", keep=keep) == "fine"
    assert kept.stats().hits == 1


def test_a_failed_computation_is_not_kept_and_a_waiter_computes_again() -> None:
    kept = _memo()
    started, release = threading.Event(), threading.Event()

    def failing() -> str:
        started.set()
        release.wait(5)
        raise RuntimeError("store went away")

    errors: list[BaseException] = []

    def lead() -> None:
        try:
            kept.get_or_compute(Key("s"), failing)
        except RuntimeError as exc:
            errors.append(exc)

    waited: list[str] = []
    leader = threading.Thread(target=lead)
    leader.start()
    started.wait(5)
    waiter = threading.Thread(
        target=lambda: waited.append(kept.get_or_compute(Key("s"), lambda: "second try"))
    )
    waiter.start()
    time.sleep(0.05)
    release.set()
    leader.join(5)
    waiter.join(5)
    assert [str(e) for e in errors] == ["store went away"]
    assert waited == ["second try"]
    assert kept.get(Key("s")) == "second try"


def test_reset_forgets_every_registered_memo_and_a_value_computed_across_it() -> None:
    first, second = _memo(), _memo()
    first.put(Key("a"), "A")
    second.put(Key("b"), "B")

    def computed_while_reset() -> str:
        memo.reset()
        return "older than the reset"

    third = _memo()
    assert third.get_or_compute(Key("c"), computed_while_reset) == "older than the reset"
    assert (first.get(Key("a")), second.get(Key("b")), third.get(Key("c"))) == (None, None, None)


def test_stats_report_each_named_memo() -> None:
    kept = _memo()
    kept.get(Key("missing"))
    kept.get_or_compute(Key("x"), lambda: "X")
    kept.get_or_compute(Key("x"), lambda: "X")
    found = memo.stats()[kept.name]
    assert (found.hits, found.misses, found.waits, found.entries, found.max_entries) == (1, 2, 0, 1, 4)


def test_two_memos_cannot_share_a_name() -> None:
    kept = _memo()
    with pytest.raises(ValueError, match="exists already"):
        Memo(kept.name, max_entries=1)

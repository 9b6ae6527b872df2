"""Pausing Python's cyclic garbage collector while a bulk read builds many small objects.

The thread list over 10,000 threads allocates some 10^5 tuples, rows and dicts, none of them in a reference
cycle, so reference counting frees them all. Their allocation counts still trigger the cyclic collector,
and each full collection walks the whole heap: measured at about 130 ms of a 450 ms list in a process that
had loaded LangGraph. The pause is process-wide, so it is counted: the collector resumes when the last
pause ends, and is left off if it was already off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0
_resume = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()

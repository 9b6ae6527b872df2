"""How a process that reads Mycel's stores sets up Python's cyclic collector: once, at start, never per read.

The thread list over 10,000 threads builds some 10^5 small tuples, rows and dicts, none in a reference
cycle (reference counting frees them all). Their allocations still trigger collections, and a full one
walks the whole heap: the modules a dashboard worker has loaded (Django, LangGraph…) are most of it.
Freezing what is loaded at start moves it into the permanent generation, which no collection walks, and a
larger generation-0 threshold makes the list's allocations trigger few young collections. Both are set
once per process (a gunicorn worker after loading the app, a CLI run after its imports): a read never
flips a process-wide switch under another request's feet. Cycles are still collected, only less often.
"""

from __future__ import annotations

import gc

# Young objects allowed before a generation-0 collection (CPython's default is 700). A list allocates
# ~10^5; at 50,000 it triggers two young collections instead of ~150, and older generations in step.
GEN0_THRESHOLD = 50_000


def settle_heap() -> None:
    """Freeze every object alive now (imports, settings) and collect young objects less often."""
    gc.freeze()
    young, middle, old = gc.get_threshold()
    gc.set_threshold(max(young, GEN0_THRESHOLD), middle, old)

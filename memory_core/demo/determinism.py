"""A virtual clock and seeded ids, so a demo home is identical for a given seed.

LangGraph stamps checkpoints with the wall clock (uuid6 ids, ISO `ts`), draws channel-version suffixes
and uuid6 node bits from the global `random`, and `add_messages` gives id-less messages a uuid4.
`frozen_langgraph` points exactly those module globals at our clock and generators while a demo thread
is written, and restores them afterwards; everything else is LangGraph's own code.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from types import ModuleType, SimpleNamespace
from typing import Any

# 2026-11-30 09:00:00 UTC, the day the real sample home was recorded.
_BASE_EPOCH = 1796029200.0
_ALNUM = string.ascii_letters + string.digits


class DemoClock:
    """Monotonic virtual time in nanoseconds; every read moves it forward by a few milliseconds."""

    def __init__(self, *, seed: int, start_epoch: float | None = None) -> None:
        self._rng = random.Random(f"clock:{seed}")
        start = _BASE_EPOCH + (seed % 97) * 60 if start_epoch is None else start_epoch
        self.start_epoch = start  # before anything the demo's agents did
        self._ns = int(start * 1_000_000_000)

    def time_ns(self) -> int:
        self._ns += self._rng.randint(300_000, 9_000_000)
        return self._ns

    def now_epoch(self) -> float:
        """Seconds since the epoch (advances the clock)."""
        return self.time_ns() / 1_000_000_000

    def advance(self, seconds: float) -> None:
        """Let time pass, e.g. while a tool runs or the owner types the next message."""
        self._ns += int(seconds * 1_000_000_000)

    def utc(self) -> datetime:
        return datetime.fromtimestamp(self.time_ns() / 1_000_000_000, tz=UTC)

    def local_iso(self) -> str:
        """Naive ISO time with microseconds, like Mycel's `datetime.now().isoformat()` (demo local time = UTC)."""
        return self.utc().replace(tzinfo=None).isoformat(timespec="microseconds")

    def sqlite_utc(self) -> str:
        """`YYYY-MM-DD HH:MM:SS`, like SQLite's CURRENT_TIMESTAMP / datetime('now')."""
        return self.utc().strftime("%Y-%m-%d %H:%M:%S")

    def iso_z(self) -> str:
        return self.utc().isoformat(timespec="microseconds").replace("+00:00", "Z")


class SeededIds:
    """Every id a demo home needs, drawn from one seeded generator."""

    def __init__(self, seed: int, namespace: str = "ids") -> None:
        self._rng = random.Random(f"{namespace}:{seed}")

    def uuid4(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def hex(self, length: int) -> str:
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(length))

    def alnum(self, length: int) -> str:
        return "".join(self._rng.choice(_ALNUM) for _ in range(length))

    def member_id(self) -> str:
        return "m_" + self.alnum(12)

    def randint(self, low: int, high: int) -> int:
        return self._rng.randint(low, high)

    def random(self) -> random.Random:
        return self._rng


def _frozen_datetime(clock: DemoClock) -> type[datetime]:
    class _ClockDatetime(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            moment = clock.utc()
            return moment if tz is not None else moment.replace(tzinfo=None)

    return _ClockDatetime


@contextmanager
def frozen_langgraph(clock: DemoClock, ids: SeededIds) -> Iterator[None]:
    """Route LangGraph's clock and randomness through `clock` and `ids` for the duration."""
    from langgraph.checkpoint.base import id as lg_id
    from langgraph.checkpoint.sqlite import aio as lg_aio
    from langgraph.graph import message as lg_message
    from langgraph.pregel import _checkpoint as lg_checkpoint

    rng = ids.random()
    # (module, global, stand-in): set by name, as these globals are LangGraph's private imports.
    patches: tuple[tuple[ModuleType, str, object], ...] = (
        (lg_id, "time", SimpleNamespace(time_ns=clock.time_ns)),
        (lg_id, "random", rng),
        (lg_id, "_last_v6_timestamp", None),
        (lg_aio, "random", rng),
        (lg_message, "uuid", SimpleNamespace(uuid4=lambda: uuid.UUID(ids.uuid4()))),
        (lg_checkpoint, "datetime", _frozen_datetime(clock)),
    )
    saved = [(module, name, getattr(module, name)) for module, name, _ in patches]
    for module, name, stand_in in patches:
        setattr(module, name, stand_in)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def epoch_to_local_iso(epoch: float) -> str:
    return (datetime(1970, 1, 1) + timedelta(seconds=epoch)).isoformat(timespec="microseconds")

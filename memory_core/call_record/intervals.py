"""Sets of whole numbers made of closed intervals, and where a monotone function lands in a range.

The settings in force are inferred as the context limits consistent with every piece of evidence; each
piece says "the limit lies in these intervals", and Mycel's arithmetic is monotone in the limit, so a
binary search finds each boundary exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

# No model has a window anywhere near this; it stands for "no upper bound".
UNBOUNDED = 100_000_000
# Round steps, largest first: 50,000,000, 10,000,000, 5,000,000 … 10, 5, 1.
_NICE_STEPS: tuple[int, ...] = tuple(sorted({m * 10**e for e in range(8) for m in (1, 5)}, reverse=True))


@dataclass(frozen=True, slots=True)
class Limits:
    """A union of disjoint closed intervals [lo, hi] of whole numbers, sorted."""

    spans: tuple[tuple[int, int], ...]

    @classmethod
    def between(cls, lo: int, hi: int) -> Limits:
        return cls(((lo, hi),) if lo <= hi else ())

    @classmethod
    def everything(cls) -> Limits:
        return cls.between(1, UNBOUNDED)

    @classmethod
    def union(cls, parts: Iterable[Limits]) -> Limits:
        spans = sorted(span for part in parts for span in part.spans)
        merged: list[tuple[int, int]] = []
        for lo, hi in spans:
            if merged and lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
            else:
                merged.append((lo, hi))
        return cls(tuple(merged))

    def __bool__(self) -> bool:
        return bool(self.spans)

    def __contains__(self, value: int) -> bool:
        return any(lo <= value <= hi for lo, hi in self.spans)

    def __and__(self, other: Limits) -> Limits:
        out = []
        for a_lo, a_hi in self.spans:
            for b_lo, b_hi in other.spans:
                lo, hi = max(a_lo, b_lo), min(a_hi, b_hi)
                if lo <= hi:
                    out.append((lo, hi))
        return Limits(tuple(sorted(out)))

    @property
    def low(self) -> int:
        return self.spans[0][0]

    @property
    def high(self) -> int:
        return self.spans[-1][1]

    @property
    def bounded(self) -> bool:
        return bool(self.spans) and self.high < UNBOUNDED

    def at_least(self, value: int) -> Limits:
        return self & Limits.between(value, UNBOUNDED)

    def roundest(self) -> int:
        """The member a person would have typed: a multiple of the largest step of 1, 5, 10, 50, 100…
        that has one (people set 5,500, not 5,437), the smallest such multiple."""
        for step in _NICE_STEPS:
            for lo, hi in self.spans:
                first: int = -(-lo // step) * step
                if first <= hi:
                    return first
        return self.low

    def words(self) -> str:
        """How the page says it: "between 5,250 and 5,714", "at least 9,001", "5,500"."""
        if not self.spans:
            return "no limit at all"
        parts = []
        for lo, hi in self.spans:
            if hi >= UNBOUNDED:
                parts.append(f"at least {lo:,}")
            elif lo == hi:
                parts.append(f"{lo:,}")
            else:
                parts.append(f"between {lo:,} and {hi:,}")
        return " or ".join(parts)


def preimage(
    f: Callable[[int], int], lo: int, hi: int, *, at_least: int | None = None, at_most: int | None = None
) -> Limits:
    """The x in [lo, hi] with at_least <= f(x) <= at_most, for f non-decreasing on [lo, hi]."""
    if lo > hi:
        return Limits(())
    start = lo if at_least is None else _first(lambda x: f(x) >= at_least, lo, hi)
    end = hi if at_most is None else _first(lambda x: f(x) > at_most, lo, hi) - 1
    return Limits.between(start, end)


def _first(holds: Callable[[int], bool], lo: int, hi: int) -> int:
    """The smallest x in [lo, hi] where a monotone `holds` is true (hi + 1 when it never is)."""
    left, right = lo, hi + 1
    while left < right:
        mid = (left + right) // 2
        if holds(mid):
            right = mid
        else:
            left = mid + 1
    return left

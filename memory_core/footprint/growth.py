"""A thread's growth per turn: the bytes each turn added, a least-squares line through them, the size
after N more turns.

LangGraph stores the whole message list at every checkpoint, so the bytes a turn adds grow about linearly
with the turn number, and a thread's total with its square. A turn starts at a checkpoint whose metadata
`source` is "input" (LangGraph writes one per invocation with input), or at an "update" that follows a
run's own checkpoints: Mycel adds each later owner message with an update and then runs the graph without
input, so in the sample home Mycel wrote, only a thread's first turn has an "input" checkpoint.
Checkpoints before the first such start belong to turn 1, and a thread with none at all counts each
checkpoint as a turn.

The quadratic rule (`quadratic`): the line rises (b > 0), explains the turns well (r2 >= 0.5), and its
growth term is a real part of the latest turn (b x turns >= 10 % of the latest turn's bytes), so a flat
thread with noise, or one whose turns are dominated by one big tool output, is not called quadratic.

Only a thread of at least MIN_TURNS_TO_FIT (8) turns is fitted at all. r2 >= 0.5 over 8 turns is a rising
line at the 5 % level (Pearson's r >= 0.707 with 6 degrees of freedom): turns of pure noise pass the rule
about one time in forty. Over 3 turns they pass it one time in four, and a line through 3 points,
extrapolated 50 turns, projected a 608 KB thread past the biggest one. A shorter thread grows at its mean
bytes per turn, labelled so (TOO_FEW_TURNS), and is never called quadratic.

The projection (`Pace.projected_bytes`) adds the fitted line's bytes over the next turns where the line is
above zero, summed exactly and rounded half up once: a form SQL computes from a handful of columns, so the
fleet index ranks a fleet by its projection for any number of turns (mycel_dashboard/web/fleet_storage.py,
tested equal to this one).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.footprint.facts import CheckpointBytes, ThreadBytes

# Fewer turns than this give no line worth fitting (see the module's docstring for why 8): the mean per
# turn stands in, labelled so.
MIN_TURNS_TO_FIT = 8
MIN_R2 = 0.5
MIN_GROWTH_SHARE = 0.10

FITTED = "fitted"
TOO_FEW_TURNS = f"fewer than {MIN_TURNS_TO_FIT} turns to fit"
NO_CHECKPOINTS = "no checkpoints"


@dataclass(frozen=True, slots=True)
class TurnBytes:
    """One turn: its number (1-based), where it starts, and the bytes its checkpoints added."""

    turn: int
    first_checkpoint_id: str
    checkpoints: int
    bytes: int


@dataclass(frozen=True, slots=True)
class GrowthFit:
    """bytes_of_turn(t) ~ a + b*t, fitted by least squares over the thread's turns."""

    a: float
    b: float
    r2: float  # 1.0 when the line passes through every turn (a flat thread included)

    def bytes_of_turn(self, turn: int) -> int:
        # A turn never adds negative bytes, whatever a falling line says.
        return max(0, round(self.a + self.b * turn))

    def rising_turns(self, after: int) -> tuple[int, int | None]:
        """(first, last) of the turns after `after` whose fitted bytes are above zero: a line is above zero
        on one run of turns; last None when it never falls to zero again, last < first when it is nowhere."""
        a, b, first = self.a, self.b, after + 1
        if b > 0:
            if a + b * first <= 0:
                first = max(first, math.floor(-a / b))
                while a + b * first <= 0:  # the division's rounding, settled on the line itself
                    first += 1
            return first, None
        if b == 0:
            return first, None if a > 0 else after
        last = max(after, math.ceil(-a / b))
        while a + b * (last + 1) > 0:
            last += 1
        while last >= first and a + b * last <= 0:
            last -= 1
        return first, last


@dataclass(frozen=True, slots=True)
class Pace:
    """What projects a thread, in the scalars the fleet index keeps: today's bytes, its turns, its pace
    per turn and how it was found, the fitted line and the run of next turns where that line is above 0."""

    total_bytes: int  # today's bytes (ThreadBytes.total)
    turns: int
    growth_bytes_per_turn: int  # the fitted bytes of the next turn; the mean per turn when not fitted
    basis: str  # FITTED | TOO_FEW_TURNS | NO_CHECKPOINTS
    quadratic: bool
    fit: GrowthFit | None = None
    rising_from: int = 0  # with a fit: the first next turn whose fitted bytes are above zero
    rising_until: int | None = None  # with a fit: the last one (None: no end)

    def projected_bytes(self, turns_ahead: int) -> int:
        """Today's bytes plus what the next `turns_ahead` turns add at the thread's pace (the module says
        how; fleet_storage.py says it again in SQL, in this very order of operations)."""
        if turns_ahead <= 0:
            return self.total_bytes
        if self.fit is None:
            return self.total_bytes + turns_ahead * self.growth_bytes_per_turn
        last = self.turns + turns_ahead
        if self.rising_until is not None:
            last = min(last, self.rising_until)
        n = last - self.rising_from + 1
        if n <= 0:
            return self.total_bytes
        a, b = self.fit.a, self.fit.b
        return self.total_bytes + math.floor(n * a + b * (self.rising_from + last) * n / 2 + 0.5)


@dataclass(frozen=True, slots=True)
class Growth:
    """A thread's turns, their fitted line (None with fewer than MIN_TURNS_TO_FIT) and what follows."""

    turns: tuple[TurnBytes, ...]
    fit: GrowthFit | None
    quadratic: bool
    growth_bytes_per_turn: int  # the fitted bytes of the next turn; the mean per turn when not fitted
    basis: str  # FITTED | TOO_FEW_TURNS | NO_CHECKPOINTS: how growth_bytes_per_turn was found
    total_bytes: int  # today's bytes (ThreadBytes.total)

    @property
    def pace(self) -> Pace:
        if self.fit is None:
            return Pace(
                self.total_bytes, len(self.turns), self.growth_bytes_per_turn, self.basis, self.quadratic
            )
        rising_from, rising_until = self.fit.rising_turns(len(self.turns))
        return Pace(
            self.total_bytes,
            len(self.turns),
            self.growth_bytes_per_turn,
            self.basis,
            self.quadratic,
            self.fit,
            rising_from,
            rising_until,
        )

    def projected_bytes(self, turns_ahead: int) -> int:
        """Today's bytes plus what the next `turns_ahead` turns add at the thread's pace."""
        return self.pace.projected_bytes(turns_ahead)


@dataclass(frozen=True, slots=True)
class CheckpointPoint:
    """One checkpoint as the bytes-per-checkpoint chart draws it (oldest first)."""

    index: int  # 1-based position in the thread
    checkpoint_id: str
    turn: int
    checkpoint: int  # the checkpoint and metadata columns
    writes: int
    blobs: int
    total: int
    cumulative: int


def starts_turn(source: str | None, previous: str | None) -> bool:
    """Whether a checkpoint opens a turn: an "input", or an "update" that follows the work of a run."""
    if source == "input":
        return True
    # Mycel puts every later owner message in with an update (its checkpoint is "update", the run then
    # loops); a second update in a row (a cancellation marker, then the next message) is one turn.
    return source == "update" and previous not in (None, "update", "input")


def turn_numbers(checkpoints: Sequence[CheckpointBytes]) -> tuple[int, ...]:
    """The turn each checkpoint (oldest first) belongs to."""
    numbers: list[int] = []
    turn, opened, previous = 1, False, None
    for checkpoint in checkpoints:
        # Checkpoints before the first opening belong to turn 1, and that first opening continues it.
        if starts_turn(checkpoint.source, previous):
            turn += 1 if opened else 0
            opened = True
        previous = checkpoint.source
        numbers.append(turn)
    if not opened:
        return tuple(range(1, len(checkpoints) + 1))
    return tuple(numbers)


def turn_bytes(thread: ThreadBytes) -> tuple[TurnBytes, ...]:
    """The bytes each turn's checkpoints (with their writes and first-referenced blobs) added."""
    # One pass of plain lists (the fleet's report runs this for 10,000 threads).
    firsts: list[str] = []
    counts: list[int] = []
    sizes: list[int] = []
    for checkpoint, turn in zip(thread.checkpoints, turn_numbers(thread.checkpoints), strict=True):
        size = checkpoint.checkpoint + checkpoint.metadata + checkpoint.writes + checkpoint.blobs
        if turn > len(firsts):
            firsts.append(checkpoint.checkpoint_id)
            counts.append(1)
            sizes.append(size)
        else:
            counts[-1] += 1
            sizes[-1] += size
    return tuple(
        TurnBytes(n, first, count, size)
        for n, (first, count, size) in enumerate(zip(firsts, counts, sizes, strict=True), start=1)
    )


def fit_line(values: Sequence[int]) -> GrowthFit:
    """Least squares of values[i] against t = i + 1."""
    n = len(values)
    ts = range(1, n + 1)
    mean_t = sum(ts) / n
    mean_y = sum(values) / n
    sxx = sum((t - mean_t) ** 2 for t in ts)
    sxy = sum((t - mean_t) * (y - mean_y) for t, y in zip(ts, values, strict=True))
    b = sxy / sxx if sxx else 0.0
    a = mean_y - b * mean_t
    ss_tot = sum((y - mean_y) ** 2 for y in values)
    ss_res = sum((y - (a + b * t)) ** 2 for t, y in zip(ts, values, strict=True))
    r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    return GrowthFit(a=a, b=b, r2=r2)


def thread_growth(thread: ThreadBytes) -> Growth:
    """The thread's turns, its fitted line and whether it grows quadratically (the module's rule)."""
    turns = turn_bytes(thread)
    total = sum(t.bytes for t in turns) + thread.other_bytes  # ThreadBytes.total, without a second pass
    if not turns:
        return Growth((), None, False, 0, NO_CHECKPOINTS, total)
    if len(turns) < MIN_TURNS_TO_FIT:
        mean = round(sum(t.bytes for t in turns) / len(turns))
        return Growth(turns, None, False, mean, TOO_FEW_TURNS, total)
    fit = fit_line([t.bytes for t in turns])
    latest = turns[-1].bytes
    quadratic = fit.b > 0 and fit.r2 >= MIN_R2 and fit.b * len(turns) >= MIN_GROWTH_SHARE * latest
    return Growth(turns, fit, quadratic, fit.bytes_of_turn(len(turns) + 1), FITTED, total)


def bytes_per_checkpoint(thread: ThreadBytes) -> tuple[CheckpointPoint, ...]:
    """Each checkpoint's bytes, split as the chart stacks them, with the running total."""
    points: list[CheckpointPoint] = []
    running = 0
    numbers = turn_numbers(thread.checkpoints)
    for index, (checkpoint, turn) in enumerate(zip(thread.checkpoints, numbers, strict=True), start=1):
        running += checkpoint.total
        points.append(
            CheckpointPoint(
                index=index,
                checkpoint_id=checkpoint.checkpoint_id,
                turn=turn,
                checkpoint=checkpoint.checkpoint + checkpoint.metadata,
                writes=checkpoint.writes,
                blobs=checkpoint.blobs,
                total=checkpoint.total,
                cumulative=running,
            )
        )
    return tuple(points)


@dataclass(frozen=True, slots=True)
class Footprint:
    """A thread's place in the Storage report, less its name: the store holding it, its root checkpoints
    and its pace (what the fleet index keeps of its bytes)."""

    store: str
    layout: str
    checkpoints: int
    pace: Pace


def footprint(thread: ThreadBytes, growth: Growth | None = None) -> Footprint:
    """The thread's footprint; `growth`, when the caller fitted it already, is not fitted again."""
    pace = (growth if growth is not None else thread_growth(thread)).pace
    return Footprint(thread.store, thread.layout, len(thread.checkpoints), pace)

"""A thread's growth per turn, checked against figures computed by hand."""

from __future__ import annotations

import pytest

from memory_core.footprint.facts import CheckpointBytes, ThreadBytes
from memory_core.footprint.growth import (
    FITTED,
    NO_CHECKPOINTS,
    TOO_FEW_TURNS,
    bytes_per_checkpoint,
    fit_line,
    thread_growth,
    turn_bytes,
    turn_numbers,
)


def _checkpoint(n: int, source: str | None, checkpoint: int, *, writes: int = 0) -> CheckpointBytes:
    return CheckpointBytes(f"c{n:03d}", None, checkpoint, 0, writes, source=source)


def _thread(*turns: tuple[int, ...], other: int = 0) -> ThreadBytes:
    """One input checkpoint per turn followed by loop checkpoints; each number a checkpoint's bytes."""
    checkpoints: list[CheckpointBytes] = []
    for turn in turns:
        for i, size in enumerate(turn):
            checkpoints.append(_checkpoint(len(checkpoints), "input" if i == 0 else "loop", size))
    return ThreadBytes("t", "leon.db", "main", tuple(checkpoints), other_bytes=other)


def test_exact_quadratic_thread_is_fitted_exactly() -> None:
    # Turn t adds 100*t bytes (two checkpoints of 40t and 60t): the total is 50 t (t+1), a quadratic.
    thread = _thread(*[(40 * t, 60 * t) for t in range(1, 9)])
    growth = thread_growth(thread)
    assert [t.bytes for t in growth.turns] == [100, 200, 300, 400, 500, 600, 700, 800]
    assert growth.fit is not None
    assert growth.fit.a == pytest.approx(0.0, abs=1e-9)
    assert growth.fit.b == pytest.approx(100.0)
    assert growth.fit.r2 == pytest.approx(1.0)
    assert growth.quadratic
    assert growth.basis == FITTED
    assert growth.growth_bytes_per_turn == 900
    # 3,600 today + turn 9 (900) + turn 10 (1,000).
    assert growth.projected_bytes(2) == 5500
    assert growth.projected_bytes(0) == 3600


def test_flat_thread_is_not_quadratic() -> None:
    growth = thread_growth(_thread(*[(300, 200)] * 8))
    assert growth.fit is not None
    assert growth.fit.b == pytest.approx(0.0)
    assert growth.fit.r2 == 1.0  # the line passes through every turn
    assert not growth.quadratic
    assert growth.growth_bytes_per_turn == 500
    assert growth.projected_bytes(10) == 4000 + 5000


def test_noisy_thread_without_growth_is_not_quadratic() -> None:
    # 1000, 10, 1000, 10, 1000, 10, 1000, 1010: a line rises a little but explains almost nothing.
    growth = thread_growth(_thread((1000,), (10,), (1000,), (10,), (1000,), (10,), (1000,), (1010,)))
    assert growth.fit is not None
    assert growth.fit.b > 0
    assert growth.fit.r2 < 0.5
    assert not growth.quadratic


def test_small_growth_beside_a_big_constant_is_not_quadratic() -> None:
    # Turns of 10,000 + t bytes: a perfect line, but its growth is 0.05 % of a turn.
    growth = thread_growth(_thread(*[(10_000 + t,) for t in range(1, 9)]))
    assert growth.fit is not None
    assert growth.fit.r2 == pytest.approx(1.0)
    assert not growth.quadratic
    assert growth.growth_bytes_per_turn == 10_009


def test_a_short_thread_rising_perfectly_is_not_called_quadratic() -> None:
    # 3 turns on a perfect line (100, 200, 300): a line through them would project 50 more turns as
    # 50 × 400 + … bytes; under 8 turns the mean per turn (200) stands in and nothing is called quadratic.
    growth = thread_growth(_thread((100,), (200,), (300,)))
    assert growth.fit is None
    assert not growth.quadratic
    assert growth.basis == TOO_FEW_TURNS == "fewer than 8 turns to fit"
    assert growth.growth_bytes_per_turn == 200
    assert growth.projected_bytes(50) == 600 + 50 * 200
    # Seven turns: still the mean; the eighth fits the line.
    assert thread_growth(_thread(*[(100 * t,) for t in range(1, 8)])).basis == TOO_FEW_TURNS
    eight = thread_growth(_thread(*[(100 * t,) for t in range(1, 9)]))
    assert (eight.basis, eight.quadratic) == (FITTED, True)


@pytest.mark.parametrize(
    ("turns", "mean"),
    [(((700, 300),), 1000), (((100,), (300, 200)), 300), (tuple((100 * t,) for t in range(1, 8)), 400)],
)
def test_fewer_than_eight_turns_use_the_mean_per_turn(turns: tuple[tuple[int, ...], ...], mean: int) -> None:
    growth = thread_growth(_thread(*turns, other=50))
    assert growth.fit is None
    assert not growth.quadratic
    assert growth.basis == TOO_FEW_TURNS
    assert growth.growth_bytes_per_turn == mean
    assert growth.projected_bytes(3) == growth.total_bytes + 3 * mean


def test_thread_without_checkpoints_or_bytes() -> None:
    empty = thread_growth(ThreadBytes("t", "leon.db", "main", (), other_bytes=0))
    assert (empty.turns, empty.growth_bytes_per_turn, empty.basis) == ((), 0, NO_CHECKPOINTS)
    assert empty.projected_bytes(50) == 0
    zero = thread_growth(_thread((0, 0), *[(0,)] * 7))
    assert zero.fit is not None
    assert (zero.fit.b, zero.fit.r2, zero.quadratic) == (0.0, 1.0, False)
    assert zero.growth_bytes_per_turn == 0
    assert zero.projected_bytes(50) == 0


def test_checkpoints_before_the_first_input_belong_to_turn_one() -> None:
    checkpoints = [
        _checkpoint(0, "update", 5),
        _checkpoint(1, "input", 10),
        _checkpoint(2, "loop", 20),
        _checkpoint(3, "input", 30),
        _checkpoint(4, "loop", 40, writes=7),
    ]
    assert turn_numbers(checkpoints) == (1, 1, 1, 2, 2)
    thread = ThreadBytes("t", "leon.db", "main", tuple(checkpoints))
    assert [(t.turn, t.checkpoints, t.bytes) for t in turn_bytes(thread)] == [(1, 3, 35), (2, 2, 77)]
    assert turn_bytes(thread)[1].first_checkpoint_id == "c003"


def test_without_an_input_checkpoint_each_checkpoint_is_a_turn() -> None:
    checkpoints = [_checkpoint(n, "loop", 10 * (n + 1)) for n in range(8)]
    assert turn_numbers(checkpoints) == (1, 2, 3, 4, 5, 6, 7, 8)
    growth = thread_growth(ThreadBytes("t", "leon.db", "main", tuple(checkpoints)))
    assert growth.fit is not None and growth.fit.b == pytest.approx(10.0)
    assert growth.growth_bytes_per_turn == 90


def test_a_falling_line_never_projects_negative_turns() -> None:
    growth = thread_growth(_thread(*[(100 * t,) for t in range(8, 0, -1)]))
    assert growth.fit is not None and growth.fit.b == pytest.approx(-100.0)
    assert growth.growth_bytes_per_turn == 0
    assert growth.projected_bytes(5) == 3600


def test_fit_line_by_hand() -> None:
    # y = 1, 3, 2 at t = 1, 2, 3: mean_t 2, mean_y 2, sxy = (-1)(-1) + 0 + (1)(0) = 1, sxx = 2 -> b = 0.5,
    # a = 1; residuals -0.5, 1, -0.5 -> ss_res 1.5, ss_tot 2 -> r2 = 0.25.
    fit = fit_line([1, 3, 2])
    assert (fit.a, fit.b, fit.r2) == pytest.approx((1.0, 0.5, 0.25))


def test_bytes_per_checkpoint_stacks_and_accumulates() -> None:
    thread = ThreadBytes(
        "t",
        "postgresql agent",
        "dev",
        (
            CheckpointBytes("a", None, 10, 2, 3, blobs=100, source="input"),
            CheckpointBytes("b", "a", 20, 2, 0, blobs=5, source="loop"),
        ),
    )
    points = bytes_per_checkpoint(thread)
    assert [(p.index, p.turn, p.checkpoint, p.writes, p.blobs, p.total, p.cumulative) for p in points] == [
        (1, 1, 12, 3, 100, 115, 115),
        (2, 1, 22, 0, 5, 27, 142),
    ]


def test_mycel_turns_open_at_an_update_after_a_run() -> None:
    # As Mycel wrote the sample home: input, loops, then every later message an update and its loops; a
    # cancellation marker (an update) right before the next message's update stays in one turn.
    sources = ["input", "loop", "loop", "update", "loop", "update", "update", "loop"]
    checkpoints = [_checkpoint(n, s, 1) for n, s in enumerate(sources)]
    assert turn_numbers(checkpoints) == (1, 1, 1, 2, 2, 3, 3, 3)


def test_projection_in_closed_form_equals_the_sum_of_fitted_turns() -> None:
    growth = thread_growth(_thread((120,), (250,), (310,), (470,), (520,), (610,), (790,), (830,)))
    assert growth.fit is not None
    by_turn = sum(growth.fit.a + growth.fit.b * t for t in range(9, 59))
    assert growth.projected_bytes(50) == growth.total_bytes + round(by_turn)

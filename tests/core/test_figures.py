"""The one formatting layer (memory_core/figures.py) over its edge cases: every page and CLI table writes
its figures through these functions, so each rule is pinned here once."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core import figures
from memory_core.figures import MINUS


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "—"),
        (0, "0"),
        (1, "1"),
        (9_999, "9,999"),
        (12_345, "12,345"),
        (-1_234, f"{MINUS}1,234"),
        (4632.0, "4,632"),  # a float count loses its ".0"
        (13158.5, "13,159"),  # halves round up, not to even
        (1159.06, "1,159"),
    ],
)
def test_count(value, shown) -> None:
    assert figures.count(value) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "—"),
        (0, "0 B"),
        (1, "1 B"),
        (999, "999 B"),
        (1000, "1.00 KB"),
        (1023, "1.02 KB"),  # decimal units: 1 KB is 1,000 bytes
        (1024, "1.02 KB"),
        (9_995, "10.0 KB"),  # rounding up to 10 drops a decimal
        (16_384, "16.4 KB"),
        (99_950, "100 KB"),
        (118_800, "119 KB"),
        (999_499, "999 KB"),
        (999_500, "1.00 MB"),  # never "1000 KB"
        (2_730_000, "2.73 MB"),
        (936_194_673, "936 MB"),
        (1_000_000_000, "1.00 GB"),
        (1_073_741_824, "1.07 GB"),
        (-1_234, f"{MINUS}1.23 KB"),
    ],
)
def test_size(value, shown) -> None:
    assert figures.size(value) == shown


def test_size_exact_is_the_title() -> None:
    assert figures.size_exact(2_414_568) == "2,414,568 bytes"
    assert figures.size_exact(1) == "1 byte"
    assert figures.size_exact(None) == "—"


@given(st.integers(min_value=0, max_value=10**18))
def test_size_has_at_most_three_digits_before_a_unit_past_bytes(n: int) -> None:
    number, unit = figures.size(n).split(" ")
    assert unit in ("B", "KB", "MB", "GB", "TB", "PB")
    if unit != "B" and unit != "PB":
        digits = number.replace(".", "")
        assert len(digits.lstrip("0")) <= 3, number
        assert 1 <= float(number) < 1000


@pytest.mark.parametrize(
    ("value", "shown", "exact"),
    [
        (None, "—", "—"),
        (Decimal("0"), "$0.00", "$0.00"),
        (Decimal("0.004"), "<$0.01", "$0.004"),  # tiny but not free
        (Decimal("0.005"), "$0.01", "$0.005"),
        (Decimal("0.959389"), "$0.96", "$0.959389"),
        (Decimal("0.15228645"), "$0.15", "$0.15228645"),
        (Decimal("3"), "$3.00", "$3.00"),
        (Decimal("1E+1"), "$10.00", "$10.00"),
        (Decimal("1234.567"), "$1,234.57", "$1,234.567"),
        (Decimal("-0.5"), f"{MINUS}$0.50", f"{MINUS}$0.50"),
    ],
)
def test_money_to_the_cent_and_exact(value, shown, exact) -> None:
    assert figures.money(value) == shown
    assert figures.money_exact(value) == exact


@pytest.mark.parametrize(
    ("value", "whole", "one_decimal"),
    [
        (None, "—", "—"),
        (0, "0 %", "0.0 %"),
        (0.004, "<1 %", "0.4 %"),
        (0.0004, "<1 %", "<0.1 %"),
        (0.005, "1 %", "0.5 %"),  # halves round up
        (0.7, "70 %", "70.0 %"),
        (1.116, "112 %", "111.6 %"),
        (1.6, "160 %", "160.0 %"),
        (-0.05, f"{MINUS}5 %", f"{MINUS}5.0 %"),
    ],
)
def test_percent(value, whole, one_decimal) -> None:
    assert figures.percent(value) == whole
    assert figures.percent(value, decimals=1) == one_decimal


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, "—"), (0, "0.00"), (0.49915, "0.50"), (8.1476, "8.15"), (1002.41, "1,002.41"), (0.004, "<0.01")],
)
def test_ratio(value, shown) -> None:
    assert figures.ratio(value) == shown


def test_signed_changes() -> None:
    assert figures.delta(1_234) == "+1,234"
    assert figures.delta(-1_234) == f"{MINUS}1,234"
    assert figures.delta(0) == "0"
    assert figures.delta(None) == "—"
    assert figures.delta_size(12_300) == "+12.3 KB"
    assert figures.delta_size(-1_023) == f"{MINUS}1.02 KB"
    assert figures.delta_size(0) == "0 B"
    assert figures.delta_percent(0.05) == "+5 %"
    assert figures.delta_percent(-0.05) == f"{MINUS}5 %"
    assert figures.delta_percent(0) == "0 %"


@pytest.mark.parametrize(
    ("ms", "shown"),
    [
        (None, "—"),
        (0, "0 ms"),
        (340, "340 ms"),
        (1_234, "1.2 s"),
        (12_345, "12 s"),
        (125_000, "2 min 5 s"),
        (120_000, "2 min"),
        (3 * 3_600_000 + 4 * 60_000, "3 h 4 min"),
    ],
)
def test_duration(ms, shown) -> None:
    assert figures.duration_ms(ms) == shown

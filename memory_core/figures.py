"""How every figure reads, on every page and in every CLI table: one function per kind of number.

The rules, in one place (docs/screens.md, "How figures are written", says the same):
- counts and token counts: whole, with thousands separators ("12,345");
- sizes: decimal units, 1 KB = 1,000 B, as `ls -h --si` and disk makers count; three significant
  digits from 1 KB up ("1.02 KB", "16.4 KB", "119 KB", "2.73 MB"), exact bytes below ("999 B");
- money: US dollars to the cent ("$0.96"); a non-zero amount under a cent reads "<$0.01", never "$0.00";
  the exact value is `money_exact` (the page's title attribute) and the `--json` answer's;
- ratios (real ÷ estimate, a rate): two decimals ("0.60", "8.15"); a non-zero one under 0.005 "<0.01";
- percentages: whole ("70 %"), one decimal where a screen asks for it ("111.6 %"); a non-zero share
  that would round to 0 reads "<1 %" ("<0.1 %");
- signed changes: "+1,234", "−1,234" (a true minus sign), "0"; "+5 %", "−5 %";
- durations: "340 ms", "1.2 s", "2 min 5 s", "3 h 4 min".
None reads "—" everywhere. `--json` never goes through here: it keeps the exact numbers.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

NONE = "—"
MINUS = "\u2212"  # "−": a minus sign, not a hyphen
_SIZE_UNITS = ("KB", "MB", "GB", "TB", "PB")
_CENT = Decimal("0.01")

Number = int | float | Decimal


def count(value: Number | None) -> str:
    """A count or a token count: whole, with thousands separators; a fraction rounds to the nearest."""
    if value is None or isinstance(value, bool):
        return NONE if value is None else str(value)
    whole = int(Decimal(str(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return f"{MINUS}{-whole:,}" if whole < 0 else f"{whole:,}"


def size(value: Number | None) -> str:
    """Bytes with a decimal unit: "0 B", "999 B", "1.02 KB", "16.4 KB", "119 KB", "2.73 MB", "1.00 GB"."""
    if value is None:
        return NONE
    n = int(value)
    if n < 0:
        return MINUS + size(-n)
    if n < 1000:
        return f"{n} B"
    scaled = Decimal(n)
    for unit in _SIZE_UNITS:
        scaled /= 1000
        rounded = _three_digits(scaled)
        if rounded < 1000 or unit == _SIZE_UNITS[-1]:
            return f"{rounded:,f} {unit}"
    raise AssertionError("unreachable: the loop returns at its last unit")  # pragma: no cover


def _three_digits(value: Decimal) -> Decimal:
    """1 ≤ value: rounded to three significant digits (1.02, 16.4, 119); 999.5 rounds up to 1000."""
    for places in (2, 1):
        if value < 10 ** (3 - places):
            rounded = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
            if rounded < 10 ** (3 - places):
                return rounded
            # 9.995 → 10.0 and 99.95 → 100: one decimal fewer
    return value.quantize(Decimal(1), rounding=ROUND_HALF_UP)


def size_exact(value: int | None) -> str:
    """The exact byte count, for a size's title: "2,414,568 bytes"."""
    if value is None:
        return NONE
    return f"{count(value)} byte{'' if value == 1 else 's'}"


def money(value: Number | None) -> str:
    """US dollars to the cent: "$0.96", "$1,234.57"; under a cent but not zero "<$0.01"; "$0.00" for 0."""
    if value is None:
        return NONE
    amount = Decimal(str(value))
    sign = MINUS if amount < 0 else ""
    amount = abs(amount)
    if 0 < amount < Decimal("0.005"):
        return f"{sign}<$0.01"
    return f"{sign}${amount.quantize(_CENT, rounding=ROUND_HALF_UP):,}"


def money_exact(value: Number | None) -> str:
    """The exact amount, for a title: "$0.959389" (no exponent, no trailing zeros beyond the cents)."""
    if value is None:
        return NONE
    amount = Decimal(str(value))
    exact = abs(amount).normalize()
    text = f"{exact:,f}" if exact != exact.quantize(_CENT) else f"{exact.quantize(_CENT):,f}"
    return f"{MINUS if amount < 0 else ''}${text}"


def ratio(value: Number | None) -> str:
    """A ratio or rate (real ÷ estimate, tokens per estimated token): two decimals, "<0.01" when tiny."""
    if value is None:
        return NONE
    x = float(value)
    if 0 < abs(x) < 0.005:
        return f"{MINUS if x < 0 else ''}<0.01"
    text = f"{abs(x):,.2f}"
    return f"{MINUS}{text}" if x < 0 and text != "0.00" else text


def percent(value: Number | None, *, decimals: int = 0) -> str:
    """A ratio as a percentage: 0.7 → "70 %"; decimals=1: 1.116 → "111.6 %"; tiny non-zero "<1 %"."""
    if value is None:
        return NONE
    x = Decimal(str(value)) * 100
    step = Decimal(1).scaleb(-decimals)
    rounded = abs(x).quantize(step, rounding=ROUND_HALF_UP)
    sign = MINUS if x < 0 else ""
    if x and not rounded:
        return f"{sign}<{step:f} %"
    return f"{sign if rounded else ''}{rounded:,f} %"


def delta(value: Number | None) -> str:
    """A signed change of a count: "+1,234", "−1,234", "0"."""
    if value is None:
        return NONE
    text = count(value)
    return text if text == "0" or text.startswith(MINUS) else f"+{text}"


def delta_size(value: Number | None) -> str:
    """A signed change of a size: "+12.3 KB", "−1.02 KB", "0 B"."""
    if value is None:
        return NONE
    text = size(value)
    return text if text == "0 B" or text.startswith(MINUS) else f"+{text}"


def delta_percent(value: Number | None, *, decimals: int = 0) -> str:
    """A signed change as a percentage of what it changed: 0.05 → "+5 %", −0.05 → "−5 %"."""
    if value is None:
        return NONE
    text = percent(value, decimals=decimals)
    return text if text.startswith(MINUS) or text.strip(" %0.") == "" else f"+{text}"


def duration_ms(value: Number | None) -> str:
    """A duration given in milliseconds: "340 ms", "1.2 s", "2 min 5 s", "3 h 4 min"."""
    if value is None:
        return NONE
    ms = float(value)
    if ms < 0:
        return MINUS + duration_ms(-ms)
    if ms < 1000:
        return f"{count(ms)} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{count(seconds)} s"
    whole = int(Decimal(str(seconds)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{count(hours)} h {minutes} min" if minutes else f"{count(hours)} h"

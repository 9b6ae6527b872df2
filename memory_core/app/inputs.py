"""Typed values from the text a face received (a flag, a query parameter, a form field): one parser per
kind of value, each raising BadValue with the option's neutral name."""

from __future__ import annotations

import math
import re
from datetime import date

from memory_core.app.errors import BadValue
from memory_core.ids import printable
from memory_core.rules.profile import RulesProfile, UnknownRules, parse_rules

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(value: str | None, option: str) -> date | None:
    """A YYYY-MM-DD day, None when absent."""
    if value is None or value == "":
        return None
    text = value.strip()
    try:
        if not _DATE.fullmatch(text):
            raise ValueError
        return date.fromisoformat(text)
    except ValueError:
        raise BadValue(option, f"must be a date as YYYY-MM-DD, not {value!r}") from None


def parse_bounded(value: str | None, option: str, *, low: int, high: int, default: int) -> int:
    """A whole number from `low` to `high`; `default` when absent."""
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        number = low - 1
    if not low <= number <= high:
        raise BadValue(option, f"must be a whole number from {low} to {high:,}, not {printable(repr(value))}")
    return number


def parse_count(value: str | None, option: str, *, minimum: int) -> int | None:
    """An integer of at least `minimum` (a setting's value), None when absent."""
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise BadValue(option, f"must be an integer, not {value!r}") from None
    if number < minimum:
        wanted = "a positive integer" if minimum > 0 else "zero or a positive integer"
        raise BadValue(option, f"must be {wanted}, not {value!r}")
    return number


def parse_fraction(value: str | None, option: str) -> float | None:
    """A fraction >= 0 (the compaction threshold), None when absent."""
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise BadValue(option, f"must be a number, not {value!r}") from None
    # 0 is a legitimate what-if ("compact at every call"); the vectors from Mycel's code use it too.
    if not math.isfinite(number) or number < 0:
        raise BadValue(option, f"must be a fraction >= 0 (Mycel uses 0.7), not {value!r}")
    return number


def parse_rules_name(value: str | None, option: str = "rules") -> RulesProfile | None:
    """A rules profile by name (main, dev), None when absent."""
    if value is None:
        return None
    try:
        return parse_rules(value)
    except UnknownRules:
        choices = ", ".join(p.value for p in RulesProfile)
        raise BadValue(
            option, f"must name a rules profile ({choices}), not {printable(repr(value))}"
        ) from None

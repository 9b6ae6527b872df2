"""The memory rules a thread ran under: Mycel main's or Mycel dev's (reference mycel-dev.md §4).

The checkpoint layout says which Mycel wrote a thread, so it says which rules its calls followed.
"""

from __future__ import annotations

from enum import StrEnum


class RulesProfile(StrEnum):
    MAIN = "main"
    DEV = "dev"


class UnknownRules(ValueError):
    pass


def rules_for(layout: str) -> RulesProfile:
    """The rules of the Mycel that writes a checkpoint layout ("main" | "dev")."""
    return RulesProfile.DEV if layout == "dev" else RulesProfile.MAIN


def parse_rules(text: str) -> RulesProfile:
    """A profile by name; raises UnknownRules naming the choices."""
    try:
        return RulesProfile(text)
    except ValueError:
        choices = ", ".join(p.value for p in RulesProfile)
        raise UnknownRules(f"unknown rules profile {text!r} (choose {choices})") from None


def rules_reason(*, override: RulesProfile | None, layout: str) -> tuple[RulesProfile, str]:
    """The profile used and why, in the words `calls --json` prints ("--rules", "dev layout")."""
    if override is not None:
        return override, "--rules"
    return rules_for(layout), f"{layout} layout"

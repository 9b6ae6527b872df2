"""The URL parameters every screen that replays calls shares: which rules, and Mycel dev's trigger_tokens."""

from __future__ import annotations

from django import forms

from memory_core.rules.profile import RulesProfile
from mycel_dashboard.web.forms import LenientForm

RULES_CHOICES = [
    ("", "the thread's layout"),
    (RulesProfile.MAIN.value, "Mycel main's rules"),
    (RulesProfile.DEV.value, "Mycel dev's rules"),
]


class RulesForm(LenientForm):
    """`?rules=main|dev` overrides the rules a thread's layout chooses; `?trigger_tokens=N` proposes
    Mycel dev's absolute trigger (dev refuses 0, so the field does too)."""

    rules = forms.ChoiceField(required=False, choices=RULES_CHOICES, initial=None, label="rules")
    trigger_tokens = forms.IntegerField(
        required=False, min_value=1, max_value=100_000_000, initial=None, label="trigger_tokens"
    )

    def choice(self) -> tuple[RulesProfile | None, int | None, list[str]]:
        """(the rules override or None, the proposed trigger_tokens or None, what was ignored)."""
        values, problems = self.values()
        rules = RulesProfile(values["rules"]) if values["rules"] else None
        return rules, values["trigger_tokens"], problems

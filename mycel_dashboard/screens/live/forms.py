"""The Threads list's poll parameters: what the page was drawn up to."""

from __future__ import annotations

from django import forms

from mycel_dashboard.web.forms import LenientForm


class ListPollForm(LenientForm):
    # The newest head time the page showed (epoch seconds) and how many threads the list had then.
    since = forms.FloatField(required=False, min_value=0, max_value=1e11, label="since")
    known = forms.IntegerField(required=False, min_value=0, max_value=10_000_000, label="known")

    def poll(self) -> tuple[float | None, int | None]:
        """A bad value counts as not given: the answer is then relative to the stores as they are now."""
        values, _ = self.values()
        return values["since"], values["known"]

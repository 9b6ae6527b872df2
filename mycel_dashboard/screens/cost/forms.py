"""The Cost screen's period (URL parameters): a bad date is reported and ignored, never a failure."""

from __future__ import annotations

from datetime import date

from django import forms

from mycel_dashboard.web.forms import LenientForm


class PeriodForm(LenientForm):
    since = forms.DateField(required=False, input_formats=["%Y-%m-%d"], label="since")
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d"], label="until")
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000_000, label="page")

    def page_number(self) -> int:
        """The page of the per-thread table (1 when absent or not a page number)."""
        values, _ = self.values()
        return int(values["page"] or 1)

    def period(self) -> tuple[date | None, date | None, list[str]]:
        values, problems = self.values()
        since, until = values["since"], values["until"]
        if since and until and since > until:
            problems.append(f"Ignored the period: since {since} is after until {until}.")
            return None, None, problems
        return since, until, problems

"""The Thread screen's URL parameters (timeline, full texts)."""

from __future__ import annotations

from django import forms

from mycel_dashboard.web.forms import LenientForm


class TimelineForm(LenientForm):
    view = forms.ChoiceField(
        required=False, choices=[("stored", "stored"), ("sent", "sent to the model")], initial="stored"
    )
    page = forms.IntegerField(required=False, min_value=1, initial=None, label="page")
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000_000, label="context limit")
    rail = forms.IntegerField(required=False, min_value=1, initial=1, label="checkpoint page")

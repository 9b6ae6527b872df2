"""The Checkpoint screen's URL parameters."""

from __future__ import annotations

from django import forms

from mycel_dashboard.web.forms import LenientForm


class CheckpointDiffForm(LenientForm):
    against = forms.CharField(required=False, max_length=20_000, label="compare with", initial="")

"""What an export request may carry: the format and, optionally, one checkpoint."""

from __future__ import annotations

from django import forms

from memory_core.app.export import FORMATS


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS])
    # Checkpoint ids are whatever LangGraph was given: kept as typed, only bounded in length.
    checkpoint = forms.CharField(required=False, max_length=10_000, strip=False)

"""The Storage screen's URL parameters: a bad value is named on the page and replaced by its default."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from memory_core.app.storage import DEFAULT_TURNS_AHEAD, MAX_TURNS_AHEAD, StorageSort
from mycel_dashboard.web.forms import LenientForm
from mycel_dashboard.web.ids import MAX_URL_ID, id_from_url


class StorageForm(LenientForm):
    sort = forms.ChoiceField(
        required=False,
        choices=[(s.value, s.value) for s in StorageSort],
        label="sort",
        initial=StorageSort.BYTES.value,
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000, label="page", initial=1)
    turns = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_TURNS_AHEAD,
        label="turns ahead",
        initial=DEFAULT_TURNS_AHEAD,
    )
    # A thread id in its URL form (web/ids.py), as the Threads list's ?family= takes it.
    thread = forms.CharField(required=False, strip=False, max_length=MAX_URL_ID, label="thread")

    def clean_thread(self) -> str | None:
        value: str = self.cleaned_data.get("thread") or ""
        if not value:
            return None
        try:
            return id_from_url(value)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc

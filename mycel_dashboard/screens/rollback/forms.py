"""What a rollback or undo confirmation may carry."""

from __future__ import annotations

from django import forms


class ConfirmRollbackForm(forms.Form):
    """The fingerprint ties the confirmation to the exact head the operator previewed."""

    fingerprint = forms.RegexField(regex=r"^[0-9a-f]{16}$", max_length=16)
    force = forms.BooleanField(required=False)

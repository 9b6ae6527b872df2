"""The Audit screen's filters."""

from __future__ import annotations

from typing import Any

from django import forms


class AuditFilterForm(forms.Form):
    action = forms.CharField(required=False, max_length=32)
    result = forms.CharField(required=False, max_length=16)
    thread = forms.CharField(required=False, max_length=20_000)
    actor = forms.CharField(required=False, max_length=150)
    page = forms.IntegerField(required=False, min_value=1)

    def values(self) -> dict[str, str | int]:
        if not self.is_valid():
            return {"action": "", "result": "", "thread": "", "actor": "", "page": 1}
        data = self.cleaned_data
        return {
            "action": data["action"].strip(),
            "result": data["result"].strip(),
            "thread": data["thread"].strip(),
            "actor": data["actor"].strip(),
            "page": data["page"] or 1,
        }


class UnlockForm(forms.Form):
    """Lift a sign-in pause: a user name's (at every address) or an address's (for every name)."""

    username = forms.CharField(required=False, max_length=255, strip=False)
    ip_address = forms.GenericIPAddressField(required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if bool(data.get("username")) == bool(data.get("ip_address")):
            raise forms.ValidationError("Name one user or one address to unlock.")
        return data

"""The Audit screen's filters."""

from __future__ import annotations

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

"""Forms for the write side: what a rollback, undo or summary request may carry."""

from __future__ import annotations

from django import forms


class ConfirmRollbackForm(forms.Form):
    """The fingerprint ties the confirmation to the exact head the operator previewed."""

    fingerprint = forms.RegexField(regex=r"^[0-9a-f]{16}$", max_length=16)
    force = forms.BooleanField(required=False)


class AuditFilterForm(forms.Form):
    action = forms.CharField(required=False, max_length=32)
    result = forms.CharField(required=False, max_length=16)
    thread = forms.CharField(required=False, max_length=255)
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


class DryRunForm(forms.Form):
    """A compaction dry-run: at which checkpoint, under which (proposed) values. Empty = the thread's config."""

    checkpoint = forms.CharField(required=False, max_length=64)
    context_limit = forms.IntegerField(required=False, min_value=1, max_value=100_000_000)
    soft_trim_chars = forms.IntegerField(required=False, min_value=1, max_value=100_000_000)
    hard_clear_threshold = forms.IntegerField(required=False, min_value=1, max_value=100_000_000)
    protect_recent = forms.IntegerField(required=False, min_value=0, max_value=100_000)
    keep_recent_tokens = forms.IntegerField(required=False, min_value=0, max_value=100_000_000)

    SETTING_FIELDS = (
        "context_limit",
        "soft_trim_chars",
        "hard_clear_threshold",
        "protect_recent",
        "keep_recent_tokens",
    )

    def overrides(self) -> dict[str, int]:
        if not self.is_valid():
            return {}
        return {
            name: self.cleaned_data[name]
            for name in self.SETTING_FIELDS
            if self.cleaned_data[name] is not None
        }

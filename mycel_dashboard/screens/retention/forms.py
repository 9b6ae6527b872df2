"""What a retention request may carry: the policy's three rules and the table's order."""

from __future__ import annotations

from django import forms

from memory_core.footprint.retention import RetentionPolicy, RetentionPolicyError

SORTS = ("-frees", "frees", "thread")


class RetentionForm(forms.Form):
    """The policy as text: RetentionPolicy.parse is the one validation (the CLI's flags use it too)."""

    keep_last = forms.CharField(required=False, max_length=40, strip=True)
    heads_only = forms.BooleanField(required=False)
    idle_days = forms.CharField(required=False, max_length=40, strip=True)
    sort = forms.ChoiceField(required=False, choices=[(s, s) for s in SORTS])

    def policy(self) -> RetentionPolicy | None:
        """The policy asked for, or None with the reason added to the form's errors."""
        if not self.is_valid():
            return None
        try:
            return RetentionPolicy.parse(
                keep_last=self.cleaned_data["keep_last"],
                heads_only=self.cleaned_data["heads_only"],
                idle_days=self.cleaned_data["idle_days"],
            )
        except RetentionPolicyError as exc:
            self.add_error(None, str(exc))
            return None

    def sort_key(self) -> str:
        return (self.cleaned_data.get("sort") if self.is_valid() else None) or "-frees"

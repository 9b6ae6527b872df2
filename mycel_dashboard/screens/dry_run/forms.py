"""What a compaction dry-run request may carry."""

from __future__ import annotations

from django import forms


class DryRunForm(forms.Form):
    """A compaction dry-run: at which checkpoint, under which (proposed) values. Empty = the thread's config."""

    checkpoint = forms.CharField(required=False, max_length=20_000)
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

"""The Search screen's URL parameters: a bad value is named on the page and the search runs without it."""

from __future__ import annotations

from django import forms

from memory_core.search.query import MAX_QUERY_CHARS


class SearchForm(forms.Form):
    # The parser reads only the first MAX_QUERY_CHARS characters; a longer box is accepted, not refused.
    q = forms.CharField(required=False, strip=False, max_length=10 * MAX_QUERY_CHARS, label="query")
    tool = forms.CharField(required=False, max_length=200, label="tool")
    thread = forms.CharField(required=False, strip=False, max_length=10_000, label="thread")
    since = forms.DateField(required=False, label="since", input_formats=["%Y-%m-%d"])
    until = forms.DateField(required=False, label="until", input_formats=["%Y-%m-%d"])

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            self.add_error("until", f"is before since ({since})")
        return data

"""The Threads screen's URL parameters."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from mycel_dashboard.screens.thread_list.presenter import (
    DEFAULT_SORT,
    PER_PAGE,
    Flag,
    SortKey,
    ThreadListQuery,
)
from mycel_dashboard.web.forms import LenientForm
from mycel_dashboard.web.ids import MAX_URL_ID, id_from_url


class ThreadListForm(LenientForm):
    q = forms.CharField(required=False, max_length=200, label="search", initial="")
    flag = forms.ChoiceField(
        required=False, choices=[("", "any")] + [(f.value, f.value) for f in Flag], label="flag", initial=""
    )
    sort = forms.ChoiceField(
        required=False,
        choices=[(s.value, s.value) for s in SortKey],
        label="sort",
        initial=DEFAULT_SORT.value,
    )
    order = forms.ChoiceField(
        required=False, choices=[("asc", "asc"), ("desc", "desc")], label="order", initial=""
    )
    page = forms.IntegerField(required=False, min_value=1, label="page", initial=1)
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000_000, label="context limit")
    # A thread id in its URL form (web/ids.py): any id, whitespace and control characters included.
    family = forms.CharField(required=False, strip=False, max_length=MAX_URL_ID, label="family of")

    def clean_family(self) -> str | None:
        value: str = self.cleaned_data.get("family") or ""
        if not value:
            return None
        try:
            return id_from_url(value)
        except ValueError as exc:
            raise ValidationError(str(exc)) from exc

    def query(self) -> tuple[ThreadListQuery, list[str]]:
        values, problems = self.values()
        sort = SortKey(values["sort"])
        # Text columns read best A→Z, numbers and times biggest/newest first.
        default_desc = sort not in {SortKey.THREAD, SortKey.NAME, SortKey.MODEL}
        descending = default_desc if not values["order"] else values["order"] == "desc"
        query = ThreadListQuery(
            q=values["q"] or "",
            flag=Flag(values["flag"]) if values["flag"] else None,
            sort=sort,
            descending=descending,
            page=values["page"] or 1,
            per_page=PER_PAGE,
            context_limit=values["limit"],
            family=values["family"],
        )
        return query, problems

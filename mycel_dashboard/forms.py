"""URL parameters of the read screens, parsed by forms. A bad value never fails the page: it is reported
and replaced by its default, so the rest of the page still works."""

from __future__ import annotations

from typing import Any

from django import forms

from mycel_dashboard.thread_list import DEFAULT_SORT, PER_PAGE, Flag, SortKey, ThreadListQuery


class LenientForm(forms.Form):
    """A GET form whose invalid fields fall back to their initial value, with the error kept for the page."""

    def values(self) -> tuple[dict[str, Any], list[str]]:
        self.is_valid()
        values: dict[str, Any] = {}
        problems: list[str] = []
        for name, field in self.fields.items():
            if name in self.errors:
                raw = self.data.get(name, "")
                problems.append(f"Ignored {field.label or name} {raw!r}: {' '.join(self.errors[name])}")
                values[name] = field.initial
            else:
                value = self.cleaned_data.get(name)
                values[name] = field.initial if value in (None, "") else value
        return values, problems


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
        )
        return query, problems


class TimelineForm(LenientForm):
    view = forms.ChoiceField(
        required=False, choices=[("stored", "stored"), ("sent", "sent to the model")], initial="stored"
    )
    page = forms.IntegerField(required=False, min_value=1, initial=None, label="page")
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000_000, label="context limit")


class CheckpointDiffForm(LenientForm):
    against = forms.CharField(required=False, max_length=200, label="compare with", initial="")

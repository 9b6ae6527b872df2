"""The Thread screen's URL parameters (timeline, its filters, full texts)."""

from __future__ import annotations

from django import forms

from mycel_dashboard.screens.thread_detail.presenter import SHOW_LABELS, Show, TimelineFilter
from mycel_dashboard.web.forms import LenientForm

SHOW_CHOICES = [("", "all messages"), *((show.value, label) for show, label in SHOW_LABELS.items())]


class TimelineForm(LenientForm):
    view = forms.ChoiceField(
        required=False, choices=[("stored", "stored"), ("sent", "sent to the model")], initial="stored"
    )
    page = forms.IntegerField(required=False, min_value=1, initial=None, label="page")
    limit = forms.IntegerField(required=False, min_value=1, max_value=100_000_000, label="context limit")
    rail = forms.IntegerField(required=False, min_value=1, initial=1, label="checkpoint page")
    show = forms.ChoiceField(required=False, choices=SHOW_CHOICES, initial=None, label="filter")
    # Any name is accepted: one no tool of this thread ran matches nothing, and the timeline says so.
    tool = forms.CharField(required=False, max_length=200, initial=None, label="tool")


def timeline_filter(values: dict[str, object]) -> TimelineFilter:
    """The filter TimelineForm's values ask for."""
    show, tool = values.get("show"), values.get("tool")
    return TimelineFilter(
        show=Show(show) if isinstance(show, str) and show else None,
        tool=tool if isinstance(tool, str) and tool else None,
    )

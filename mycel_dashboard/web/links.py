"""Links into the Thread screen that other screens and presenters are handed (they never call reverse)."""

from __future__ import annotations

from collections.abc import Callable

from django.urls import NoReverseMatch, reverse

from mycel_dashboard.screens.thread_detail.presenter import View, page_of


def timeline_urls(thread_id: str, view: View = View.STORED) -> Callable[[int], str]:
    """A function giving the timeline page that holds message `index`, scrolled to it ("" when the id
    cannot be linked). The thread's URL is reversed once: a chart links a thousand calls."""
    try:
        base = reverse("thread", args=[thread_id])
    except NoReverseMatch:
        return lambda index: ""
    return lambda index: f"{base}?view={view.value}&page={page_of(index)}#msg-{index}"


def spill_url(thread_id: str, tool_call_id: str) -> str:
    """The spilled output's page ("" when an id cannot be linked)."""
    try:
        return reverse("spill", args=[thread_id, tool_call_id])
    except NoReverseMatch:
        return ""


def call_urls(thread_id: str) -> Callable[[int], str]:
    """A function giving the page of model call `number` ("" when the id cannot be linked); reversed
    once for the thread, as a chart links every call."""
    try:
        first = reverse("call", args=[thread_id, 1])
    except NoReverseMatch:
        return lambda number: ""
    base = first[: -len("1/")]
    return lambda number: f"{base}{number}/"

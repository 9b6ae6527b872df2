"""Links into the Thread screen that other screens and presenters are handed (they never call reverse)."""

from __future__ import annotations

from django.urls import NoReverseMatch, reverse

from mycel_dashboard.screens.thread.presenter import View, page_of


def timeline_url(thread_id: str, view: View, index: int) -> str:
    """The timeline page holding message `index`, scrolled to it ("" when the id cannot be linked)."""
    try:
        base = reverse("thread", args=[thread_id])
    except NoReverseMatch:
        return ""
    return f"{base}?view={view.value}&page={page_of(index)}#msg-{index}"


def spill_url(thread_id: str, tool_call_id: str) -> str:
    """The spilled output's page ("" when an id cannot be linked)."""
    try:
        return reverse("spill", args=[thread_id, tool_call_id])
    except NoReverseMatch:
        return ""

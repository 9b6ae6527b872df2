"""Small template helpers: URLs that keep the page's state, and number formatting."""

from __future__ import annotations

from typing import Any

from django import template
from django.http import QueryDict

from memory_core.ids import short_id
from mycel_dashboard.web.ids import id_to_url

register = template.Library()


@register.simple_tag(takes_context=True)
def with_params(context: template.Context, **changes: Any) -> str:
    """The current URL's query string with some parameters changed (None or "" removes one)."""
    request = context.get("request")
    params: QueryDict = request.GET.copy() if request is not None else QueryDict(mutable=True)
    for key, value in changes.items():
        if value is None or value == "":
            params.pop(key, None)
        else:
            params[key] = str(value)
    encoded = params.urlencode()
    return f"?{encoded}" if encoded else "?"


@register.filter
def thousands(value: Any) -> str:
    """12345 → "12,345"; anything else unchanged ("—" for None)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int | float):
        return f"{value:,.0f}" if isinstance(value, float) else f"{value:,}"
    return str(value)


@register.filter
def percent(value: float | None) -> str:
    """A ratio as a whole percentage; a small non-zero fill reads "<1 %" rather than a misleading 0."""
    if value is None:
        return "—"
    if 0 < value < 0.005:
        return "<1 %"
    return f"{value * 100:.0f} %"


@register.filter
def bar_width(value: float | None) -> int:
    """A fill ratio as a CSS width percentage, capped at 100."""
    if value is None:
        return 0
    return max(0, min(100, round(value * 100)))


@register.filter
def shown_id(value: Any) -> str:
    """An id where a whole one does not fit (lists, breadcrumbs): escaped, long ones cut to head … tail;
    put the whole id in the element's title."""
    return short_id(str(value)) if value is not None else ""


@register.filter
def link_problem(value: Any) -> str:
    """Why an id cannot be put in a link (shown beside it instead of the link)."""
    try:
        id_to_url(str(value))
    except ValueError as exc:
        return str(exc)
    return ""


@register.filter
def get_item(mapping: Any, key: Any) -> Any:
    """`mapping[key]`, or "" when it has none (a template cannot index a dict by a variable)."""
    try:
        return mapping.get(key, "")
    except AttributeError:
        return ""

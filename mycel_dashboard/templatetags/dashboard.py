"""Small template helpers: URLs that keep the page's state, and figures as memory_core/figures.py writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django import template
from django.http import QueryDict

from memory_core import figures
from memory_core.ids import short_id
from mycel_dashboard.screens.shared.charts import ESTIMATE_WORDS
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


# Figures: every number a page shows goes through memory_core/figures.py, the CLI's tables too.


@register.filter
def thousands(value: Any) -> str:
    """A count: 12345 → "12,345" (figures.count); "—" for None; text unchanged."""
    if value is None or isinstance(value, int | float | Decimal):
        return figures.count(value)
    return str(value)


@register.filter
def percent(value: Any, decimals: int = 0) -> str:
    """A ratio as a percentage (figures.percent): "70 %", "<1 %"; `|percent:1` → "111.6 %"."""
    return figures.percent(value, decimals=int(decimals))


@register.filter
def size(value: Any) -> str:
    """Bytes with a unit (figures.size): "2.41 MB"; put `|size_exact` in the title."""
    return figures.size(value)


@register.filter
def size_exact(value: Any) -> str:
    return figures.size_exact(value)


@register.filter
def money(value: Any) -> str:
    """Dollars to the cent (figures.money): "$0.96", "<$0.01"; put `|money_exact` in the title."""
    return figures.money(value)


@register.filter
def money_exact(value: Any) -> str:
    return figures.money_exact(value)


@register.filter
def ratio(value: Any) -> str:
    """Real ÷ estimate, a rate: two decimals (figures.ratio)."""
    return figures.ratio(value)


@register.filter
def delta(value: Any) -> str:
    """A signed change of a count: "+1,234", "−1,234" (figures.delta)."""
    return figures.delta(value)


@register.filter
def delta_size(value: Any) -> str:
    return figures.delta_size(value)


@register.filter
def duration_ms(value: Any) -> str:
    """Milliseconds as a duration: "340 ms", "1.2 s" (figures.duration_ms)."""
    return figures.duration_ms(value)


@register.filter
def utc_minute(value: Any) -> str:
    """An ISO time (as a --json document carries it) to the minute, in UTC: "2026-12-06 05:32"."""
    if not isinstance(value, str):
        return ""
    try:
        at = datetime.fromisoformat(value)
    except ValueError:
        return ""
    return (at.astimezone(UTC) if at.tzinfo else at).strftime("%Y-%m-%d %H:%M")


@register.filter
def over_window(fill: Any) -> str:
    """What a context fill over 100 % is, for the note beside it ("" at or under 100 %)."""
    if fill is None or fill <= 1:
        return ""
    return f"{figures.percent(fill, decimals=1)} of the window: {ESTIMATE_WORDS}"


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

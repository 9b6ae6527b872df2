"""What every read view shares: full page or htmx partial, and Vary: HX-Request on both."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

from mycel_dashboard.web.permissions import can_act, role_of


def _htmx(request: HttpRequest) -> HtmxDetails | None:
    # django-htmx's middleware sets it; HttpRequest's type does not know the attribute.
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    return htmx


def wants_partial(request: HttpRequest) -> bool:
    """An htmx swap asks for the fragment; a history restore (cache miss) needs the whole page."""
    htmx = _htmx(request)
    return htmx is not None and bool(htmx) and not htmx.history_restore_request


def requested_partial(request: HttpRequest, parts: Collection[str], *, default: str) -> str | None:
    """The partial an htmx swap targets: one of `parts`, else `default`; None when it wants the whole page."""
    htmx = _htmx(request)
    if htmx is None or not wants_partial(request):
        return None
    return htmx.target if htmx.target in parts else default


# Names Django's context processors fill (flash messages, the request, the user, permissions): a page's
# own data under one of them would silently replace the framework's, e.g. print messages as flash notes.
RESERVED_CONTEXT_NAMES = frozenset(
    {"messages", "request", "user", "perms", "csrf_token", "DEFAULT_MESSAGE_LEVELS"}
)


def render_screen(
    request: HttpRequest, template: str, partial: str | None, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    """Render `template`, or `template#partial` for an htmx request; the response varies on HX-Request."""
    clash = RESERVED_CONTEXT_NAMES.intersection(context)
    if clash:
        raise ImproperlyConfigured(f"{template}: context names {sorted(clash)} belong to Django; rename them")
    name = f"{template}#{partial}" if partial and wants_partial(request) else template
    role = role_of(request.user)
    context = {"user_role": role.value if role else None, "can_act": can_act(request.user), **context}
    response = TemplateResponse(request, name, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response

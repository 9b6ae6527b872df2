"""Who may scrape /metrics: DASHBOARD_METRICS_ACCESS = "token" (a bearer token of scope metrics),
"loopback" (a request from 127.0.0.1 or ::1), or "token-or-loopback" (either; the default).

Behind a reverse proxy on the same host every request comes from loopback: use "token" there."""

from __future__ import annotations

import ipaddress

from django.conf import settings
from django.http import HttpRequest

from mycel_dashboard.api.tokens import authenticate, token_from_header
from mycel_dashboard.models import ApiToken

MODES = ("token", "loopback", "token-or-loopback")


def from_loopback(request: HttpRequest) -> bool:
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def with_metrics_token(request: HttpRequest) -> bool:
    token = token_from_header(request.headers.get("Authorization", ""))
    return token is not None and authenticate(token, ApiToken.Scope.METRICS) is not None


def refused(request: HttpRequest) -> str | None:
    """Why this request may not read /metrics, or None when it may."""
    mode = settings.DASHBOARD_METRICS_ACCESS
    if mode not in MODES:
        return f"DASHBOARD_METRICS_ACCESS is {mode!r}: one of {', '.join(MODES)} is needed"
    if "loopback" in mode and from_loopback(request):
        return None
    if "token" in mode and with_metrics_token(request):
        return None
    if mode == "loopback":
        return "/metrics answers requests from loopback only (DASHBOARD_METRICS_ACCESS=loopback)"
    return (
        "send Authorization: Bearer <token> with a token of scope metrics "
        "(manage.py api_token create USER --scope metrics)"
    )

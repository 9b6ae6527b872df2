"""/metrics, /healthz and /readyz: no login (/metrics has its own access rule), no secrets, no 500."""

from __future__ import annotations

import json
import logging
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4

from memory_core.app.health import Check, Health, checks_json, lag_json, ready
from memory_core.app.metrics import exposition
from mycel_dashboard.monitoring.access import refused
from mycel_dashboard.monitoring.gather import database_check, server_health

log = logging.getLogger(__name__)


def _json(data: dict[str, Any], status: int = 200) -> HttpResponse:
    response = HttpResponse(json.dumps(data, indent=1), status=status, content_type="application/json")
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_not_required
@require_safe
@never_cache
def healthz(request: HttpRequest) -> HttpResponse:
    """The process answers (it reads nothing)."""
    return _json({"status": "ok"})


@login_not_required
@require_safe
@never_cache
def readyz(request: HttpRequest) -> HttpResponse:
    """200 when the dashboard's database and every configured store answer and the index is not too far
    behind, else 503; each check by name and kind only (no path, host or password)."""
    try:
        health = server_health(bring_up=False)
    except Exception:  # noqa: BLE001 - whatever failed, the answer is "not ready", never a traceback
        log.exception("readyz: a check failed unexpectedly")
        health = Health(None, None, [database_check(), Check("checks", False, "error")])
    is_ready = ready(health.checks)
    return _json(
        {
            "status": "ready" if is_ready else "not ready",
            "checks": checks_json(health.checks, with_messages=False),
            "index": lag_json(health.lag) if health.lag else None,
        },
        200 if is_ready else 503,
    )


@login_not_required
@require_safe
@never_cache
def metrics(request: HttpRequest) -> HttpResponse:
    why = refused(request)
    if why is not None:
        response = HttpResponse(why + "\n", status=403, content_type="text/plain; charset=utf-8")
        response["WWW-Authenticate"] = 'Bearer realm="mycel-dashboard-metrics"'
        return response
    try:
        health = server_health(bring_up=True)
        body = exposition(health.figures, health.lag, health.checks, health.store_bytes)
    except Exception:  # noqa: BLE001 - a scrape that fails says so in a metric, never a traceback
        log.exception("metrics: the fleet's figures could not be computed")
        body = exposition(None, None, [Check("checks", False, "error")])
    response = HttpResponse(body + generate_latest(REGISTRY), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["X-Content-Type-Options"] = "nosniff"
    return response

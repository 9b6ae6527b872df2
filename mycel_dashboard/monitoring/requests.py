"""The dashboard's own request metrics (prometheus-client's counter and histogram, in this process):
requests by view and status class, and their duration by view. Views are labelled by their URL name, so
the label set stays bounded whatever path a client asks for."""

from __future__ import annotations

import time
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter, Histogram

REQUESTS = Counter(
    "mycel_dashboard_requests",
    "HTTP requests the dashboard answered (this worker process), by view and status class.",
    ["view", "status"],
)
DURATION = Histogram(
    "mycel_dashboard_request_duration_seconds",
    "Time the dashboard took to answer a request (this worker process), by view.",
    ["view"],
    buckets=(0.01, 0.05, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0),
)


def _view_name(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    return (match.url_name or "unnamed") if match is not None else "unresolved"


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        view = _view_name(request)
        REQUESTS.labels(view, f"{response.status_code // 100}xx").inc()
        DURATION.labels(view).observe(time.perf_counter() - started)
        return response

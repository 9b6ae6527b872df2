"""Security headers the framework does not set for us."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

# Everything is served from our own origin: no inline script, no CDN, no off-site anything.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",  # Plotly sets inline styles on the elements it draws
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        response.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response


def add_static_headers(headers: dict[str, str], path: str, url: str) -> None:
    """WhiteNoise answers static files before any middleware runs: give them the same policy."""
    headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    headers["X-Frame-Options"] = "DENY"
    headers["Referrer-Policy"] = "same-origin"

"""Plain-HTTP sessions of logged-in users of a real dashboard server (tests/support/server.py).

Loopback only; every process started here is stopped when the fixture ends, also after a failure.
"""

from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.server import PASSWORD, ROOT, DashboardServer, running_server, stop_process

__all__ = ["HTMX_SAVE_PANEL", "ROOT", "Response", "Session", "field", "start_server", "stop_process"]

USERS = {"viewer": "viewer", "operator": "operator", "operator2": "operator"}  # user name -> role


@contextmanager
def start_server(base: Path, home: Path) -> Iterator[DashboardServer]:
    """Migrate, create the users, start gunicorn over `home`; yield once it accepts connections."""
    with running_server(base, home, roles=USERS) as server:
        yield server


@dataclass(frozen=True)
class Response:
    status: int
    body: str
    headers: Mapping[str, str]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class Session:
    """One logged-in user over plain HTTP: a cookie jar, the CSRF token on every POST, redirects not followed."""

    def __init__(self, base_url: str, username: str) -> None:
        self.base_url = base_url
        self.username = username
        self.jar = http.cookiejar.CookieJar()
        self._opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect()
        )
        self.get("/login/")
        done = self.post("/login/", {"username": username, "password": PASSWORD})
        if done.status != 302:
            raise RuntimeError(f"login of {username} failed: {done.status} {done.body[:500]}")

    def _csrf(self) -> str:
        return next(c.value for c in self.jar if c.name == "csrftoken" and c.value)

    def _send(self, request: urllib.request.Request) -> Response:
        try:
            with self._opener.open(request, timeout=60) as answer:
                return Response(answer.status, answer.read().decode("utf-8", "replace"), dict(answer.headers))
        except urllib.error.HTTPError as exc:
            return Response(exc.code, exc.read().decode("utf-8", "replace"), dict(exc.headers))

    def get(
        self, path: str, params: Mapping[str, str] | None = None, headers: Mapping[str, str] | None = None
    ) -> Response:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        url = f"{self.base_url}{path}{query}"
        return self._send(urllib.request.Request(url, headers=dict(headers or {})))  # noqa: S310 - http://127.0.0.1 only

    def post(self, path: str, data: Mapping[str, str], headers: Mapping[str, str] | None = None) -> Response:
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": self._csrf()}).encode()
        request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
            f"{self.base_url}{path}",
            data=body,
            headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})},
            method="POST",
        )
        return self._send(request)


HTMX_SAVE_PANEL = {"HX-Request": "true", "HX-Target": "save-panel"}


def field(body: str, name: str) -> str:
    """The value of a hidden input in a page."""
    found = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', body)
    if found is None:
        raise AssertionError(f"no {name!r} field in the page")
    return found.group(1)

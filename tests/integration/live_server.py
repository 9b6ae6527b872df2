"""A real dashboard server process (gunicorn, as in production) and plain-HTTP sessions of logged-in users.

Loopback only; every process started here is stopped when the fixture ends, also after a failure.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "live-agent-pass-123"
USERS = {"viewer": "viewer", "operator": "operator", "operator2": "operator"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes], *, grace_s: float = 10.0) -> None:
    """Terminate one process we started, and kill it if it does not go in time."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=grace_s)


@dataclass
class Server:
    url: str
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes]

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _manage(env: Mapping[str, str], *args: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=dict(env), capture_output=True, check=True
    )


def _users_script() -> str:
    lines = ["from django.core.management import call_command"]
    for name, role in USERS.items():
        lines.append(f"call_command('dashboard_user', {name!r}, role={role!r}, password={PASSWORD!r})")
    return "; ".join(lines)


@contextmanager
def start_server(base: Path, home: Path) -> Iterator[Server]:
    """Migrate, create the users, start gunicorn over `home`; yield once it accepts connections."""
    port = free_port()
    # Nothing from the outer environment may point the server at real Mycel files or a real database.
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("LEON_", "MYCEL_")) and k != "DATABASE_URL"
    }
    env = {
        **inherited,
        "DASHBOARD_DATA_DIR": str(base / "var"),
        "SECRET_KEY": "live-agent-tests-only-secret-key-0123456789-abcdefghijklmnop",
        "DEBUG": "false",
        "HOME": str(base / "os-home"),
        "LEON_DB_PATH": str(home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(home),
    }
    _manage(env, "migrate", "--noinput")
    _manage(env, "shell", "-c", _users_script())
    log = base / "server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "mycel_dashboard.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--threads",
                "4",
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    server = Server(url=f"http://127.0.0.1:{port}", env=env, log=log, process=process)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the server did not start: {server.log_text()}") from None
                time.sleep(0.1)
        yield server
    finally:
        stop_process(process)


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

"""A real dashboard server process (gunicorn, as in production) over a Mycel data home, for any test.

The browser fixtures run one over the demo home; the hostile-content tests run a second one over theirs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "browser-pass-123"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class DashboardServer:
    url: str
    data_home: Path
    manifest: Any  # the DemoManifest of the demo home; None for other homes
    env: dict[str, str]
    process: subprocess.Popen[bytes]
    log: Path
    users: dict[str, str] = field(default_factory=dict)

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextmanager
def running_server(
    base: Path, data_home: Path, *, manifest: Any = None, extra_env: Mapping[str, str] | None = None
) -> Iterator[DashboardServer]:
    """Migrate, create a viewer and an operator, start gunicorn on a free loopback port; stop it after."""
    port = free_port()
    env = {
        **os.environ,
        "DASHBOARD_DATA_DIR": str(base / "var"),
        "SECRET_KEY": "browser-tests-only-secret-key-0123456789-abcdefghijklmnop",
        "DEBUG": "false",
        "HOME": str(base / "os-home"),
        "LEON_DB_PATH": str(data_home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(data_home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(data_home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(data_home),
        **(extra_env or {}),
    }
    log = base / "server.log"
    server = DashboardServer(
        url=f"http://127.0.0.1:{port}", data_home=data_home, manifest=manifest, env=env, process=None, log=log
    )  # type: ignore[arg-type]
    server.manage("migrate", "--noinput")
    server.manage("dashboard_user", "viewer", "--role", "viewer", "--password", PASSWORD)
    server.manage("dashboard_user", "operator", "--role", "operator", "--password", PASSWORD)
    server.users = {"viewer": PASSWORD, "operator": PASSWORD}
    with log.open("wb") as sink:
        server.process = subprocess.Popen(
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
    try:
        _wait_until_listening(server, port)
        yield server
    finally:
        server.process.terminate()
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=10)


def _wait_until_listening(server: DashboardServer, port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if server.process.poll() is not None:
                raise RuntimeError(f"server exited: {server.log_text()}") from None
            time.sleep(0.2)
    raise RuntimeError(f"server did not start: {server.log_text()}")

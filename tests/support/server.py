"""A real dashboard server process (gunicorn, as in production) over a Mycel data home, for any test.

The browser fixtures run one over the demo home, the hostile-content tests one over theirs, the live-agent
test one beside a writing Mycel. Loopback only; the process is stopped when the block ends, also after a
failure.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "browser-pass-123"
ROLES = {"viewer": "viewer", "operator": "operator"}  # user name -> role


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(process: subprocess.Popen[bytes], *, grace_s: float = 10.0) -> None:
    """Stop a process we started: its whole group when it leads one (gunicorn's master and workers)."""
    try:
        own_group = os.getpgid(process.pid) == process.pid
    except ProcessLookupError:
        own_group = False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            return
        try:
            if own_group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace_s)
            return
        except subprocess.TimeoutExpired:
            continue


@dataclass
class DashboardServer:
    url: str
    data_home: Path
    manifest: Any  # the DemoManifest of the demo home; None for other homes
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    users: dict[str, str] = field(default_factory=dict)  # user name -> password

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


def server_env(base: Path, data_home: Path, extra_env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server over `data_home`, with its own database and HOME under `base`."""
    # Nothing from the outer environment may point the server at real Mycel files or a real database.
    inherited = {
        k: v for k, v in os.environ.items() if not k.startswith(("LEON_", "MYCEL_")) and k != "DATABASE_URL"
    }
    return {
        **inherited,
        "DASHBOARD_DATA_DIR": str(base / "var"),
        "SECRET_KEY": "server-tests-only-secret-key-0123456789-abcdefghijklmnop",
        "DEBUG": "false",
        "HOME": str(base / "os-home"),
        "LEON_DB_PATH": str(data_home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(data_home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(data_home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(data_home),
        **(extra_env or {}),
    }


def _users_script(roles: Mapping[str, str], password: str) -> str:
    lines = ["from django.core.management import call_command"]
    for name, role in roles.items():
        lines.append(f"call_command('dashboard_user', {name!r}, role={role!r}, password={password!r})")
    return "; ".join(lines)


# Migrating and creating the users took 5 s of every server's start (two Django processes, a PBKDF2 hash per
# user): each test process does it once per set of roles, then copies the SQLite file migrate left.
_PREPARED: dict[tuple[tuple[str, str], ...], Path] = {}


def _prepare_database(server: DashboardServer, roles: Mapping[str, str]) -> None:
    target = Path(server.env["DASHBOARD_DATA_DIR"]) / "dashboard.sqlite3"
    if "DATABASE_URL" in server.env or "DASHBOARD_DB_PATH" in server.env or target.exists():
        # A database of its own, or one an earlier server left here (a restart): migrated in place.
        server.manage("migrate", "--noinput")
        server.manage("shell", "-c", _users_script(roles, PASSWORD))
        return
    key = tuple(sorted(roles.items()))
    if key not in _PREPARED:
        folder = Path(tempfile.mkdtemp(prefix="dashboard-db-"))
        atexit.register(shutil.rmtree, folder, True)
        made = DashboardServer(
            server.url,
            server.data_home,
            None,
            {**server.env, "DASHBOARD_DATA_DIR": str(folder)},
            folder / "log",
        )
        made.manage("migrate", "--noinput")
        made.manage("shell", "-c", _users_script(roles, PASSWORD))
        assert not (folder / "dashboard.sqlite3-wal").exists()  # closed: the file holds everything
        _PREPARED[key] = folder / "dashboard.sqlite3"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_PREPARED[key], target)


@contextmanager
def running_server(
    base: Path,
    data_home: Path,
    *,
    manifest: Any = None,
    extra_env: Mapping[str, str] | None = None,
    roles: Mapping[str, str] = ROLES,
    workers: int = 2,
    threads: int = 4,
) -> Iterator[DashboardServer]:
    """Migrate, create the users (`roles`, all with PASSWORD), start gunicorn on a free loopback port.

    The command is `make serve`'s; the server leads its own process group, stopped whole on exit.
    """
    port = free_port()
    env = server_env(base, data_home, extra_env)
    server = DashboardServer(
        url=f"http://127.0.0.1:{port}",
        data_home=data_home,
        manifest=manifest,
        env=env,
        log=base / "server.log",
    )
    _prepare_database(server, roles)
    server.users = dict.fromkeys(roles, PASSWORD)
    with server.log.open("wb") as sink:
        process = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "mycel_dashboard.wsgi",
                "-c",
                "python:mycel_dashboard.gunicorn_conf",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server.process = process
    try:
        _wait_until_listening(process, port, server)
        yield server
    finally:
        stop_process(process)


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, server: DashboardServer) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited: {server.log_text()}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {server.log_text()}") from None
            time.sleep(0.1)


@contextmanager
def dev_server(base: Path, url: str, *, leon_db: Path | None = None) -> Iterator[DashboardServer]:
    """A server over Mycel dev's tables at `url` (LEON_POSTGRES_URL), its data home in `base`, with a copy
    of dev's SQLite summaries `leon_db` when given (never opened in place)."""
    home = base / "mycel-home"
    home.mkdir()
    if leon_db is not None:
        shutil.copy(leon_db, home / "leon.db")
    with running_server(base, home, extra_env={"LEON_POSTGRES_URL": url}) as server:
        yield server

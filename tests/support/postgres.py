"""A throwaway PostgreSQL cluster for the tests: Debian's server binaries, `initdb` and `pg_ctl` in a temp dir,
reachable only on a unix socket there, run as the `postgres` user when the tests run as root (the server
refuses root). Durability is off (fsync, synchronous commit): nothing here outlives the run.

`make test` installs the binaries (`make postgres`); without them the fixture fails with the command that
installs them, never skips.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg

SUPERUSER = "mycel"
# One role logs in with a real password (scram-sha-256), so a wrong password is refused as on a real server;
# every other local login is trusted.
PASSWORD_USER = "mycel_pw_reader"
PASSWORD = "right-horse-battery"  # noqa: S105 - a throwaway cluster's test role
MISSING_POSTGRES = (
    "PostgreSQL's server binaries are missing for the Postgres tests; install them with: "
    "sudo apt-get install postgresql"
)


# One cluster per test process (tests/conftest.py), so one counter names every database on it.
_DATABASE_NUMBERS = itertools.count(1)


def database_name(prefix: str) -> str:
    """`prefix_N`: a name no other database this test process created has (each test gets its own)."""
    return f"{prefix}_{next(_DATABASE_NUMBERS)}"


def server_binaries() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian: /usr/lib/postgresql/N/bin), else PATH's."""
    found = sorted(glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_server_user() -> tuple[Callable[[], None] | None, int | None, int | None]:
    """preexec function, uid, gid that run the server as `postgres` when we are root."""
    if os.geteuid() != 0:
        return None, None, None
    user = pwd.getpwnam("postgres")

    def drop() -> None:
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return drop, user.pw_uid, user.pw_gid


@dataclass
class PostgresServer:
    root: Path
    bin: Path

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str = "postgres", *, user: str = SUPERUSER, password: str | None = None) -> str:
        """A libpq URL to `database` over the cluster's unix socket."""
        auth = quote(user) + (f":{quote(password)}" if password else "")
        return f"postgresql://{auth}@/{quote(database)}?host={quote(str(self.socket_dir))}"

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        drop, _, _ = _as_server_user()
        return subprocess.run(
            argv, preexec_fn=drop, capture_output=True, text=True, check=check, cwd=self.root
        )

    def start(self) -> None:
        drop, uid, gid = _as_server_user()
        self.socket_dir.mkdir()
        if uid is not None and gid is not None:
            for path in (self.root, self.socket_dir):
                os.chown(path, uid, gid)
        data = self.root / "data"
        self._run(
            str(self.bin / "initdb"),
            "-D",
            str(data),
            "-U",
            SUPERUSER,
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        hba = data / "pg_hba.conf"
        hba.write_text(f"local all {PASSWORD_USER} scram-sha-256\n" + hba.read_text())
        options = (
            f"-k {self.socket_dir} -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
            "-c full_page_writes=off -c max_connections=60"
        )
        started = self._run(
            str(self.bin / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(self.root / "server.log"), "-w", "start",
            check=False,
        )  # fmt: skip
        if started.returncode != 0:
            log = (
                (self.root / "server.log").read_text(errors="replace")
                if (self.root / "server.log").exists()
                else ""
            )
            raise RuntimeError(f"PostgreSQL did not start: {started.stderr}\n{log}")
        self.execute(
            f"CREATE ROLE {PASSWORD_USER} LOGIN PASSWORD '{PASSWORD}'; "
            f"GRANT pg_read_all_data TO {PASSWORD_USER}"
        )

    def stop(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate", "stop", check=False
        )

    def execute(self, sql: str, database: str = "postgres") -> None:
        """Run statements as the superuser (autocommit: CREATE DATABASE cannot run in a transaction)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def create_database(self, name: str, *, template: str | None = None) -> str:
        """A new empty database (or a copy of `template`); its URL."""
        quoted = '"' + name.replace('"', '""') + '"'
        self.execute(f"CREATE DATABASE {quoted}" + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def load_sql(self, url: str, path: Path) -> None:
        """Load a plain-format dump with psql, stopping at the first error."""
        done = subprocess.run(
            [str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", url, "-f", str(path)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"psql could not load {path}: {done.stderr[-2000:]}")


def pgbouncer_binary() -> Path | None:
    found = shutil.which("pgbouncer") or (
        "/usr/sbin/pgbouncer" if Path("/usr/sbin/pgbouncer").exists() else None
    )
    return Path(found) if found else None


@contextmanager
def running_pgbouncer(server: PostgresServer, *, pool_size: int = 2) -> Iterator[Path]:
    """PgBouncer in transaction mode in front of `server`, on its own unix socket; yields the socket dir.

    A small pool shuffles each client's transactions over a couple of server connections, which is exactly
    where session state or server-side prepared statements would break.
    """
    binary = pgbouncer_binary()
    if binary is None:
        raise RuntimeError(
            "PgBouncer is missing for the Postgres tests; install it with: sudo apt-get install pgbouncer"
        )
    root = Path(tempfile.mkdtemp(prefix="mycel-pgbouncer-"))
    drop, uid, gid = _as_server_user()
    (root / "users.txt").write_text(f'"{SUPERUSER}" ""\n')
    (root / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={server.socket_dir} port=5432\n"
        "[pgbouncer]\n"
        "listen_addr =\n"
        f"unix_socket_dir = {root}\n"
        "listen_port = 6432\n"
        "auth_type = trust\n"
        f"auth_file = {root / 'users.txt'}\n"
        "pool_mode = transaction\n"
        f"default_pool_size = {pool_size}\n"
        "max_client_conn = 100\n"
        f"logfile = {root / 'pgbouncer.log'}\n"
        f"pidfile = {root / 'pgbouncer.pid'}\n"
    )
    if uid is not None and gid is not None:
        for path in (root, *root.iterdir()):
            os.chown(path, uid, gid)
    process = subprocess.Popen([str(binary), str(root / "pgbouncer.ini")], preexec_fn=drop, cwd=root)  # noqa: S603
    try:
        for _ in range(100):
            if (root / ".s.PGSQL.6432").exists():
                break
            if process.poll() is not None:
                raise RuntimeError(
                    f"PgBouncer did not start: {(root / 'pgbouncer.log').read_text(errors='replace')}"
                )
            time.sleep(0.05)
        yield root
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """A started cluster in a fresh temp dir (outside pytest's root-only temp tree, so `postgres` can reach
    it), stopped and removed afterwards."""
    binaries = server_binaries()
    if binaries is None:
        raise RuntimeError(MISSING_POSTGRES)
    root = Path(tempfile.mkdtemp(prefix="mycel-pg-"))
    server = PostgresServer(root=root, bin=binaries)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)


def write_counts(url: str) -> list[tuple[Any, ...]]:
    """Every write the server counted on the user tables (inserts, updates, deletes) since it started, once
    two reads a moment apart agree: a backend that wrote (a fixture's, just closed) reports its counts as it
    exits, which on a loaded machine can land after the test's first read."""
    with psycopg.connect(url) as conn:
        found: list[tuple[Any, ...]] | None = None
        for _ in range(40):
            conn.execute("SELECT pg_stat_clear_snapshot()")
            now = conn.execute(
                "SELECT schemaname, relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
                "ORDER BY 1, 2"
            ).fetchall()
            if now == found:
                return now
            found = now
            time.sleep(0.25)
        raise AssertionError(f"the server's write counts never settled: {found}")

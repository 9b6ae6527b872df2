"""Read-only, bounded reads of a PostgreSQL database over psycopg 3, safe behind PgBouncer.

Every read is one transaction: `READ ONLY`, a `SET LOCAL` statement timeout, a row cap, nothing carried
in the session (PgBouncer's transaction mode hands each transaction any server connection), and no
prepared statements (`prepare_threshold=None`). A small pool per URL serves every reader in the process.
Every failure becomes a StoreProblem; passwords never reach one.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from memory_core.records import ProblemKind, StoreProblem

POOL_MAX = 4  # per URL and process: one gunicorn worker's threads rarely read more at once
_pools: dict[str, ConnectionPool] = {}
_pools_lock = threading.Lock()
# The pool logs each failed connection attempt; the reason reaches pages and the CLI as a problem instead.
logging.getLogger("psycopg.pool").setLevel(logging.ERROR)


class PgError(Exception):
    """A read that failed; `problem` says why in plain words."""

    def __init__(self, problem: StoreProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def mask_url(url: str) -> str:
    """The URL or conninfo with any password replaced by ***, for pages, the CLI and problems."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "(an unreadable connection string)"
    if "password" in params:
        params["password"] = "***"  # noqa: S105 - the mask, not a password
    return make_conninfo(**{k: str(v) for k, v in params.items()})


def _pool(url: str) -> ConnectionPool:
    with _pools_lock:
        pool = _pools.get(url)
        if pool is None:
            pool = ConnectionPool(
                url,
                min_size=0,
                max_size=POOL_MAX,
                kwargs={"prepare_threshold": None, "autocommit": False},
                configure=_read_only_snapshots,
                open=True,
                name="mycel-dashboard",
            )
            _pools[url] = pool
        return pool


def _read_only_snapshots(conn: psycopg.Connection[Any]) -> None:
    # One snapshot for every statement of a read, and the server refuses any write in it. Set on the
    # connection, psycopg says it in each BEGIN: no statement of its own, nothing left in the session.
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.read_only = True


def close_pools() -> None:
    """Close every pool (tests dropping their databases; process exit)."""
    with _pools_lock:
        for pool in _pools.values():
            pool.close()
        _pools.clear()


@dataclass
class PgRead:
    """One open read-only transaction: rows under the cap, problems noted."""

    conn: psycopg.Connection[Any]
    store: str
    row_cap: int
    problems: list[StoreProblem] = field(default_factory=list)

    def rows(self, sql: str, params: Sequence[Any] = (), *, capped: bool = True) -> list[tuple[Any, ...]]:
        """The query's rows, at most the row cap (over it: TRUNCATED); `capped=False` for an answer whose
        size is bounded by its own LIMIT or must hold one row per thread (the fleet index's questions)."""
        with self.conn.cursor() as cursor:
            cursor.execute(sql, params)
            if not capped:
                return cursor.fetchall()
            found = cursor.fetchmany(self.row_cap + 1)
        if len(found) > self.row_cap:
            self.problems.append(
                StoreProblem(
                    ProblemKind.TRUNCATED, self.store, f"only the first {self.row_cap} rows were read"
                )
            )
            found = found[: self.row_cap]
        return found

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self.conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchone()


@contextmanager
def read_only(url: str, store: str, *, timeout_s: float, row_cap: int) -> Iterator[PgRead]:
    """A READ ONLY transaction with a statement timeout; raise PgError with a plain problem."""
    pool = _pool(url)
    if pool.get_stats().get("pool_size", 0) == 0:
        # No connection yet (or all closed as idle): one direct attempt says at once why the server is
        # out of reach, where the pool would retry until the time limit and then only say it timed out.
        problem = _connect_problem_now(url, store, timeout_s)
        if problem is not None:
            raise PgError(problem)
    try:
        with pool.connection(timeout=timeout_s) as conn, conn.transaction():
            # SET LOCAL: the timeout ends with the transaction, so nothing is left on a shared connection.
            conn.execute("SELECT set_config('statement_timeout', %s, true)", (f"{int(timeout_s * 1000)}",))
            read = PgRead(conn, store, row_cap)
            yield read
    except PoolTimeout:
        raise PgError(_why_no_connection(url, store, timeout_s)) from None
    except psycopg.Error as exc:
        raise PgError(problem_of(exc, store, url)) from None


def problem_of(exc: psycopg.Error, store: str, url: str) -> StoreProblem:
    where = mask_url(url)
    text = _first_line(exc)
    if isinstance(exc, errors.QueryCanceled):
        return StoreProblem(ProblemKind.TIMEOUT, store, f"{where}: a query took longer than allowed ({text})")
    if isinstance(exc, errors.UndefinedTable | errors.UndefinedColumn | errors.InvalidSchemaName):
        return StoreProblem(ProblemKind.MISSING_TABLE, store, f"{where}: {text}")
    if isinstance(exc, errors.InsufficientPrivilege):
        return StoreProblem(ProblemKind.DENIED, store, f"{where}: {text}")
    if isinstance(exc, errors.ReadOnlySqlTransaction):
        return StoreProblem(ProblemKind.REFUSED, store, f"{where}: refused a write in a read ({text})")
    if isinstance(exc, psycopg.OperationalError):
        return _connect_problem(text, store, where)
    return StoreProblem(ProblemKind.CORRUPT, store, f"{where}: {type(exc).__name__}: {text}")


def _connect_problem_now(url: str, store: str, timeout_s: float) -> StoreProblem | None:
    try:
        with psycopg.connect(url, connect_timeout=max(1, round(timeout_s))):
            pass
    except psycopg.Error as exc:
        return _connect_problem(_first_line(exc), store, mask_url(url))
    return None


def _why_no_connection(url: str, store: str, timeout_s: float) -> StoreProblem:
    # The pool only says it timed out; one direct attempt finds the server's own reason.
    found = _connect_problem_now(url, store, timeout_s)
    if found is not None:
        return found
    return StoreProblem(
        ProblemKind.TIMEOUT,
        store,
        f"{mask_url(url)}: every connection of the pool was busy for {timeout_s:g} s",
    )


def _connect_problem(text: str, store: str, where: str) -> StoreProblem:
    lowered = text.lower()
    if (
        "password" in lowered
        or "authentication" in lowered
        or "role" in lowered
        and "does not exist" in lowered
    ):
        return StoreProblem(ProblemKind.DENIED, store, f"{where}: the server refused the login ({text})")
    if "database" in lowered and "does not exist" in lowered:
        return StoreProblem(ProblemKind.MISSING_FILE, store, f"{where}: {text}")
    return StoreProblem(ProblemKind.UNREACHABLE, store, f"{where}: cannot reach the server ({text})")


def _first_line(exc: BaseException) -> str:
    # libpq messages may quote the conninfo; keep the first line, which names the cause.
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]

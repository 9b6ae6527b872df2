"""Server errors: when the dashboard's own database is read-only, unreachable, full, locked or not migrated,
every page says so plainly (503 and what to check) instead of a bare 500.

This is `handler500`, so it sees failures from views and from middleware alike (a session saved on the way
out, a login throttle read on the way in). Only errors of Django's own database layer count: Mycel's files
are read through sqlite3 and psycopg directly, and their problems are already said on the page that reads
them. The page touches no database (it would fail again) and names no path or host; the server's log has
the whole error.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

from django.db import InterfaceError, OperationalError, ProgrammingError
from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.views import defaults

RETRY_AFTER_S = 30
_WHERE = (
    "Where the database is: DASHBOARD_DB_PATH (an SQLite file, by default var/dashboard.sqlite3 in the "
    "checkout, or under DASHBOARD_DATA_DIR), or DATABASE_URL when it is set (PostgreSQL)."
)


@dataclass(frozen=True, slots=True)
class DatabaseProblem:
    """What went wrong with the dashboard's database, in an operator's words, and what to check."""

    title: str
    explanation: str
    checks: tuple[str, ...]


_READ_ONLY = DatabaseProblem(
    "The dashboard's database is read-only",
    "The dashboard could read its database but not write to it, and every sign-in, session and audit "
    "entry is a write.",
    (
        "The SQLite file and its folder are writable by the user the server runs as (SQLite also writes "
        "-wal and -shm files beside it).",
        "The disk or volume holding it is not mounted read-only.",
        "With PostgreSQL: DATABASE_URL points at the primary, not a read-only replica or a server in "
        "recovery, and the role may write.",
    ),
)
_UNREACHABLE = DatabaseProblem(
    "The dashboard's database cannot be reached",
    "The dashboard could not open or connect to its own database (users, sessions, the audit log).",
    (
        "The SQLite file's folder exists and the server's user may enter it; the volume is mounted.",
        "With PostgreSQL: the server is up and reachable from this host, and DATABASE_URL's host, port, "
        "database name, user and password are right.",
    ),
)
_FULL = DatabaseProblem(
    "The dashboard's database is full",
    "The disk holding the dashboard's database has no room left for a write.",
    ("Free space on the disk that holds the database (df -h), then reload.",),
)
_BUSY = DatabaseProblem(
    "The dashboard's database is busy",
    "Another process held the database's write lock longer than the dashboard waits (20 s).",
    (
        "A long-running command (a migration, a backup holding a write lock) has finished.",
        "Only dashboard processes write to this SQLite file; several hosts share PostgreSQL instead.",
    ),
)
_NOT_MIGRATED = DatabaseProblem(
    "The dashboard's database is not set up",
    "The database has no tables, or not the ones this version needs.",
    ("Run `python manage.py migrate` with the same environment as the server (make serve does it).",),
)
_DAMAGED = DatabaseProblem(
    "The dashboard's database file is damaged",
    "The file the dashboard opened is not a readable SQLite database.",
    (
        "DASHBOARD_DB_PATH names the dashboard's own file, not another file.",
        "Restore it from a backup, or move it aside and run `python manage.py migrate` to start an empty one "
        "(users and the audit log are then gone).",
    ),
)
# SQLite's and PostgreSQL's messages, most specific first (matched lower-cased).
_KINDS: tuple[tuple[DatabaseProblem, re.Pattern[str]], ...] = (
    (_READ_ONLY, re.compile(r"readonly database|read-only|read only")),
    (_FULL, re.compile(r"database or disk is full|no space left|disk full")),
    (_BUSY, re.compile(r"database (table )?is locked")),
    (_NOT_MIGRATED, re.compile(r"no such (table|column)|(relation|column) \".*\" does not exist")),
    (_DAMAGED, re.compile(r"file is not a database|malformed|disk i/o error")),
    (
        _UNREACHABLE,
        re.compile(
            r"unable to open database|connection|could not connect|could not translate host|timeout expired"
            r"|no route to host|name or service not known|the database system is|authentication failed"
            r"|(database|role) \".*\" does not exist|too many clients"
        ),
    ),
)


def database_problem(exc: BaseException | None) -> DatabaseProblem | None:
    """The problem with the dashboard's database that `exc` (or an error it was raised from) shows, or None
    for any other error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, InterfaceError):
            return _UNREACHABLE  # a connection that is gone
        # Not IntegrityError or DataError: those are the code's or the input's, a 500 as any other bug.
        if isinstance(exc, OperationalError | ProgrammingError):
            message = str(exc).lower()
            return next((problem for problem, pattern in _KINDS if pattern.search(message)), None)
        exc = exc.__cause__ or exc.__context__
    return None


def database_unavailable(problem: DatabaseProblem) -> HttpResponse:
    """The plain 503 page for `problem`; rendered without a request, so nothing asks the database again."""
    body = loader.render_to_string("database_unavailable.html", {"problem": problem, "where": _WHERE})
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_S)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest, template_name: str = defaults.ERROR_500_TEMPLATE_NAME) -> HttpResponse:
    """handler500: the database page when the dashboard's database failed, Django's 500 otherwise."""
    problem = database_problem(sys.exc_info()[1])
    if problem is not None:
        return database_unavailable(problem)
    return defaults.server_error(request, template_name)

"""When the dashboard's own database is read-only or cannot be reached, every page says so plainly (503, what
to check), never a bare 500; the details go to the server's log, not to the page."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    ProgrammingError,
    connection,
    connections,
)
from django.test import Client
from django.urls import reverse

from mycel_dashboard.web.errors import database_problem
from tests.hostile.pages import body_of


def _sqlite_read_only(on: bool) -> None:
    # Run on the driver's own connection: the test's transaction does not let Django run anything after a
    # failed write, and this switch must be off again for the next test on the same connection.
    connection.ensure_connection()
    connection.connection.execute(f"PRAGMA query_only = {'ON' if on else 'OFF'}")


@pytest.fixture
def read_only_database(db):
    if connection.vendor != "sqlite":
        pytest.skip("the read-only switch here is SQLite's PRAGMA query_only")
    _sqlite_read_only(True)
    try:
        yield
    finally:
        _sqlite_read_only(False)


def test_a_read_only_database_gives_a_plain_503(viewer, read_only_database, caplog) -> None:
    client = Client(raise_request_exception=False)
    response = client.post(reverse("login"), {"username": "viewer", "password": "viewer-pass-123"})
    body = body_of(response)
    assert response.status_code == 503, body[:300]
    assert "read-only" in body and "DASHBOARD_DB_PATH" in body and "DATABASE_URL" in body
    assert "Traceback" not in body and "attempt to write" not in body  # the details are in the log
    assert response["Retry-After"]
    assert any("readonly database" in r.getMessage() or r.exc_info for r in caplog.records)


def test_an_unreachable_database_gives_a_plain_503(db, tmp_path: Path, monkeypatch) -> None:
    # A new thread opens its own connection from the settings: there, the file's folder does not exist.
    monkeypatch.setitem(connections.settings["default"], "NAME", str(tmp_path / "gone" / "dashboard.sqlite3"))
    if connections.settings["default"]["ENGINE"] != "django.db.backends.sqlite3":
        pytest.skip("the unreachable database here is an SQLite file in a missing folder")
    answers = {}

    def visit() -> None:
        try:
            client = Client(raise_request_exception=False)
            answers["login"] = client.post(reverse("login"), {"username": "x", "password": "y"})
            client.cookies["sessionid"] = "a-session-the-database-would-know"
            answers["threads"] = client.get(reverse("threads"))
        finally:
            connections.close_all()

    worker = threading.Thread(target=visit)
    worker.start()
    worker.join(60)
    for name, response in answers.items():
        body = body_of(response)
        assert response.status_code == 503, (name, body[:300])
        assert "cannot be reached" in body or "cannot be opened" in body, body
        assert "gone" not in body  # no path of the server's in a page anyone can load
    assert set(answers) == {"login", "threads"}


@pytest.mark.parametrize(
    ("error", "title"),
    [
        (OperationalError("attempt to write a readonly database"), "read-only"),
        (OperationalError("cannot execute INSERT in a read-only transaction"), "read-only"),
        (OperationalError("unable to open database file"), "cannot be reached"),
        (
            OperationalError('connection to server at "db" (10.0.0.5), port 5432 failed: Connection refused'),
            "cannot be reached",
        ),
        (OperationalError('FATAL:  database "dashboard" does not exist'), "cannot be reached"),
        (InterfaceError("connection already closed"), "cannot be reached"),
        (OperationalError("database or disk is full"), "full"),
        (OperationalError("database is locked"), "busy"),
        (OperationalError("no such table: django_session"), "not set up"),
        (ProgrammingError('relation "axes_accessattempt" does not exist'), "not set up"),
        (DatabaseError("file is not a database"), None),  # a DatabaseError of another kind is a bug: 500
        (OperationalError("file is not a database"), "damaged"),
        (IntegrityError('null value in column "actor" of relation "x" violates not-null constraint'), None),
        (ValueError("connection"), None),
    ],
)
def test_which_database_errors_get_the_plain_page(error: Exception, title: str | None) -> None:
    problem = database_problem(error)
    if title is None:
        assert problem is None
    else:
        assert problem is not None and title in problem.title


def test_a_database_error_under_another_error_still_counts() -> None:
    try:
        try:
            raise OperationalError("attempt to write a readonly database")
        except OperationalError as inner:
            raise RuntimeError("the session could not be saved") from inner
    except RuntimeError as outer:
        problem = database_problem(outer)
    assert problem is not None and "read-only" in problem.title

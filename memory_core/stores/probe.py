"""Is a store reachable right now? One cheap, time-limited question per store, for the readiness check.

A probe reads one page of the schema (SQLite: sqlite_master, which needs a shared lock, so an exclusive
lock held by another connection shows; PostgreSQL: SELECT 1 on a new connection), never a thread.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from memory_core.records import ProblemKind, StoreProblem
from memory_core.stores.postgres.connect import mask_url, problem_of
from memory_core.stores.sqlite.connect import StoreError, open_readonly, problem_from_error


def probe_sqlite(path: Path, store: str, *, timeout_s: float) -> StoreProblem | None:
    """Why the SQLite file at `path` cannot be read now (missing, locked, damaged); None when it can."""
    try:
        db = open_readonly(path, store=store, timeout_s=timeout_s, row_cap=1)
    except StoreError as exc:
        return exc.problem
    try:
        db.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        return problem_from_error(exc, store=store, path=path)
    finally:
        db.conn.close()
    return None


def probe_postgres(url: str, store: str, *, timeout_s: float) -> StoreProblem | None:
    """Why the PostgreSQL server at `url` cannot answer now; None when it does. The problem's text names
    the server with its password masked."""
    millis = max(1, int(timeout_s * 1000))
    try:
        with psycopg.connect(
            url,
            connect_timeout=max(1, round(timeout_s)),
            options=f"-c statement_timeout={millis}",
            prepare_threshold=None,
        ) as conn:
            conn.execute("SELECT 1").fetchone()
    except psycopg.Error as exc:
        return problem_of(exc, store, url)
    except Exception as exc:  # noqa: BLE001 - a malformed URL is a problem to report, never a crash
        return StoreProblem(ProblemKind.UNREACHABLE, store, f"{mask_url(url)}: {type(exc).__name__}")
    return None

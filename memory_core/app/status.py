"""Where Mycel's stores are and whether they can be read: `status`, and the check every question makes
before it answers (no data at all, or a checkpoint store that failed, is the answer, not an empty list)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memory_core.app.errors import StoreUnreadable
from memory_core.records import ProblemKind, StoreProblem
from memory_core.stores.locations import MycelLocations, StoreRole

_TIMEOUT_S = 5.0


def store_lines(locations: MycelLocations) -> list[dict[str, Any]]:
    """One line per store: engine, location, schema, layout, LangGraph migration, problem."""
    lines: list[dict[str, Any]] = []
    if locations.postgres_url:
        from memory_core.stores.postgres.backend import PostgresBackend  # psycopg only when it is used

        backend = PostgresBackend(locations, query_timeout_s=_TIMEOUT_S, row_cap=1000)
        layouts, problems = backend.layouts()
        for layout in layouts:
            lines.append(
                _line(
                    "checkpoints",
                    "postgresql",
                    backend.masked_url,
                    layout.schema,
                    layout.layout,
                    layout.migration,
                )
            )
        for problem in problems:
            lines.append(_line("checkpoints", "postgresql", backend.masked_url, None, None, None, problem))
    for role, path in locations.databases().items():
        if role is StoreRole.MAIN and locations.postgres_url and not path.exists():
            continue  # leon.db is then only a side store Mycel may never have made
        name = "main (sqlite)" if role is StoreRole.MAIN else None
        present = None if path.exists() else "absent"
        lines.append(_line(role.value, "sqlite", str(path), None, name, None, note=present))
    return lines


def _line(
    store: str,
    engine: str,
    location: str,
    schema: str | None,
    layout: str | None,
    migration: int | None,
    problem: StoreProblem | None = None,
    *,
    note: str | None = None,
) -> dict[str, Any]:
    return {
        "store": store,
        "engine": engine,
        "location": location,
        "schema": schema,
        "layout": layout,
        "migration": migration,
        "problem": problem.message if problem is not None else note,
        "problem_kind": problem.kind.value if problem is not None else None,
    }


def postgres_unreadable(locations: MycelLocations) -> StoreProblem | None:
    """Why no checkpoint layout can be read at LEON_POSTGRES_URL (None when one can, or it is unset)."""
    if not locations.postgres_url:
        return None
    from memory_core.stores.postgres.backend import PostgresBackend

    layouts, problems = PostgresBackend(locations, query_timeout_s=_TIMEOUT_S, row_cap=1000).layouts()
    return problems[0] if not layouts and problems else None


def require_data(locations: MycelLocations) -> None:
    """No Mycel file at all where the variables point: say where we looked, rather than list nothing."""
    if locations.postgres_url:
        # Checkpoints in PostgreSQL: no readable layout there is the error, said as the server said it.
        problem = postgres_unreadable(locations)
        if problem is not None:
            raise StoreUnreadable(problem.message)
        return
    if not any(path.exists() for path in locations.databases().values()):
        raise StoreUnreadable(
            f"no Mycel data: {locations.main} does not exist (set LEON_DB_PATH to Mycel's leon.db; "
            "LEON_SANDBOX_DB_PATH and LEON_QUEUE_DB_PATH for the other stores)"
        )


def missing_checkpoints(locations: MycelLocations) -> str | None:
    """Checkpoints kept in SQLite whose leon.db is not where the variables point: one line naming it
    (None when it is there, or checkpoints are in PostgreSQL). The other stores may still name threads,
    with no checkpoint, message or byte of them."""
    if locations.postgres_url or locations.main.exists():
        return None
    named = " (LEON_DB_PATH)" if "LEON_DB_PATH" in locations.explicit else ""
    return f"leon.db not found at {locations.main}{named}: no checkpoints to read"


# What leaves part of an answer out without making the store unreadable: a row cap reached, one damaged
# checkpoint, one blob that asked for something unsafe. Said as warnings, never a 503.
_PARTIAL = frozenset({ProblemKind.TRUNCATED, ProblemKind.UNREADABLE_CHECKPOINT, ProblemKind.REFUSED})


def unreadable(problems: Sequence[StoreProblem]) -> list[StoreProblem]:
    """The problems that mean the checkpoint store itself could not be read (damaged, locked, out of reach)."""
    return [
        p
        for p in problems
        if p.store == StoreRole.MAIN.value and not p.expected_absence and p.kind not in _PARTIAL
    ]


def refuse_unreadable(problems: Sequence[StoreProblem]) -> None:
    """No thread read because the checkpoint store itself failed: that is the answer, in one line, not an
    empty table or a "not found"."""
    found = unreadable(problems)
    if found:
        raise StoreUnreadable(found[0].message)

"""SQLite files' table measures kept in our own facts file (never one of Mycel's), so a new process — a
gunicorn worker, a CLI run — reuses the last measure under the same rule (memory_core/footprint/facts.py
MEASURE_DRIFT) instead of visiting every page of the file with dbstat again (~2 s over a 100,000-thread
leon.db). Only a cache: a file we cannot read or write is set aside, and the tables are measured again.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Hashable
from contextlib import closing
from pathlib import Path

from memory_core.footprint.facts import TableMeasure, TableSpace
from memory_core.stores.thread_list.facts_file import another_process_saving, connect_facts_file, set_aside

log = logging.getLogger(__name__)

FILE_NAME = "table-measures.sqlite3"
_VERSION = 1
_TABLE = "measures"
_COLUMNS = "location TEXT PRIMARY KEY, measure TEXT NOT NULL"


def _connect(folder: Path) -> sqlite3.Connection:
    folder.mkdir(parents=True, exist_ok=True)
    return connect_facts_file(folder / FILE_NAME, table=_TABLE, columns=_COLUMNS, version=_VERSION)


def _location(where: Hashable) -> str:
    return json.dumps(where, default=str)


def load_measure(folder: Path, where: Hashable) -> TableMeasure | None:
    """The measure last kept for the file at `where` (its path and inode), None when there is none."""
    try:
        with closing(_connect(folder)) as conn:
            row = conn.execute(
                f"SELECT measure FROM {_TABLE} WHERE location = ?", (_location(where),)
            ).fetchone()
        return None if row is None else _measure_of(json.loads(row[0]))
    except (sqlite3.Error, OSError, ValueError, KeyError, TypeError) as exc:
        _set_aside(folder, exc)
        return None


def save_measure(folder: Path, where: Hashable, measure: TableMeasure) -> None:
    """Keep `measure` for the file at `where`; a save another process holds the file for is skipped."""
    try:
        with closing(_connect(folder)) as conn, conn:
            conn.execute(
                f"INSERT OR REPLACE INTO {_TABLE} (location, measure) VALUES (?, ?)",
                (_location(where), json.dumps(_json_of(measure))),
            )
    except (sqlite3.Error, OSError) as exc:
        if not (isinstance(exc, sqlite3.OperationalError) and another_process_saving(exc)):
            _set_aside(folder, exc)


def _set_aside(folder: Path, exc: Exception) -> None:
    log.warning("table measures file %s set aside: %s", folder / FILE_NAME, exc)
    set_aside(folder / FILE_NAME)


def _json_of(measure: TableMeasure) -> dict[str, object]:
    return {
        "pages": measure.pages,
        "free_pages": measure.free_pages,
        "tables": [[t.name, t.kind, t.bytes, t.payload] for t in measure.tables],
        "measured_by": measure.measured_by,
        "estimated": list(measure.estimated),
        "file": measure.file,
    }


def _measure_of(data: dict[str, object]) -> TableMeasure:
    tables = data["tables"]
    if not isinstance(tables, list):
        raise ValueError("a measure without its tables")
    return TableMeasure(
        pages=int(str(data["pages"])),
        free_pages=int(str(data["free_pages"])),
        tables=tuple(
            TableSpace(str(n), str(k), int(b), None if p is None else int(p)) for n, k, b, p in tables
        ),
        measured_by=str(data["measured_by"]),
        estimated=tuple(str(e) for e in data["estimated"]) if isinstance(data["estimated"], list) else (),
        file=data["file"] if isinstance(data["file"], str) else None,
    )

"""The Thread screen's lazily loaded panels: each has a name, a title and a loader returning tables.

Like django-debug-toolbar's panels: small, independent, each fetched by its own request, so a slow or
broken store only blanks its own panel.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memory_core.integrity import integrity_issues
from memory_core.lineage import TimeJoined, file_operations_by_time, run_events_by_time
from memory_core.records import StoreProblem
from memory_core.stores.reader import MycelReader

LONG_CELL = 160  # longer cell values are shown collapsed
# Wider tables are shown one record at a time (field, value): a 340 px side column cannot hold eight columns
# of paths, ids and JSON side by side without hiding most of them behind a horizontal scroll.
RECORD_COLUMNS = 3


@dataclass(frozen=True, slots=True)
class Table:
    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    @property
    def as_records(self) -> bool:
        return len(self.columns) >= RECORD_COLUMNS

    @property
    def records(self) -> tuple[tuple[tuple[str, str], ...], ...]:
        """Each row as (column, value) pairs."""
        return tuple(tuple(zip(self.columns, row, strict=False)) for row in self.rows)


@dataclass(frozen=True, slots=True)
class PanelContent:
    tables: tuple[Table, ...] = ()
    empty: str = "Nothing recorded for this thread."
    notes: tuple[str, ...] = ()
    problems: tuple[StoreProblem, ...] = ()
    errors: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Panel:
    name: str
    title: str
    load: Callable[[MycelReader, str, str], PanelContent]  # (reader, thread id, its checkpoint layout)


def cell(value: Any) -> str:
    """A value as plain text for a table cell (the template escapes it)."""
    if value is None:
        return "—"
    if isinstance(value, datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping | list | tuple):
        try:
            return json.dumps(value, ensure_ascii=False, default=str, indent=1)
        except (TypeError, ValueError):
            return repr(value)
    return str(value)


def records_table(caption: str, records: Iterable[Any], columns: Sequence[str] | None = None) -> Table:
    """A table of dataclass records; columns default to every field."""
    items = list(records)
    if columns is None:
        columns = [f.name for f in dataclasses.fields(items[0])] if items else []
    rows = tuple(tuple(cell(getattr(item, name, None)) for name in columns) for item in items)
    return Table(caption=caption, columns=tuple(columns), rows=rows)


def _sandbox(reader: MycelReader, thread_id: str, layout: str) -> PanelContent:
    result = reader.get_sandbox(thread_id)
    state = result.value
    if state is None:
        return PanelContent(empty="No sandbox is bound to this thread.", problems=result.problems)
    scalars: list[tuple[str, str]] = []
    tables: list[Table] = []
    for f in dataclasses.fields(state):
        value = getattr(state, f.name)
        title = f.name.replace("_", " ")
        if isinstance(value, list | tuple) and value and dataclasses.is_dataclass(value[0]):
            tables.append(records_table(title, value))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            fields = dataclasses.fields(value)
            tables.append(
                Table(
                    title, ("field", "value"), tuple((x.name, cell(getattr(value, x.name))) for x in fields)
                )
            )
        elif isinstance(value, list | tuple) and not value:
            tables.append(Table(title, (), ()))
        else:
            scalars.append((title, cell(value)))
    if scalars:
        tables.insert(0, Table("sandbox", ("field", "value"), tuple(scalars)))
    return PanelContent(tables=tuple(tables), problems=result.problems)


def _queue(reader: MycelReader, thread_id: str, layout: str) -> PanelContent:
    result = reader.list_queue(thread_id)
    columns = ("id", "created_at", "notification_type", "source", "sender_name", "content")
    tables = (records_table("pending items", result.value, columns),) if result.value else ()
    return PanelContent(
        tables=tables,
        empty="No pending items. Mycel deletes queue rows once it delivers them.",
        problems=result.problems,
    )


JOINED_BY_TIME = (
    "Joined by time: Mycel dev's checkpoints carry no run id, so each row is shown with the first checkpoint "
    "saved at or after it (the save that ended its step); none after the newest checkpoint."
)
BY_TIME_COLUMN = "checkpoint (joined by time)"


def _with_checkpoints(table: Table, joined: Sequence[TimeJoined[Any]]) -> Table:
    """The table with each row's time-joined checkpoint as its first column."""
    rows = tuple((cell(j.checkpoint_id), *row) for j, row in zip(joined, table.rows, strict=True))
    return Table(table.caption, (BY_TIME_COLUMN, *table.columns), rows)


def _file_operations(reader: MycelReader, thread_id: str, layout: str) -> PanelContent:
    result = reader.list_file_operations(thread_id)
    columns = (
        "timestamp",
        "operation_type",
        "file_path",
        "status",
        "run_id",
        "changes",
        "before_content",
        "after_content",
    )
    notes = ["Mycel's file_operations.checkpoint_id holds the web run id, shown here as run_id."]
    problems = list(result.problems)
    tables: tuple[Table, ...] = ()
    if result.value:
        table = records_table("Write and Edit operations", result.value, columns)
        if layout == "dev":
            checkpoints = reader.list_checkpoints(thread_id)
            problems.extend(checkpoints.problems)
            table = _with_checkpoints(table, file_operations_by_time(checkpoints.value, result.value))
            notes.append(JOINED_BY_TIME)
        tables = (table,)
    return PanelContent(
        tables=tables,
        empty="No file operations recorded (only Write and Edit are recorded, not Bash).",
        notes=tuple(notes),
        problems=tuple(problems),
    )


def _run_events(reader: MycelReader, thread_id: str, layout: str) -> PanelContent:
    result = reader.list_run_events(thread_id)
    columns = ("seq", "created_at", "run_id", "event_type", "message_id", "data")
    notes = ["Mycel keeps only each thread's latest run in events.db: this is a replay buffer, not history."]
    problems = list(result.problems)
    tables: tuple[Table, ...] = ()
    if layout == "dev":
        notes = [JOINED_BY_TIME]  # dev keeps its runs in agent.run_events, not events.db
    if result.value:
        table = records_table("events", result.value, columns)
        if layout == "dev":
            checkpoints = reader.list_checkpoints(thread_id)
            problems.extend(checkpoints.problems)
            table = _with_checkpoints(table, run_events_by_time(checkpoints.value, result.value))
        tables = (table,)
    return PanelContent(
        tables=tables,
        empty="No run events stored.",
        notes=tuple(notes),
        problems=tuple(problems),
    )


def _integrity(reader: MycelReader, thread_id: str, layout: str) -> PanelContent:
    state = reader.get_state(thread_id)
    if state.value is None:
        return PanelContent(empty="No readable checkpoint to check.", problems=state.problems)
    issues = integrity_issues(state.value.messages)
    tables = (records_table("warnings", issues),) if issues else ()
    return PanelContent(
        tables=tables,
        empty="No integrity problems: every tool call has its result, ids are unique.",
        problems=state.problems,
    )


PANELS: dict[str, Panel] = {
    panel.name: panel
    for panel in (
        Panel("integrity", "Integrity warnings", _integrity),
        Panel("sandbox", "Sandbox", _sandbox),
        Panel("queue", "Queue", _queue),
        Panel("file-operations", "File operations", _file_operations),
        Panel("run-events", "Run events", _run_events),
    )
}

"""What every screen shows of a thread's memory settings, and how a section of a page fails politely.

The rules themselves (model, project folder, context limit) live in memory_core.stores.thread_settings;
this module only words them for the page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from memory_core.config.model import Severity
from memory_core.records import StoreProblem, ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.thread_settings import project_folder, thread_memory_settings, thread_model

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ContextLimitInfo:
    value: int
    source: str  # plain words: where the limit came from


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """The memory settings Mycel would apply to one thread, with where its context limit came from."""

    settings: MemorySettings
    limit: ContextLimitInfo
    notes: tuple[str, ...] = ()


def thread_memory(
    thread: ThreadRow | None, *, locations: MycelLocations, override: int | None = None
) -> MemoryContext:
    """The thread's effective memory settings from Mycel's own config files (None: an unknown thread).

    `override` replaces the resolved context limit (a what-if from the page's URL).
    """
    resolved = thread_memory_settings(locations, thread)
    settings = resolved.settings
    limit = ContextLimitInfo(resolved.limit.value, resolved.limit.explanation)
    if override:
        limit = ContextLimitInfo(override, f"set on this page (Mycel would use {limit.value:,})")
        settings = replace(settings, context_limit=override)
    notes = tuple(p.message for p in resolved.problems if p.severity is Severity.ERROR)
    return MemoryContext(settings=settings, limit=limit, notes=notes)


class ThreadMemories:
    """thread_memory for many threads in one request: the config files are read once per model and
    project folder, not once per thread."""

    def __init__(self, locations: MycelLocations, *, override: int | None = None) -> None:
        self.locations = locations
        self.override = override
        self._by_fields: dict[tuple[str | None, str | None, str | None], MemoryContext] = {}
        self._found: dict[tuple[str | None, Path | None], MemoryContext] = {}

    def __call__(self, thread: ThreadRow) -> MemoryContext:
        # The row's fields the rules read (model, chosen model, workspace): 10,000 rows, a few distinct.
        fields = (thread.configured_model, thread.model, thread.cwd)
        found = self._by_fields.get(fields)
        if found is None:
            key = (thread_model(thread), project_folder(self.locations, thread))
            if key not in self._found:
                self._found[key] = thread_memory(thread, locations=self.locations, override=self.override)
            found = self._by_fields[fields] = self._found[key]
        return found


def problem_text(problem: StoreProblem) -> str:
    where = f" ({problem.path})" if problem.path else ""
    return f"{problem.store}: {problem.message}{where}"


def guarded(what: str, compute: Callable[[], T], problems: list[str]) -> T | None:
    """Run one section of a page; a failure becomes a message in the page instead of a 500.

    Broad on purpose: Mycel's files are outside our control, and one unreadable part must not take the
    rest of the page down with it.
    """
    try:
        return compute()
    except Exception as exc:  # noqa: BLE001
        log.exception("could not compute %s", what)
        problems.append(f"Could not compute {what}: {type(exc).__name__}: {exc}")
        return None

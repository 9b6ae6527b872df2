"""What every screen shows of a thread's memory settings, and how a section of a page fails politely.

The rules themselves (model, project folder, context limit) live in memory_core.app.thread_settings;
this module only words them for the page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from memory_core import figures
from memory_core.app.calls import limit_source
from memory_core.app.thread_settings import (
    ThreadMemorySettings,
    memory_settings_for,
    project_folder,
    thread_memory_settings,
    thread_model,
)
from memory_core.config.model import Severity
from memory_core.memory_settings import MemorySettings
from memory_core.records import StoreProblem, ThreadRow
from memory_core.stores.locations import MycelLocations

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
    limit_source: str = ""  # the same, in the few words the calls carry ("models.json", "assumed default")
    override: int | None = None  # a context limit set on the page (a what-if), else None
    # Information, not a problem: today's config differs from the one the record reads (today_differs).
    today_note: str | None = None


def memory_context(resolved: ThreadMemorySettings, *, override: int | None = None) -> MemoryContext:
    """What the page says of resolved settings; `override` replaces the resolved context limit (a what-if
    from the page's URL)."""
    settings = resolved.settings
    limit = ContextLimitInfo(resolved.limit.value, resolved.limit.explanation)
    source = limit_source(resolved.limit)
    if override:
        limit = ContextLimitInfo(override, f"set on this page (Mycel would use {figures.count(limit.value)})")
        settings = replace(settings, context_limit=override)
        source = "set on this page"
    notes = tuple(p.message for p in resolved.problems if p.severity is Severity.ERROR)
    return MemoryContext(
        settings=settings, limit=limit, notes=notes, limit_source=source, override=override or None
    )


def thread_memory(
    thread: ThreadRow | None, *, locations: MycelLocations, override: int | None = None
) -> MemoryContext:
    """The thread's memory settings as its record takes them: Mycel's config files as they were at its
    newest activity, never as saved since (None: an unknown thread, today's). Says so when today's differ."""
    when = thread.updated_at if thread is not None else None
    then = thread_memory_settings(locations, thread, as_of=when)
    context = memory_context(then, override=override)
    if when is None:
        return context
    notes = list(context.notes) + list(then.loaded.past_notes if then.loaded else ())
    today = thread_memory_settings(locations, thread).settings
    note = today_differs(then.settings, today) if today != then.settings else None
    return replace(context, notes=tuple(notes), today_note=note)


_COMPARED = (
    "context_limit",
    "soft_trim_chars",
    "hard_clear_threshold",
    "protect_recent",
    "keep_recent_tokens",
)


def today_differs(then: MemorySettings, today: MemorySettings) -> str:
    """The note a thread's page carries when the config changed after the thread's newest activity."""
    changed = [
        f"{name} {figures.count(getattr(today, name))} instead of {figures.count(getattr(then, name))}"
        for name in _COMPARED
        if getattr(today, name) != getattr(then, name)
    ]
    what = f" ({'; '.join(changed)})" if changed else ""
    return (
        f"Today's config differs from the one in force at this thread's newest activity{what}. This page "
        "shows what Mycel did, under the config then; today's applies from the thread's next call (Dry-run "
        "and the Config screen's what-if show its effect)."
    )


class SettingsResolver:
    """MemorySettings per thread, current and proposed, as thread_settings decides them."""

    def __init__(self, locations: MycelLocations, overrides: Mapping[str, Any]) -> None:
        self.locations = locations
        self.overrides = overrides
        self._resolved: dict[tuple[str | None, Path | None, bool], ThreadMemorySettings] = {}
        self._by_fields: dict[tuple[tuple[str | None, ...] | None, bool], ThreadMemorySettings] = {}

    def resolved(
        self, model: str | None, project_dir: Path | None, *, proposed: bool
    ) -> ThreadMemorySettings:
        key = (model, project_dir, proposed)
        if key not in self._resolved:
            self._resolved[key] = memory_settings_for(
                self.locations,
                model=model,
                project_dir=project_dir,
                overrides=self.overrides if proposed else None,
            )
        return self._resolved[key]

    def for_thread(self, row: ThreadRow | None, *, proposed: bool) -> ThreadMemorySettings:
        # The row's fields the rules read (chosen model, model, workspace): 10,000 rows, a few distinct.
        fields = (row.configured_model, row.model, row.cwd) if row is not None else None
        found = self._by_fields.get((fields, proposed))
        if found is None:
            found = self.resolved(thread_model(row), project_folder(self.locations, row), proposed=proposed)
            self._by_fields[(fields, proposed)] = found
        return found

    def pair(self, row: ThreadRow) -> tuple[MemorySettings, MemorySettings]:
        return (
            self.for_thread(row, proposed=False).settings,
            self.for_thread(row, proposed=True).settings,
        )


class ThreadMemories:
    """thread_memory for many threads in one request, through one SettingsResolver."""

    def __init__(self, locations: MycelLocations, *, override: int | None = None) -> None:
        self.resolver = SettingsResolver(locations, {})
        self.override = override
        self._contexts: dict[
            int, MemoryContext
        ] = {}  # by the resolved settings' identity (the resolver keeps them)

    def __call__(self, thread: ThreadRow) -> MemoryContext:
        resolved = self.resolver.for_thread(thread, proposed=False)
        found = self._contexts.get(id(resolved))
        if found is None:
            found = self._contexts[id(resolved)] = memory_context(resolved, override=self.override)
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

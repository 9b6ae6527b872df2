"""The dashboard's one door into memory_core: which files to read, with which memory settings.

Views call these helpers instead of building readers and settings themselves, so every screen reads the
same source with the same effective config.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from django.conf import settings as django_settings

from memory_core.config.model import Severity
from memory_core.records import StoreProblem, ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_settings import memory_settings_for
from mycel_dashboard.sources import DataSource, current_source
from mycel_dashboard.thread_list import ContextLimitInfo

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class MemoryContext:
    """The memory settings Mycel would apply to one thread, with where its context limit came from."""

    settings: MemorySettings
    limit: ContextLimitInfo
    notes: tuple[str, ...] = ()


def open_source() -> tuple[DataSource, MycelReader]:
    source = current_source()
    return source, MycelReader(
        source.locations,
        query_timeout_s=django_settings.DASHBOARD_STORE_TIMEOUT_MS / 1000,
        facts_folder=django_settings.DASHBOARD_FACTS_DIR,
    )


def memory_context(
    model: str | None,
    *,
    override: int | None = None,
    locations: MycelLocations | None = None,
    project_dir: Path | None = None,
) -> MemoryContext:
    """Effective memory settings for a thread using `model`, from Mycel's own config files.

    `override` replaces the resolved context limit (a what-if from the page's URL).
    """
    resolved = memory_settings_for(
        locations or current_source().locations, model=model, project_dir=project_dir
    )
    settings = resolved.settings
    limit = ContextLimitInfo(resolved.limit.value, resolved.limit.explanation)
    if override:
        limit = ContextLimitInfo(override, f"set on this page (Mycel would use {limit.value:,})")
        settings = replace(settings, context_limit=override)
    notes = tuple(p.message for p in resolved.problems if p.severity is Severity.ERROR)
    return MemoryContext(settings=settings, limit=limit, notes=notes)


def thread_memory(
    thread: ThreadRow, *, override: int | None = None, locations: MycelLocations
) -> MemoryContext:
    """memory_context for one thread: its configured model and its workspace's project layer, as Mycel does."""
    return memory_context(
        thread.configured_model or thread.model,
        override=override,
        locations=locations,
        project_dir=Path(thread.cwd) if thread.cwd else None,
    )


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

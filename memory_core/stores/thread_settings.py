"""The memory settings Mycel would apply to one thread: its config layers and its model's context limit."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memory_core.config import ConfigProblem
from memory_core.context_limits import ContextLimit
from memory_core.records import ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import get_loaded_config


@dataclass(frozen=True, slots=True)
class ThreadMemorySettings:
    settings: MemorySettings  # context_limit already resolved for the model
    limit: ContextLimit
    problems: tuple[ConfigProblem, ...]


def memory_settings_for(
    locations: MycelLocations, *, model: str | None, project_dir: Path | None
) -> ThreadMemorySettings:
    """Effective settings as Mycel builds an agent for `model` with `project_dir` as its workspace."""
    loaded = get_loaded_config(locations, model=model, project_dir=project_dir)
    limit = loaded.context_limit
    settings = replace(loaded.effective.settings, context_limit=limit.value)
    return ThreadMemorySettings(settings=settings, limit=limit, problems=loaded.problems)


def thread_memory_settings(locations: MycelLocations, row: ThreadRow) -> ThreadMemorySettings:
    """Settings for `row`: the thread's workspace is the project layer, and the context limit comes from the
    model chosen for the thread (threads.model, else the one it ran with).
    """
    project_dir = Path(row.cwd) if row.cwd else locations.project_dir
    return memory_settings_for(locations, model=row.configured_model or row.model, project_dir=project_dir)

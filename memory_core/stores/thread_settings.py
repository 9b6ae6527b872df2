"""The memory settings Mycel would apply to one thread: its config layers and its model's context limit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from memory_core.context_limits import ContextLimit
from memory_core.records import ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import get_loaded_config


def thread_memory_settings(locations: MycelLocations, row: ThreadRow) -> tuple[MemorySettings, ContextLimit]:
    """Effective settings for `row` as Mycel builds them: the thread's workspace is the project layer, and
    the context limit comes from the model chosen for the thread (threads.model, else the one it ran with).
    """
    project_dir = Path(row.cwd) if row.cwd else locations.project_dir
    loaded = get_loaded_config(locations, model=row.configured_model or row.model, project_dir=project_dir)
    limit = loaded.context_limit
    return replace(loaded.effective.settings, context_limit=limit.value), limit

"""The one home of "what would Mycel run this thread with": its model, its project folder (and so its
config layers), its context limit and the memory settings that follow. Every screen and command asks here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from memory_core.config import ConfigProblem
from memory_core.context_limits import ContextLimit
from memory_core.memory_settings import MemorySettings
from memory_core.records import ThreadRow
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import LoadedConfig, get_loaded_config


@dataclass(frozen=True, slots=True)
class ThreadMemorySettings:
    settings: MemorySettings  # context_limit already resolved for the model
    limit: ContextLimit
    problems: tuple[ConfigProblem, ...]
    project_dir: Path | None  # the folder whose .leon/runtime.json was the project layer
    loaded: LoadedConfig | None = None  # the files as merged (the config screen shows them)


def thread_model(row: ThreadRow | None) -> str | None:
    """The model Mycel builds the thread's agent with: the one chosen for the thread (`threads.model`),
    else the one it last ran with; None means Mycel's web default."""
    if row is None:
        return None
    return row.configured_model or row.model


def project_folder(locations: MycelLocations, row: ThreadRow | None) -> Path | None:
    """The workspace whose `.leon/runtime.json` is the thread's project layer.

    Mycel builds a thread's agent in the thread's workspace (`threads.cwd`). MYCEL_PROJECT_DIR, when set,
    is the operator's word for where that workspace is here (a copied data home's cwd points at another
    machine), so it comes first; the config screen with no thread uses it too.
    """
    if locations.project_dir is not None:
        return locations.project_dir
    return Path(row.cwd) if row is not None and row.cwd else None


def memory_settings_for(
    locations: MycelLocations,
    *,
    model: str | None,
    project_dir: Path | None,
    overrides: Mapping[str, Any] | None = None,
    as_of: datetime | None = None,
) -> ThreadMemorySettings:
    """Effective settings as Mycel builds an agent for `model` with `project_dir` as its workspace
    (`overrides`: a proposed override layer on top, as the config screen's what-if asks; `as_of`: with
    the layer files as they were then, the record's config)."""
    loaded = get_loaded_config(
        locations, model=model, project_dir=project_dir, overrides=overrides or None, as_of=as_of
    )
    limit = loaded.context_limit
    settings = replace(loaded.effective.settings, context_limit=limit.value)
    return ThreadMemorySettings(
        settings=settings, limit=limit, problems=loaded.problems, project_dir=project_dir, loaded=loaded
    )


def thread_memory_settings(
    locations: MycelLocations,
    row: ThreadRow | None,
    *,
    overrides: Mapping[str, Any] | None = None,
    as_of: datetime | None = None,
) -> ThreadMemorySettings:
    """Settings for `row` (None: a thread Mycel knows nothing of, so its web default model); today's, or
    as the config files were at `as_of`."""
    return memory_settings_for(
        locations,
        model=thread_model(row),
        project_dir=project_folder(locations, row),
        overrides=overrides,
        as_of=as_of,
    )

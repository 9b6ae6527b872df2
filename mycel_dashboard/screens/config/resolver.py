"""What Mycel would run with per thread, now and under the Config screen's proposal (config files read
once per model and project folder). The rules are memory_core.stores.thread_settings'; this only keeps
what it read for the length of one request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.context_limits import ContextLimit
from memory_core.records import ThreadRow
from memory_core.settings import MemorySettings, compaction_trigger
from memory_core.stores.locations import MycelLocations
from memory_core.stores.thread_settings import (
    ThreadMemorySettings,
    memory_settings_for,
    project_folder,
    thread_model,
)


@dataclass(frozen=True, slots=True)
class ModelLimit:
    """The context limit Mycel would give one model in use, now and under the proposal."""

    model: str | None
    threads: int
    current: ContextLimit
    proposed: ContextLimit

    @property
    def trigger_tokens(self) -> int:
        return compaction_trigger(self.current.value)


class SettingsResolver:
    """MemorySettings per thread, current and proposed, as thread_settings decides them."""

    def __init__(self, locations: MycelLocations, overrides: Mapping[str, Any]) -> None:
        self.locations = locations
        self.overrides = overrides
        self._resolved: dict[tuple[str | None, Path | None, bool], ThreadMemorySettings] = {}

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
        return self.resolved(thread_model(row), project_folder(self.locations, row), proposed=proposed)

    def pair(self, row: ThreadRow) -> tuple[MemorySettings, MemorySettings]:
        return (
            self.for_thread(row, proposed=False).settings,
            self.for_thread(row, proposed=True).settings,
        )


def model_limits(threads: Sequence[ThreadRow], resolver: SettingsResolver) -> tuple[ModelLimit, ...]:
    """Every model in use across threads, with Mycel's context limit for it and where that comes from."""
    counts: dict[str | None, int] = {}
    for row in threads:
        model = thread_model(row)
        counts[model] = counts.get(model, 0) + 1
    project = project_folder(resolver.locations, None)
    return tuple(
        ModelLimit(
            model=model,
            threads=count,
            current=resolver.resolved(model, project, proposed=False).limit,
            proposed=resolver.resolved(model, project, proposed=True).limit,
        )
        for model, count in sorted(counts.items(), key=lambda item: (-item[1], item[0] or ""))
    )

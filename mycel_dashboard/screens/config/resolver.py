"""What Mycel would run with per thread, now and under the Config screen's proposal (config files read once)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_core.context_limits import ContextLimit
from memory_core.records import ThreadRow
from memory_core.settings import MemorySettings
from memory_core.stores.locations import MycelLocations
from memory_core.stores.runtime_config import LoadedConfig, get_loaded_config


@dataclass(frozen=True, slots=True)
class ModelLimit:
    """The context limit Mycel would give one model in use, now and under the proposal."""

    model: str | None
    threads: int
    current: ContextLimit
    proposed: ContextLimit

    @property
    def trigger_tokens(self) -> int:
        return MemorySettings(context_limit=self.current.value).trigger_tokens


class SettingsResolver:
    """MemorySettings per (model, workspace), current and proposed; config files are read once per pair."""

    def __init__(
        self, locations: MycelLocations, overrides: Mapping[str, Any], project_dir: Path | None = None
    ) -> None:
        self.locations = locations
        self.overrides = overrides
        self.project_dir = project_dir
        self._loaded: dict[tuple[str | None, str | None, bool], LoadedConfig] = {}

    def loaded(self, model: str | None, cwd: str | None, *, proposed: bool) -> LoadedConfig:
        key = (model, cwd, proposed)
        if key not in self._loaded:
            project = self.project_dir or (Path(cwd) if cwd else None)
            self._loaded[key] = get_loaded_config(
                self.locations,
                model=model,
                project_dir=project,
                overrides=self.overrides if proposed and self.overrides else None,
            )
        return self._loaded[key]

    def pair(self, row: ThreadRow) -> tuple[MemorySettings, MemorySettings]:
        model = row.configured_model or row.model
        return (
            self.loaded(model, row.cwd, proposed=False).effective.settings,
            self.loaded(model, row.cwd, proposed=True).effective.settings,
        )


def model_limits(threads: Sequence[ThreadRow], resolver: SettingsResolver) -> tuple[ModelLimit, ...]:
    """Every model in use across threads, with Mycel's context limit for it and where that comes from."""
    counts: dict[str | None, int] = {}
    for row in threads:
        model = row.configured_model or row.model
        counts[model] = counts.get(model, 0) + 1
    return tuple(
        ModelLimit(
            model=model,
            threads=count,
            current=resolver.loaded(model, None, proposed=False).context_limit,
            proposed=resolver.loaded(model, None, proposed=True).context_limit,
        )
        for model, count in sorted(counts.items(), key=lambda item: (-item[1], item[0] or ""))
    )

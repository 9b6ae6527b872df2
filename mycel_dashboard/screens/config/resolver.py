"""The context limit per model in use, now and under the Config screen's proposal (settings come through
the shared SettingsResolver, screens/shared/memory.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_core.app.thread_settings import project_folder, thread_model
from memory_core.context_limits import ContextLimit
from memory_core.memory_settings import compaction_trigger
from memory_core.records import ThreadRow
from mycel_dashboard.screens.shared.memory import SettingsResolver


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


def model_limits(
    threads: Sequence[ThreadRow], resolver: SettingsResolver, *, counts: dict[str | None, int] | None = None
) -> tuple[ModelLimit, ...]:
    """Every model in use across threads, with Mycel's context limit for it and where that comes from
    (`counts`: threads per model already counted, e.g. by the fleet index)."""
    if counts is None:
        counts = {}
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

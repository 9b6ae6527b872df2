"""MemorySettings from one runtime.json-shaped document, the way Mycel's middleware would receive them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core.config.merge import merge_layers
from memory_core.config.model import ConfigLayer, ConfigLayerName, ConfigProblem, Severity
from memory_core.memory_settings import MemorySettings


def settings_from_document(
    document: Mapping[str, Any], *, context_limit: int | None = None
) -> tuple[MemorySettings, list[ConfigProblem]]:
    """MemorySettings from memory.pruning.* / memory.compaction.* over Mycel's defaults, and the findings.

    The document is read as a user/project runtime.json would be (old-style top-level keys are ignored).
    context_limit wins over runtime.context_limit; with neither, Mycel's 128000 fallback. Invalid values
    are reported as errors and replaced by Mycel's defaults.
    """
    effective = merge_layers(
        [ConfigLayer(name=ConfigLayerName.USER, document=document, source="document")],
        context_limit=context_limit,
    )
    problems = [
        ConfigProblem(
            severity=p.severity,
            key_path=p.key_path,
            message=p.message,
            layer=None if p.layer is ConfigLayerName.USER else p.layer,
        )
        for p in effective.problems
        if not (p.layer is ConfigLayerName.SYSTEM and p.severity is Severity.INFO)
    ]
    return effective.settings, problems

"""Warnings about combinations of settings that Mycel accepts but that behave surprisingly (§3.2–§3.5, §5)."""

from __future__ import annotations

from collections.abc import Mapping

from memory_core.config.model import ConfigLayerName, ConfigProblem, EffectiveValue, Severity
from memory_core.config.schema import DEFAULT_SPILL_THRESHOLDS, STALE_TOOL_NAMES
from memory_core.memory_settings import MemorySettings

# Below this trigger (≈ 32,000 characters of history after pruning) a working thread crosses 70 % within a
# few turns; from then on Mycel re-compacts on every model call because it estimates the full history.
EVERY_CALL_TRIGGER_TOKENS = 16_000

_PRECEDENCE = {name: rank for rank, name in enumerate(ConfigLayerName)}


def _chosen(*layers: ConfigLayerName) -> ConfigLayerName:
    return max(layers, key=_PRECEDENCE.__getitem__)


def _severity(layer: ConfigLayerName) -> Severity:
    return Severity.INFO if layer is ConfigLayerName.SYSTEM else Severity.WARNING


def combination_problems(
    values: Mapping[str, EffectiveValue], *, settings: MemorySettings, context_limit_given: bool
) -> list[ConfigProblem]:
    """Cross-field findings on the effective values; each names the layer that set the deciding value."""
    problems: list[ConfigProblem] = []
    pruning, compaction = values["memory.pruning.enabled"], values["memory.compaction.enabled"]
    if pruning.value is False and compaction.value is False:
        problems.append(
            ConfigProblem(
                severity=Severity.ERROR,
                key_path="memory",
                message="pruning.enabled and compaction.enabled are both false: Mycel leaves out its memory "
                "middleware, and LeonAgent.__init__ then calls set_model on the missing middleware, so the "
                "agent cannot be built (AttributeError).",
                layer=_chosen(pruning.layer, compaction.layer),
            )
        )
    soft, hard = values["memory.pruning.soft_trim_chars"], values["memory.pruning.hard_clear_threshold"]
    if settings.soft_trim_chars >= settings.hard_clear_threshold:
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path="memory.pruning.soft_trim_chars",
                message=f"soft_trim_chars ({settings.soft_trim_chars}) is not below hard_clear_threshold "
                f"({settings.hard_clear_threshold}): Mycel only prunes results longer than soft_trim_chars, and "
                "all of those are also over the hard threshold, so every pruned result is cleared and nothing "
                "is ever soft-trimmed.",
                layer=_chosen(soft.layer, hard.layer),
            )
        )
    keep, limit_value = values["memory.compaction.keep_recent_tokens"], values["runtime.context_limit"]
    if settings.effective_keep_recent_tokens < settings.keep_recent_tokens:
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path="memory.compaction.keep_recent_tokens",
                message=f"keep_recent_tokens {settings.keep_recent_tokens} is more than 0.4 x the context limit "
                f"({settings.context_limit}); Mycel lowers it to {settings.effective_keep_recent_tokens}.",
                layer=keep.layer,
            )
        )
    trigger = settings.trigger_tokens
    if trigger < EVERY_CALL_TRIGGER_TOKENS:
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path="runtime.context_limit",
                message=f"With a context limit of {settings.context_limit}, Mycel compacts once its estimate "
                f"passes {trigger} tokens (about {trigger * 2} characters). A typical thread gets there within "
                "a few turns. Under Mycel main's rules, which estimate the full history, it then compacts on "
                "every model call: one extra summarisation call and one new summaries row each time (Mycel "
                "dev's rules estimate the summarized view, so they compact once per crossing).",
                layer=limit_value.layer if not context_limit_given else None,
            )
        )
    if not context_limit_given and limit_value.value == 0:
        problems.append(
            ConfigProblem(
                severity=Severity.INFO,
                key_path="runtime.context_limit",
                message=f"0 means Mycel looks the limit up for each thread's model; {settings.context_limit} "
                "(Mycel's fallback) is used here until a model is chosen.",
                layer=limit_value.layer,
            )
        )
    problems.extend(_spill_problems(values))
    return problems


def _spill_problems(values: Mapping[str, EffectiveValue]) -> list[ConfigProblem]:
    problems: list[ConfigProblem] = []
    default = values["tools.spill_buffer.default_threshold"].value
    thresholds = values["tools.spill_buffer.thresholds"]
    dropped = sorted(set(DEFAULT_SPILL_THRESHOLDS) - set(thresholds.value) - set(STALE_TOOL_NAMES))
    if thresholds.layer is not ConfigLayerName.SYSTEM and dropped:
        problems.append(
            ConfigProblem(
                severity=Severity.WARNING,
                key_path=thresholds.key_path,
                message="This thresholds object replaces Mycel's default one instead of adding to it, so "
                f"{', '.join(dropped)} now spill above default_threshold ({default} bytes).",
                layer=thresholds.layer,
            )
        )
    for tool in values["tools.spill_buffer.thresholds"].value:
        if tool not in STALE_TOOL_NAMES:
            continue
        entry = values[f"tools.spill_buffer.thresholds.{tool}"]
        problems.append(
            ConfigProblem(
                severity=_severity(entry.layer),
                key_path=entry.key_path,
                message=f"Mycel has no tool named {tool!r} (the real one is {STALE_TOOL_NAMES[tool]!r}), so this "
                f"threshold never applies; {STALE_TOOL_NAMES[tool]} output spills above default_threshold "
                f"({default} bytes).",
                layer=entry.layer,
            )
        )
    if values["tools.spill_buffer.enabled"].value is not False:
        problems.append(
            ConfigProblem(
                severity=Severity.INFO,
                key_path="tools.spill_buffer",
                message="Mycel's spill buffer means to skip read_file, but the real tool is Read, so large Read "
                f"outputs are spilled too (above {values['tools.spill_buffer.thresholds'].value.get('Read', default)} "
                "bytes).",
                layer=ConfigLayerName.SYSTEM,
            )
        )
    return problems

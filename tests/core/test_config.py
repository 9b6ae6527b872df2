"""memory_core.config: Mycel's defaults, validation, layered merge with provenance, edits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from memory_core.config import (
    REDACTED,
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    Severity,
    SpillBufferSettings,
    apply_change,
    document_changes,
    merge_layers,
    settings_from_document,
    shown_changes,
    system_layer,
    validate_value,
)
from memory_core.memory_settings import MemorySettings


def test_empty_document_gives_mycels_defaults() -> None:
    settings, problems = settings_from_document({})
    assert settings == MemorySettings()
    assert problems == []


def test_nested_memory_keys_are_read() -> None:
    document = {
        "runtime": {"context_limit": 10_000},
        "memory": {"pruning": {"soft_trim_chars": 500}, "compaction": {"keep_recent_tokens": 3000}},
    }
    settings, _ = settings_from_document(document)
    assert settings.soft_trim_chars == 500
    assert settings.keep_recent_tokens == 3000
    assert settings.context_limit == 10_000


def test_explicit_context_limit_wins_over_document() -> None:
    settings, _ = settings_from_document({"runtime": {"context_limit": 10_000}}, context_limit=5500)
    assert settings.context_limit == 5500


def test_invalid_value_is_an_error_and_default_is_kept() -> None:
    settings, problems = settings_from_document({"memory": {"pruning": {"protect_recent": 0}}})
    assert settings.protect_recent == 3
    assert [(p.severity, p.key_path) for p in problems] == [(Severity.ERROR, "memory.pruning.protect_recent")]


def _layers(user: dict[str, Any] | None = None, project: dict[str, Any] | None = None) -> list[ConfigLayer]:
    layers = [system_layer()]
    if user is not None:
        layers.append(ConfigLayer(name=ConfigLayerName.USER, document=user))
    if project is not None:
        layers.append(ConfigLayer(name=ConfigLayerName.PROJECT, document=project))
    return layers


def _problems_at(effective_problems: Sequence[ConfigProblem], key_path: str) -> list[ConfigProblem]:
    return [p for p in effective_problems if p.key_path == key_path]


def test_defaults_match_mycels_schema() -> None:
    effective = merge_layers([])
    assert effective.settings == MemorySettings()
    assert effective.spill == SpillBufferSettings()
    assert effective.value("runtime.context_limit") == 0
    assert effective.value("memory.compaction.min_messages") == 20
    assert {v.layer for v in effective.values.values()} == {ConfigLayerName.SYSTEM}
    assert effective.errors == () and effective.warnings == ()


def test_provenance_across_three_layers() -> None:
    effective = merge_layers(
        _layers(
            user={"memory": {"pruning": {"soft_trim_chars": 2000, "protect_recent": 5}}},
            project={
                "memory": {"pruning": {"protect_recent": 1}, "compaction": {"keep_recent_tokens": 8000}}
            },
        )
    )
    assert (
        effective.value("memory.pruning.soft_trim_chars"),
        effective.layer_of("memory.pruning.soft_trim_chars"),
    ) == (
        2000,
        ConfigLayerName.USER,
    )
    assert effective.values["memory.pruning.protect_recent"].layer is ConfigLayerName.PROJECT
    assert effective.settings.protect_recent == 1
    assert effective.layer_of("memory.compaction.keep_recent_tokens") is ConfigLayerName.PROJECT
    assert effective.layer_of("memory.pruning.hard_clear_threshold") is ConfigLayerName.SYSTEM


def test_layer_order_is_by_precedence_not_by_list_position() -> None:
    project = ConfigLayer(
        name=ConfigLayerName.PROJECT, document={"memory": {"pruning": {"protect_recent": 7}}}
    )
    user = ConfigLayer(name=ConfigLayerName.USER, document={"memory": {"pruning": {"protect_recent": 2}}})
    assert merge_layers([project, user]).settings.protect_recent == 7


def test_null_in_higher_layer_does_not_reset_lower_value() -> None:
    effective = merge_layers(
        _layers(user={"runtime": {"max_tokens": 999}}, project={"runtime": {"max_tokens": None}})
    )
    assert effective.value("runtime.max_tokens") == 999
    assert effective.layer_of("runtime.max_tokens") is ConfigLayerName.USER
    assert any(
        p.layer is ConfigLayerName.PROJECT for p in _problems_at(effective.warnings, "runtime.max_tokens")
    )


def test_reference_example_top_level_key_is_ignored_with_a_warning() -> None:
    effective = merge_layers(
        _layers(user={"context_limit": 50_000}, project={"runtime": {"max_tokens": 999}})
    )
    assert effective.value("runtime.context_limit") == 0
    assert effective.layer_of("runtime.context_limit") is ConfigLayerName.SYSTEM
    assert effective.value("runtime.max_tokens") == 999
    (warning,) = _problems_at(effective.warnings, "context_limit")
    assert warning.layer is ConfigLayerName.USER
    assert warning.message == (
        "Top-level 'context_limit' is silently ignored: Mycel folds old-style keys into runtime only when unset, "
        "and its own defaults file already sets 'context_limit' at top level. "
        'Write it nested instead: {"runtime": {"context_limit": ...}}.'
    )


def test_nested_runtime_context_limit_is_used() -> None:
    effective = merge_layers(_layers(user={"runtime": {"context_limit": 50_000}}))
    assert effective.settings.context_limit == 50_000
    assert effective.layer_of("runtime.context_limit") is ConfigLayerName.USER


@pytest.mark.parametrize(
    ("key_path", "message"),
    [
        (
            "memory.compaction.min_messages",
            "Mycel never reads min_messages: compaction does not wait for a message count.",
        ),
        (
            "memory.compaction.reserve_tokens",
            "Mycel stores reserve_tokens on its compactor but never uses it in any calculation.",
        ),
        (
            "memory.pruning.trim_tool_results",
            "Mycel never reads trim_tool_results; pruning happens regardless of it.",
        ),
    ],
)
def test_keys_mycel_never_reads_warn_when_a_user_sets_them(key_path: str, message: str) -> None:
    section, group, key = key_path.split(".")
    value: Any = False if key == "trim_tool_results" else 5
    effective = merge_layers(_layers(user={section: {group: {key: value}}}))
    (warning,) = _problems_at(effective.warnings, key_path)
    assert warning.message == message
    assert warning.layer is ConfigLayerName.USER
    assert _problems_at(merge_layers([]).warnings, key_path) == []  # Mycel's own default: only a note


def test_one_enabled_flag_false_warns_it_disables_nothing() -> None:
    effective = merge_layers(_layers(user={"memory": {"compaction": {"enabled": False}}}))
    (warning,) = _problems_at(effective.warnings, "memory.compaction.enabled")
    assert "disables nothing" in warning.message
    assert effective.errors == ()


def test_both_enabled_flags_false_is_an_error_because_mycel_crashes() -> None:
    document = {"memory": {"pruning": {"enabled": False}, "compaction": {"enabled": False}}}
    (error,) = merge_layers(_layers(project=document)).errors
    assert error.message == (
        "pruning.enabled and compaction.enabled are both false: Mycel leaves out its memory middleware, and "
        "LeonAgent.__init__ then calls set_model on the missing middleware, so the agent cannot be built "
        "(AttributeError)."
    )
    assert error.layer is ConfigLayerName.PROJECT


def test_soft_trim_not_below_hard_clear_warns() -> None:
    document = {"memory": {"pruning": {"soft_trim_chars": 12_000}}}
    (warning,) = _problems_at(merge_layers(_layers(user=document)).warnings, "memory.pruning.soft_trim_chars")
    assert "nothing is ever soft-trimmed" in warning.message


def test_keep_recent_is_capped_to_four_tenths_of_context_limit() -> None:
    effective = merge_layers(_layers(user={"runtime": {"context_limit": 10_000}}))
    assert effective.settings.effective_keep_recent_tokens == 4000
    (warning,) = _problems_at(effective.warnings, "memory.compaction.keep_recent_tokens")
    assert warning.message == (
        "keep_recent_tokens 20000 is more than 0.4 x the context limit (10000); Mycel lowers it to 4000."
    )


def test_tiny_context_limit_warns_compaction_fires_every_call() -> None:
    settings, problems = settings_from_document({}, context_limit=5500)
    assert settings.trigger_tokens == 3849  # int(5500 * 0.7): the float product is 3849.999…
    assert any("every model call" in p.message for p in problems if p.key_path == "runtime.context_limit")
    _, roomy = settings_from_document({}, context_limit=200_000)
    assert not any("every model call" in p.message for p in roomy)


def test_user_thresholds_replace_the_default_dict() -> None:
    document = {"tools": {"spill_buffer": {"thresholds": {"Bash": 10_000}}}}
    effective = merge_layers(_layers(user=document))
    assert effective.spill.thresholds == {"Bash": 10_000}
    assert effective.spill.threshold_for("Grep") == 50_000
    assert any("replaces" in p.message for p in effective.warnings)


def test_stale_tool_names_in_thresholds_are_flagged() -> None:
    document = {
        "tools": {"spill_buffer": {"thresholds": {"run_command": 1000, "Grep": 20_000, "Glob": 20_000}}}
    }
    (warning,) = _problems_at(
        merge_layers(_layers(user=document)).warnings, "tools.spill_buffer.thresholds.run_command"
    )
    assert warning.message == (
        "Mycel has no tool named 'run_command' (the real one is 'Bash'), so this threshold never applies; "
        "Bash output spills above default_threshold (50000 bytes)."
    )


def test_validation_errors_use_mycels_rules() -> None:
    assert validate_value("memory.pruning.soft_trim_chars", 0) is not None
    assert validate_value("memory.pruning.soft_trim_chars", 1) is None
    assert validate_value("runtime.context_limit", 0) is None
    assert validate_value("runtime.temperature", 2.5).severity is Severity.ERROR  # type: ignore[union-attr]
    assert validate_value("memory.pruning.protect_recent", 2.5).severity is Severity.ERROR  # type: ignore[union-attr]
    assert validate_value("memory.pruning.protect_recent", "x").severity is Severity.ERROR  # type: ignore[union-attr]
    assert validate_value("memory.compaction.min_messages", 10).severity is Severity.WARNING  # type: ignore[union-attr]
    assert validate_value("memory.spill_buffer", {}).severity is Severity.WARNING  # type: ignore[union-attr]


def test_invalid_layer_value_is_reported_with_its_layer() -> None:
    effective = merge_layers(_layers(project={"memory": {"compaction": {"keep_recent_tokens": -1}}}))
    (error,) = effective.errors
    assert (error.key_path, error.layer) == ("memory.compaction.keep_recent_tokens", ConfigLayerName.PROJECT)
    assert effective.settings.keep_recent_tokens == 20_000


def test_unknown_keys_warn() -> None:
    effective = merge_layers(_layers(user={"memory": {"pruning": {"soft_trim": 5}}, "memroy": {}}))
    paths = {p.key_path for p in effective.warnings}
    assert {"memory.pruning.soft_trim", "memroy"} <= paths


def test_apply_change_writes_nested_form_and_keeps_other_keys() -> None:
    document = {"context_limit": 50_000, "mcp": {"servers": {}}, "memory": {"pruning": {"protect_recent": 2}}}
    changed = apply_change(document, "memory.pruning.soft_trim_chars", 1500)
    changed = apply_change(changed, "context_limit", 9000)
    assert changed == {
        "context_limit": 50_000,
        "mcp": {"servers": {}},
        "memory": {"pruning": {"protect_recent": 2, "soft_trim_chars": 1500}},
        "runtime": {"context_limit": 9000},
    }
    assert document["memory"] == {"pruning": {"protect_recent": 2}}  # the input is not modified
    assert merge_layers(_layers(user=changed)).settings.context_limit == 9000


def test_apply_change_none_removes_key_and_empty_parents() -> None:
    changed = apply_change(
        {"memory": {"pruning": {"protect_recent": 2}}, "x": 1}, "memory.pruning.protect_recent", None
    )
    assert changed == {"x": 1}


def test_apply_change_refuses_values_mycel_would_reject() -> None:
    with pytest.raises(ValueError, match="greater than 0"):
        apply_change({}, "memory.pruning.protect_recent", 0)
    with pytest.raises(ValueError, match="not a memory"):
        apply_change({}, "memory.pruning.bogus", 1)


def test_document_changes_lists_leaf_differences() -> None:
    before = {"memory": {"pruning": {"protect_recent": 2}}}
    after = apply_change(before, "memory.pruning.soft_trim_chars", 1000)
    (change,) = document_changes(before, after)
    assert (change.key_path, change.before, change.after, change.added) == (
        "memory.pruning.soft_trim_chars",
        None,
        1000,
        True,
    )


def test_shown_changes_list_a_changed_secret_without_showing_it() -> None:
    path = "tools.web.tools.web_search.tavily_api_key"
    before = {"tools": {"web": {"tools": {"web_search": {"tavily_api_key": "tvly-old-1234"}}}}}
    after = apply_change(
        {"tools": {"web": {"tools": {"web_search": {"tavily_api_key": "tvly-new-5678"}}}}},
        "memory.pruning.soft_trim_chars",
        1000,
    )
    value, secret = shown_changes(before, after)  # in key order
    assert (secret.key_path, secret.before, secret.after) == (path, REDACTED, REDACTED)
    assert "tvly" not in repr(shown_changes(before, after))
    assert (value.key_path, value.before, value.after, value.added) == (
        "memory.pruning.soft_trim_chars",
        None,
        1000,
        True,
    )
    (removed,) = shown_changes(before, {})
    assert (removed.before, removed.after, removed.removed) == (REDACTED, None, True)


def test_display_document_hides_secrets_but_not_token_settings() -> None:
    document = {
        "runtime": {"max_tokens": 999},
        "tools": {"web": {"tools": {"web_search": {"tavily_api_key": "tvly-123"}}}},
    }
    shown = merge_layers(_layers(user=document)).display_document
    assert shown["runtime"]["max_tokens"] == 999
    assert shown["tools"]["web"]["tools"]["web_search"]["tavily_api_key"] == REDACTED


def test_changes_from_an_empty_file_list_only_real_keys():
    from memory_core.config import document_changes

    changes = document_changes({}, {"memory": {"pruning": {"soft_trim_chars": 2500}}})
    assert [(c.key_path, c.after, c.added) for c in changes] == [
        ("memory.pruning.soft_trim_chars", 2500, True)
    ]
    assert document_changes({}, {}) == ()

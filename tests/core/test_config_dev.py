"""Mycel dev's memory config: its layers with provenance, its strict checks, the keys only main reads."""

from __future__ import annotations

import pytest

from memory_core.config import ConfigLayerName, Severity
from memory_core.config.dev_layers import IgnoredFile, compact_json_with, merge_dev_layers
from memory_core.config.dev_schema import COMPACT_JSON_KEYS, dev_defaults_document

DEFAULTS = {
    "memory.pruning.enabled": True,
    "memory.pruning.soft_trim_chars": 3000,
    "memory.pruning.hard_clear_threshold": 10000,
    "memory.pruning.protect_recent": 3,
    "memory.pruning.trim_tool_results": True,
    "memory.compaction.enabled": True,
    "memory.compaction.reserve_tokens": 16384,
    "memory.compaction.keep_recent_tokens": 20000,
    "memory.compaction.min_messages": 20,
    "memory.compaction.trigger_tokens": None,
}


def _errors(effective) -> dict[str, str]:
    return {p.key_path: p.message for p in effective.problems if p.severity is Severity.ERROR}


def test_no_agent_config_gives_devs_repo_defaults_from_the_system_layer():
    effective = merge_dev_layers()
    assert {k: v.value for k, v in effective.values.items()} == DEFAULTS
    assert {v.layer for v in effective.values.values()} == {ConfigLayerName.SYSTEM}
    assert effective.problems == ()
    assert effective.settings.fixed_trigger_tokens is None


def test_compact_json_is_merged_into_compaction_and_overrides_win_over_it():
    effective = merge_dev_layers(
        compact_json={"trigger_tokens": 5000, "keep_recent_tokens": 1234},
        agent_id="m_abcdefghijkl",
        overrides={"memory": {"compaction": {"keep_recent_tokens": 999}, "pruning": {"protect_recent": 5}}},
    )
    assert effective.value("memory.compaction.trigger_tokens") == 5000
    assert effective.layer_of("memory.compaction.trigger_tokens") is ConfigLayerName.AGENT
    assert effective.value("memory.compaction.keep_recent_tokens") == 999
    assert effective.layer_of("memory.compaction.keep_recent_tokens") is ConfigLayerName.OVERRIDE
    assert effective.layer_of("memory.pruning.protect_recent") is ConfigLayerName.OVERRIDE
    assert effective.layer_of("memory.compaction.min_messages") is ConfigLayerName.SYSTEM
    assert effective.settings.fixed_trigger_tokens == 5000
    assert effective.settings.keep_recent_tokens == 999
    assert effective.settings.protect_recent == 5
    assert (
        effective.sources[ConfigLayerName.AGENT]
        == "agent.agent_configs.compact_json for agent m_abcdefghijkl"
    )
    assert effective.problems == ()


def test_a_runtime_json_on_disk_is_not_merged_and_is_said_to_be_ignored():
    ignored = IgnoredFile(
        path="/home/u/.leon/runtime.json",
        document={"memory": {"compaction": {"keep_recent_tokens": 1234}}, "tools": {"spill_buffer": {}}},
    )
    effective = merge_dev_layers(ignored_files=[ignored])
    assert effective.value("memory.compaction.keep_recent_tokens") == 20000
    warnings = [p for p in effective.problems if p.severity is Severity.WARNING]
    assert any(
        "Mycel dev does not read this file" in p.message and ignored.path in p.message for p in warnings
    )
    assert {p.key_path for p in warnings} >= {"memory.compaction", "tools.spill_buffer"}
    assert not effective.errors


@pytest.mark.parametrize(
    ("compact_json", "key", "words"),
    [
        ({"foo": 1}, "memory.compaction.foo", "Extra inputs are not permitted"),
        ({"enabled": "yes"}, "memory.compaction.enabled", "not a boolean"),
        ({"enabled": 1}, "memory.compaction.enabled", "not a boolean"),
        ({"trigger_tokens": 0}, "memory.compaction.trigger_tokens", "greater than 0 or null"),
        ({"trigger_tokens": -5}, "memory.compaction.trigger_tokens", "greater than 0"),
        ({"trigger_tokens": "many"}, "memory.compaction.trigger_tokens", "not an integer"),
        ({"min_messages": 0}, "memory.compaction.min_messages", "greater than 0"),
        ({"keep_recent_tokens": 20.5}, "memory.compaction.keep_recent_tokens", "not an integer"),
        ({"reserve_tokens": None}, "memory.compaction.reserve_tokens", "null is not allowed"),
        ({"threshold": 0.5}, "memory.compaction.threshold", "main ignores it too"),
        ({"compaction_threshold": 0.5}, "memory.compaction.compaction_threshold", "set trigger_tokens"),
        ({"context_limit": 8000}, "memory.compaction.context_limit", "runtime.context_limit"),
    ],
)
def test_compact_json_dev_refuses(compact_json, key, words):
    effective = merge_dev_layers(compact_json=compact_json, agent_id="m_abcdefghijkl")
    errors = _errors(effective)
    assert key in errors, errors
    assert words in errors[key]
    assert key in errors[key]  # the message names the key
    assert "the agent does not start" in errors[key]
    assert errors == {key: errors[key]}  # only that one
    if key in effective.values:  # a refused value is not used: the default stands
        assert effective.value(key) == DEFAULTS[key]


@pytest.mark.parametrize(
    ("overrides", "key", "words"),
    [
        ({"context_limit": 8000}, "context_limit", "only Mycel main reads it"),
        ({"memory": {"pruning": {"protect_recent": 0}}}, "memory.pruning.protect_recent", "greater than 0"),
        ({"memory": {"pruning": {"enabled": "yes"}}}, "memory.pruning.enabled", "not a boolean"),
        ({"memory": {"spill_buffer": {"enabled": True}}}, "memory.spill_buffer", "tools.spill_buffer"),
        ({"memory": {"pruning": {"bogus": 1}}}, "memory.pruning.bogus", "Extra inputs are not permitted"),
        ({"bogus": 1}, "bogus", "Extra inputs are not permitted"),
    ],
)
def test_overrides_dev_refuses(overrides, key, words):
    errors = _errors(merge_dev_layers(overrides=overrides))
    assert key in errors, errors
    assert words in errors[key]


def test_a_compact_json_that_is_not_an_object_is_refused_and_nothing_of_it_merged():
    effective = merge_dev_layers(compact_json=[1, 2], agent_id="m_abcdefghijkl")
    assert "must be a JSON object" in _errors(effective)["memory.compaction"]
    assert {v.layer for v in effective.values.values()} == {ConfigLayerName.SYSTEM}


@pytest.mark.parametrize(
    ("compact_json", "key", "value"),
    [
        ({"trigger_tokens": 1}, "memory.compaction.trigger_tokens", 1),
        ({"trigger_tokens": None}, "memory.compaction.trigger_tokens", None),
        ({"enabled": False}, "memory.compaction.enabled", False),
        ({"min_messages": 1}, "memory.compaction.min_messages", 1),
        ({"keep_recent_tokens": 3000}, "memory.compaction.keep_recent_tokens", 3000),
    ],
)
def test_compact_json_dev_accepts(compact_json, key, value):
    effective = merge_dev_layers(compact_json=compact_json, agent_id="m_abcdefghijkl")
    assert effective.problems == ()
    assert effective.value(key) == value
    assert effective.layer_of(key) is ConfigLayerName.AGENT


def test_lax_integers_are_accepted_as_pydantic_reads_them_with_a_warning():
    effective = merge_dev_layers(compact_json={"min_messages": "30", "reserve_tokens": 4096.0})
    assert effective.value("memory.compaction.min_messages") == 30
    assert effective.value("memory.compaction.reserve_tokens") == 4096
    assert not effective.errors
    assert {p.key_path for p in effective.warnings} == {
        "memory.compaction.min_messages",
        "memory.compaction.reserve_tokens",
    }


def test_overrides_drop_nulls_like_devs_loader():
    effective = merge_dev_layers(
        compact_json={"keep_recent_tokens": 5000},
        overrides={"memory": {"compaction": {"keep_recent_tokens": None}}},
    )
    assert effective.value("memory.compaction.keep_recent_tokens") == 5000
    assert effective.layer_of("memory.compaction.keep_recent_tokens") is ConfigLayerName.AGENT


def test_compact_json_with_changes_keeps_other_keys_and_null_removes():
    current = {"trigger_tokens": 5000, "min_messages": 30}
    assert compact_json_with(
        current, {"memory.compaction.trigger_tokens": None, "keep_recent_tokens": 100}
    ) == {
        "min_messages": 30,
        "keep_recent_tokens": 100,
    }
    assert current == {"trigger_tokens": 5000, "min_messages": 30}


def test_compact_json_keys_are_devs_compaction_fields():
    assert set(COMPACT_JSON_KEYS) == set(dev_defaults_document()["memory"]["compaction"])
    assert "trigger_tokens" in COMPACT_JSON_KEYS


def test_main_config_is_unchanged_by_the_agent_layer_name():
    from memory_core.config import merge_layers

    effective = merge_layers([])
    assert ConfigLayerName.AGENT not in {v.layer for v in effective.values.values()}
    assert effective.value("memory.compaction.keep_recent_tokens") == 20000


def test_cli_points_a_main_layout_thread_back_to_the_runtime_json_view(sample_home, capsys):
    from memory_core.cli import main
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader

    thread = MycelReader(resolve_locations()).list_threads().value[0]
    assert thread.layout == "main"
    assert main(["config", "--thread", thread.thread_id]) == 2
    assert "is in Mycel main's layout" in capsys.readouterr().err


def test_cli_shows_an_agents_defaults_when_no_postgres_is_configured(capsys):
    import json

    from memory_core.cli import main

    assert main(["config", "--agent", "m_abcdefghijkl", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["values"]["memory.compaction.trigger_tokens"] == {"value": None, "layer": "system"}
    assert shown["notes"] == [
        "LEON_POSTGRES_URL is not set: Mycel dev keeps agent configs in PostgreSQL; defaults shown."
    ]
    assert shown["writable"] is False

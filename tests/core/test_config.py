"""memory_core.config: Mycel's defaults, validation, layered merge with provenance, edits."""

from __future__ import annotations

from memory_core.config import Severity, settings_from_document
from memory_core.settings import MemorySettings


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

"""memory_core.context_limits: the limit Mycel's memory middleware would get for a model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory_core.context_limits import (
    ContextLimitSource,
    normalize_model_name,
    resolve_context_limit,
)
from tests.support.sample_data import SAMPLE_HOME


def _sample(name: str) -> Any:
    return json.loads((SAMPLE_HOME / name).read_text(encoding="utf-8"))


def test_sample_snug_model_uses_its_mapping_limit() -> None:
    limit = resolve_context_limit(
        "leon:snug",
        runtime_context_limit=0,
        models_document=_sample("models.json"),
        pricing_document=_sample("pricing_cache.json"),
    )
    assert limit.value == 5500
    assert limit.source is ContextLimitSource.MODELS_MAPPING
    assert limit.resolved_model == "claude-sonnet-4-5-20250929"
    assert limit.explanation == (
        "leon:snug maps to claude-sonnet-4-5-20250929. "
        "models.json mapping['leon:snug'].context_limit sets 5,500 tokens."
    )


def test_mapping_limit_wins_over_runtime_context_limit() -> None:
    limit = resolve_context_limit(
        "leon:snug", runtime_context_limit=9000, models_document=_sample("models.json"), pricing_document=None
    )
    assert limit.value == 5500


@pytest.mark.parametrize("pricing", ["sample", None])
def test_leon_large_resolves_to_opus_with_a_million_tokens(pricing: str | None) -> None:
    document = _sample("pricing_cache.json") if pricing else None
    limit = resolve_context_limit(
        "leon:large", runtime_context_limit=0, models_document={}, pricing_document=document
    )
    assert (limit.value, limit.resolved_model, limit.lookup_name) == (
        1_000_000,
        "claude-opus-4-6",
        "claude-opus-4.6",
    )
    expected = ContextLimitSource.PRICING_CACHE if pricing else ContextLimitSource.BUNDLED_SNAPSHOT
    assert limit.source is expected


def test_no_model_means_mycels_web_default_leon_large() -> None:
    limit = resolve_context_limit(None, runtime_context_limit=0, models_document=None, pricing_document=None)
    assert limit.value == 1_000_000
    assert limit.explanation == (
        "No model given, so Mycel's web default leon:large is assumed. leon:large maps to claude-opus-4-6. "
        "runtime.context_limit is 0, so Mycel looks up 'claude-opus-4-6' as 'claude-opus-4.6' in the "
        "dashboard's bundled snapshot (no usable pricing cache): 1,000,000 tokens."
    )


def test_unknown_model_falls_back_to_128000() -> None:
    limit = resolve_context_limit(
        "mystery-model-9",
        runtime_context_limit=0,
        models_document=None,
        pricing_document=_sample("pricing_cache.json"),
    )
    assert limit.value == 128_000
    assert limit.source is ContextLimitSource.DEFAULT


def test_positive_runtime_context_limit_beats_lookup() -> None:
    limit = resolve_context_limit(
        "gpt-4o", runtime_context_limit=50_000, models_document=None, pricing_document=None
    )
    assert (limit.value, limit.source) == (50_000, ContextLimitSource.RUNTIME_CONFIG)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4.5"),
        ("claude-haiku-4-5-20251001", "claude-haiku-4.5"),
        ("claude-opus-4-6", "claude-opus-4.6"),
        ("gpt-4o-2024-08-06", "gpt-4o-2024-08.06"),  # Mycel's rule, literally: no date suffix, so -X-Y → -X.Y
        ("gpt-4o", "gpt-4o"),
    ],
)
def test_normalisation_strips_date_suffix_and_dots_trailing_version(name: str, expected: str) -> None:
    assert normalize_model_name(name) == expected


def test_date_suffixed_name_found_through_normalisation() -> None:
    pricing = {"models": {"x": {}}, "context_limits": {"claude-haiku-4.5": 200_000}}
    limit = resolve_context_limit(
        "claude-haiku-4-5-20250929", runtime_context_limit=0, models_document=None, pricing_document=pricing
    )
    assert (limit.value, limit.lookup_name) == (200_000, "claude-haiku-4.5")


def test_cache_without_pricing_is_ignored_like_mycel_does() -> None:
    pricing = {"models": {}, "context_limits": {"gpt-4o": 7}}
    limit = resolve_context_limit(
        "gpt-4o", runtime_context_limit=0, models_document=None, pricing_document=pricing
    )
    assert (limit.value, limit.source) == (128_000, ContextLimitSource.BUNDLED_SNAPSHOT)


def test_custom_config_and_active_limits_for_concrete_names() -> None:
    models = {
        "pool": {"custom_config": {"my-model": {"context_limit": 32_000}}},
        "active": {"context_limit": 64_000},
    }
    custom = resolve_context_limit(
        "my-model", runtime_context_limit=0, models_document=models, pricing_document=None
    )
    active = resolve_context_limit(
        "gpt-4o", runtime_context_limit=0, models_document=models, pricing_document=None
    )
    assert (custom.value, custom.source) == (32_000, ContextLimitSource.MODELS_CUSTOM_CONFIG)
    assert (active.value, active.source) == (64_000, ContextLimitSource.MODELS_ACTIVE)


def test_openrouter_list_format_is_understood() -> None:
    pricing = {"data": [{"id": "acme/rocket-1", "context_length": 42_000}]}
    limit = resolve_context_limit(
        "rocket-1", runtime_context_limit=0, models_document=None, pricing_document=pricing
    )
    assert limit.value == 42_000

"""The context limit Mycel's memory middleware would use for a model (reference §3.12).

Order, as Mycel's construction path does it: models.json override (mapping / pool.custom_config /
active) → runtime.context_limit > 0 → lookup by model name in the pricing cache (or our bundled
snapshot) → 128000.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Any

from memory_core.memory_settings import DEFAULT_CONTEXT_LIMIT

# Mycel's config/defaults/models.json mapping (our copy of the names; reference §4.2).
SYSTEM_MAPPING: Mapping[str, Mapping[str, Any]] = {
    "leon:mini": {"model": "claude-haiku-4-5-20250929", "provider": "anthropic"},
    "leon:medium": {"model": "claude-sonnet-4-5-20250929", "provider": "anthropic"},
    "leon:large": {"model": "claude-opus-4-6", "provider": "anthropic"},
    "leon:max": {"model": "claude-opus-4-6", "provider": "anthropic", "temperature": 0.0},
}
# What Mycel's web UI picks for a thread without a model (preferences.json default_model).
DEFAULT_WEB_MODEL = "leon:large"

_DATE_SUFFIX = re.compile(r"-\d{8}$")
_TRAILING_VERSION = re.compile(r"-(\d+)-(\d+)$")


class ContextLimitSource(StrEnum):
    MODELS_MAPPING = "models_mapping"  # models.json mapping["leon:*"].context_limit
    MODELS_CUSTOM_CONFIG = "models_custom_config"  # models.json pool.custom_config[model].context_limit
    MODELS_ACTIVE = "models_active"  # models.json active.context_limit
    RUNTIME_CONFIG = "runtime_config"  # runtime.json runtime.context_limit > 0
    PRICING_CACHE = "pricing_cache"  # ~/.leon/pricing_cache.json context_limits
    BUNDLED_SNAPSHOT = "bundled_snapshot"  # our small snapshot, standing in for Mycel's bundled models.json
    DEFAULT = "default"  # Mycel's fallback, 128000


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextLimit:
    """A context limit, where it came from, and a sentence saying so for the UI."""

    value: int
    source: ContextLimitSource
    explanation: str
    model: str | None  # the name asked about (None → Mycel's web default)
    resolved_model: str  # the concrete model after leon:* mapping
    lookup_name: str | None = None  # the catalogue key that matched, for lookups


def normalize_model_name(name: str) -> str:
    """Mycel's normalisation: drop a -YYYYMMDD suffix, then turn a trailing -X-Y into -X.Y."""
    return _TRAILING_VERSION.sub(r"-\1.\2", _DATE_SUFFIX.sub("", name))


@cache
def bundled_context_limits() -> Mapping[str, int]:
    """Our small snapshot of context windows (memory_core/data/context_limits.json)."""
    text = resources.files("memory_core").joinpath("data/context_limits.json").read_text(encoding="utf-8")
    return _limits_map(json.loads(text)) or {}


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value > 0 and float(value).is_integer() else None


def _limits_map(document: Any) -> dict[str, int] | None:
    """name → limit from a pricing cache ({"context_limits": {...}}) or an OpenRouter list ({"data": [...]})."""
    if not isinstance(document, Mapping):
        return None
    limits = document.get("context_limits")
    if isinstance(limits, Mapping):
        return {str(k): v for k, raw in limits.items() if (v := _positive_int(raw)) is not None}
    entries = document.get("data", document.get("models"))
    if isinstance(entries, list):
        result: dict[str, int] = {}
        for entry in entries:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("id"), str):
                continue
            short = entry["id"].split("/", 1)[-1]
            limit = _positive_int(entry.get("context_length"))
            if limit is not None and short not in result:
                result[short] = limit
        return result
    return None


def _pricing_cache_usable(document: Any) -> bool:
    # Mycel discards a cache whose pricing payload is empty, even if it carries context limits.
    if not isinstance(document, Mapping):
        return False
    models = document.get("models")
    return bool(models) or isinstance(document.get("data"), list)


def _mapping(models_document: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    merged = {name: dict(entry) for name, entry in SYSTEM_MAPPING.items()}
    user = (models_document or {}).get("mapping")
    if isinstance(user, Mapping):
        for name, entry in user.items():
            if isinstance(entry, Mapping):
                merged.setdefault(str(name), {}).update(entry)
    return merged


def _section(document: Mapping[str, Any] | None, *keys: str) -> Mapping[str, Any]:
    node: Any = document or {}
    for key in keys:
        node = node.get(key) if isinstance(node, Mapping) else None
    return node if isinstance(node, Mapping) else {}


def resolve_context_limit(
    model: str | None,
    *,
    runtime_context_limit: int,
    models_document: Mapping[str, Any] | None,
    pricing_document: Mapping[str, Any] | None,
) -> ContextLimit:
    """The context limit Mycel's memory middleware gets when an agent is built for this model."""
    asked = model or DEFAULT_WEB_MODEL
    mapping = _mapping(models_document)
    custom = _section(models_document, "pool", "custom_config")
    resolved = asked
    via = ""
    if asked.startswith("leon:"):
        entry = mapping.get(asked, {})
        if isinstance(entry.get("model"), str):
            resolved = entry["model"]
            via = f"{asked} maps to {resolved}. "
        limit = _positive_int(entry.get("context_limit"))
        if limit is not None:
            return _result(
                model,
                resolved,
                limit,
                ContextLimitSource.MODELS_MAPPING,
                f"{via}models.json mapping[{asked!r}].context_limit sets {limit:,} tokens.",
            )
        limit = _positive_int(_section(custom, resolved).get("context_limit"))
        if limit is not None:
            return _result(
                model,
                resolved,
                limit,
                ContextLimitSource.MODELS_CUSTOM_CONFIG,
                f"{via}models.json pool.custom_config[{resolved!r}].context_limit sets {limit:,} tokens.",
            )
    else:
        limit = _positive_int(_section(custom, asked).get("context_limit"))
        if limit is not None:
            return _result(
                model,
                resolved,
                limit,
                ContextLimitSource.MODELS_CUSTOM_CONFIG,
                f"models.json pool.custom_config[{asked!r}].context_limit sets {limit:,} tokens.",
            )
        limit = _positive_int(_section(models_document, "active").get("context_limit"))
        if limit is not None:
            return _result(
                model,
                resolved,
                limit,
                ContextLimitSource.MODELS_ACTIVE,
                f"models.json active.context_limit sets {limit:,} tokens for concrete model names.",
            )
    if model is None:
        via = f"No model given, so Mycel's web default {DEFAULT_WEB_MODEL} is assumed. " + via
    if runtime_context_limit > 0:
        return _result(
            model,
            resolved,
            runtime_context_limit,
            ContextLimitSource.RUNTIME_CONFIG,
            f"{via}runtime.json runtime.context_limit sets {runtime_context_limit:,} tokens "
            "(Mycel ignores it after a model switch).",
        )
    return _lookup(model, resolved, via, pricing_document)


def _lookup(
    model: str | None, resolved: str, via: str, pricing_document: Mapping[str, Any] | None
) -> ContextLimit:
    if _pricing_cache_usable(pricing_document):
        limits, source, label = (
            _limits_map(pricing_document) or {},
            ContextLimitSource.PRICING_CACHE,
            "pricing_cache.json",
        )
    else:
        limits = dict(bundled_context_limits())
        source, label = (
            ContextLimitSource.BUNDLED_SNAPSHOT,
            "the dashboard's bundled snapshot (no usable pricing cache)",
        )
    normalized = normalize_model_name(resolved)
    for name in dict.fromkeys((resolved, normalized)):
        if name in limits:
            how = "" if name == resolved else f" as {name!r}"
            return _result(
                model,
                resolved,
                limits[name],
                source,
                f"{via}runtime.context_limit is 0, so Mycel looks up {resolved!r}{how} in {label}: "
                f"{limits[name]:,} tokens.",
                lookup_name=name,
            )
    also = "" if normalized == resolved else f" (not even as {normalized!r})"
    return _result(
        model,
        resolved,
        DEFAULT_CONTEXT_LIMIT,
        ContextLimitSource.DEFAULT,
        f"{via}{resolved!r} is not in {label}{also}, so Mycel falls back to "
        f"{DEFAULT_CONTEXT_LIMIT:,} tokens.",
    )


def _result(
    model: str | None,
    resolved: str,
    value: int,
    source: ContextLimitSource,
    explanation: str,
    *,
    lookup_name: str | None = None,
) -> ContextLimit:
    return ContextLimit(
        value=value,
        source=source,
        explanation=explanation,
        model=model,
        resolved_model=resolved,
        lookup_name=lookup_name,
    )


def named_limits(
    *,
    runtime_context_limit: int,
    models_document: Mapping[str, Any] | None,
    pricing_document: Mapping[str, Any] | None,
) -> dict[str, int]:
    """The limit every model name models.json knows (its mapping, Mycel's leon:* names, its custom
    models) would get: the candidates an inferred limit is matched against."""
    names = dict.fromkeys([*_mapping(models_document), *_section(models_document, "pool", "custom_config")])
    return {
        str(name): resolve_context_limit(
            str(name),
            runtime_context_limit=runtime_context_limit,
            models_document=models_document,
            pricing_document=pricing_document,
        ).value
        for name in names
    }

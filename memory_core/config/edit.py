"""Edits to one layer's document in the nested form Mycel actually reads (reference §4.1)."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_core.config.model import ConfigLayerName, EffectiveConfig, Severity
from memory_core.config.redact import REDACTED, redact_secrets
from memory_core.config.schema import KEY_SPECS, LEGACY_TOP_LEVEL_KEYS, coerce_value

_ABSENT: Any = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class KeyChange:
    """One leaf that differs between two documents; `before`/`after` is None when the key is absent."""

    key_path: str
    before: Any
    after: Any
    added: bool = False
    removed: bool = False


def nested_key_path(key_path: str) -> str:
    """The key path Mycel reads: an old-style top-level runtime key becomes runtime.<key>."""
    return f"runtime.{key_path}" if key_path in LEGACY_TOP_LEVEL_KEYS else key_path


def _editable(key_path: str) -> bool:
    return key_path in KEY_SPECS or (
        key_path.startswith("tools.spill_buffer.thresholds.") and len(key_path.split(".")) == 4
    )


def apply_change(document: Mapping[str, Any], key_path: str, value: Any) -> dict[str, Any]:
    """A copy of the document with one key set in nested form, every other key kept as it was.

    value None removes the key from this layer (Mycel skips nulls, so the lower layer applies again).
    Raises ValueError for a key the editor does not manage or a value Mycel would refuse.
    """
    path = nested_key_path(key_path)
    if not _editable(path):
        raise ValueError(f"{key_path!r} is not a memory or spill-buffer setting Mycel reads")
    result = copy.deepcopy(dict(document))
    parts = path.split(".")
    if value is None:
        return remove_key(result, path)
    coerced, problems = coerce_value(path, value)
    errors = [p.message for p in problems if p.severity is Severity.ERROR]
    if errors:
        raise ValueError(f"{path}: {errors[0]}")
    node = result
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        elif not isinstance(child, dict):
            raise ValueError(f"{part!r} in {path!r} holds a {type(child).__name__}, not an object")
        node = child
    node[parts[-1]] = coerced
    return result


def remove_key(document: Mapping[str, Any], key_path: str) -> dict[str, Any]:
    """A copy without one nested key; objects left empty by the removal are dropped too."""
    result = copy.deepcopy(dict(document))
    parts = nested_key_path(key_path).split(".")
    trail: list[dict[str, Any]] = [result]
    for part in parts[:-1]:
        child = trail[-1].get(part)
        if not isinstance(child, dict):
            return result
        trail.append(child)
    trail[-1].pop(parts[-1], None)
    for depth in range(len(parts) - 1, 0, -1):
        if trail[depth]:
            break
        trail[depth - 1].pop(parts[depth - 1], None)
    return result


def _leaves(node: Any, prefix: str) -> dict[str, Any]:
    # An empty nested object is a value ({} for model_kwargs); an empty document has no leaves at all.
    if isinstance(node, Mapping) and (node or not prefix) and prefix not in KEY_SPECS:
        leaves: dict[str, Any] = {}
        for key, value in node.items():
            leaves.update(_leaves(value, f"{prefix}.{key}" if prefix else str(key)))
        return leaves
    return {prefix: node}


def document_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[KeyChange, ...]:
    """Leaf-by-leaf differences between two versions of a layer file (for the diff shown before saving)."""
    old, new = _leaves(before, ""), _leaves(after, "")
    changes = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path, _ABSENT), new.get(path, _ABSENT)
        if a == b and a is not _ABSENT:
            continue
        changes.append(
            KeyChange(
                key_path=path,
                before=None if a is _ABSENT else a,
                after=None if b is _ABSENT else b,
                added=a is _ABSENT,
                removed=b is _ABSENT,
            )
        )
    return tuple(changes)


def shown_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[KeyChange, ...]:
    """`document_changes` for a page: found on the real values, so a changed secret is still listed, and
    shown with secret-looking values masked (the documents are never displayed as they are)."""
    old, new = _leaves(redact_secrets(before), ""), _leaves(redact_secrets(after), "")
    return tuple(
        replace(
            change,
            before=None if change.added else old.get(change.key_path, REDACTED),
            after=None if change.removed else new.get(change.key_path, REDACTED),
        )
        for change in document_changes(before, after)
    )


def _value_words(value: Any) -> str:
    """A config value as the audit log says it: JSON's words, whole numbers with thousands separators."""
    if isinstance(value, bool) or not isinstance(value, int):
        return json.dumps(redact_secrets(value), ensure_ascii=False)
    return f"{value:,}"


def changes_words(changes: Sequence[KeyChange], effective: EffectiveConfig | None = None) -> str:
    """ "key: before → after; …" for the audit log (the pages' writes and the CLI's alike). A key the file
    did not set says what Mycel ran with, from `effective` when given: "default 3,000" for Mycel's own
    default, "(not set; user layer 2,000)" for another layer's value; never None."""

    def before(change: KeyChange) -> str:
        if not change.added:
            return _value_words(change.before)
        if effective is None:
            return "(absent)"
        if change.key_path not in effective.values:
            return "(not set)"
        source, current = effective.layer_of(change.key_path), _value_words(effective.value(change.key_path))
        if source is ConfigLayerName.SYSTEM:
            return f"default {current}"
        return f"(not set; {source.value} layer {current})"

    return "; ".join(
        f"{c.key_path}: {before(c)} → {'(removed)' if c.removed else _value_words(c.after)}" for c in changes
    )

"""Mycel's memory and spill-buffer config: defaults, validation, layered merge with provenance, edits."""

from memory_core.config.document import settings_from_document
from memory_core.config.edit import (
    KeyChange,
    apply_change,
    changes_words,
    document_changes,
    remove_key,
    shown_changes,
)
from memory_core.config.merge import merge_layers, system_layer
from memory_core.config.model import (
    ConfigLayer,
    ConfigLayerName,
    ConfigProblem,
    EffectiveConfig,
    EffectiveValue,
    Severity,
    SpillBufferSettings,
)
from memory_core.config.redact import REDACTED, contains_redaction, redact_secrets
from memory_core.config.schema import KEY_SPECS, KeySpec, system_defaults_document, validate_value

__all__ = [
    "KEY_SPECS",
    "REDACTED",
    "ConfigLayer",
    "ConfigLayerName",
    "ConfigProblem",
    "EffectiveConfig",
    "EffectiveValue",
    "KeyChange",
    "KeySpec",
    "Severity",
    "SpillBufferSettings",
    "apply_change",
    "changes_words",
    "contains_redaction",
    "document_changes",
    "merge_layers",
    "redact_secrets",
    "remove_key",
    "settings_from_document",
    "shown_changes",
    "system_layer",
    "system_defaults_document",
    "validate_value",
]

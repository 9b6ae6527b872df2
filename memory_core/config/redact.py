"""Secret-looking values hidden before anything is shown (models.json carries providers.*.api_key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_core.secrets import redact

REDACTED = "••••••"


def redact_secrets(value: Any) -> Any:
    """A copy with secret-looking keys' values (and API-key-shaped strings) replaced by a placeholder.

    An unset secret (None or "") stays visible, so the page can say it is unset.
    """
    return redact(value, placeholder=REDACTED, keep_unset=True, hide_secret_values=True)


def contains_redaction(value: Any) -> bool:
    """True when a document was built from a redacted display copy (saving it would destroy secrets)."""
    if isinstance(value, Mapping):
        return any(contains_redaction(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(contains_redaction(item) for item in value)
    return isinstance(value, str) and value == REDACTED

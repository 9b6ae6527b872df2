"""Secret-looking values hidden before anything is shown (models.json carries providers.*.api_key)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

REDACTED = "••••••"

# Whole-word matches only: "max_tokens" and "keep_recent_tokens" are settings, "auth_token" is a secret.
_SECRET_KEY = re.compile(
    r"(^|[_-])(api[_-]?key|apikey|secret|secret[_-]?key|password|passwd|passphrase|credentials?"
    r"|private[_-]?key|token|access[_-]?key|authorization|cookies?|bearer|session[_-]?key|signing[_-]?key)$",
    re.IGNORECASE,
)
_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_VALUE = re.compile(r"^(sk-|sk_|xox[abp]-|ghp_|gho_|AKIA)[A-Za-z0-9_\-]{4,}")


def is_secret_key(key: str) -> bool:
    """api_key, X-Api-Key, apiKey, accessToken, client_secret, Authorization, cookie… (camelCase humps split)."""
    return bool(_SECRET_KEY.search(_CAMEL_HUMP.sub("_", key)))


def redact_secrets(value: Any) -> Any:
    """A copy with secret-looking keys' values (and API-key-shaped strings) replaced by a placeholder."""
    if isinstance(value, Mapping):
        return {
            str(k): (REDACTED if is_secret_key(str(k)) and v not in (None, "") else redact_secrets(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_secrets(item) for item in value]
    if isinstance(value, str) and _SECRET_VALUE.match(value):
        return REDACTED
    return value


def contains_redaction(value: Any) -> bool:
    """True when a document was built from a redacted display copy (saving it would destroy secrets)."""
    if isinstance(value, Mapping):
        return any(contains_redaction(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(contains_redaction(item) for item in value)
    return isinstance(value, str) and value == REDACTED

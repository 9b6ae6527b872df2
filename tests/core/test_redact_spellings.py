"""Both redactors (stores' border and config display) know the key spellings credentials come under."""

from __future__ import annotations

import pytest

from memory_core.config.redact import REDACTED as CONFIG_REDACTED
from memory_core.config.redact import redact_secrets
from memory_core.stores.redact import REDACTED, encodable, redact

SPELLINGS = (
    "api_key", "apiKey", "API-KEY", "X-Api-Key", "openai_api_key", "access_token", "accessToken",
    "refresh_token", "Authorization", "password", "secret", "client_secret", "clientSecret",
    "private_key", "aws_secret_access_key", "cookie", "secret_key",
)  # fmt: skip
SETTINGS = ("max_tokens", "keep_recent_tokens", "soft_trim_chars", "context_limit", "protect_recent", "model")


@pytest.mark.parametrize("key", SPELLINGS)
def test_every_spelling_is_hidden_at_any_depth(key: str):
    data = {key: "v1", "nested": {key: "v2", "items": [{key: "v3"}]}}
    assert redact(data) == {key: REDACTED, "nested": {key: REDACTED, "items": [{key: REDACTED}]}}
    shown = redact_secrets(data)
    assert shown == {
        key: CONFIG_REDACTED,
        "nested": {key: CONFIG_REDACTED, "items": [{key: CONFIG_REDACTED}]},
    }


@pytest.mark.parametrize("key", SETTINGS)
def test_memory_settings_are_not_mistaken_for_secrets(key: str):
    assert redact({key: 5}) == {key: 5}
    assert redact_secrets({key: 5}) == {key: 5}


def test_lone_surrogates_become_replacement_characters():
    assert encodable("a\ud800b") == "a\ufffdb"
    assert redact({"k\udfff": ["x\ud800"]}) == {"k\ufffd": ["x\ufffd"]}
    assert encodable("plain ☃") == "plain ☃"

"""One key rule: the stores' border and the config display hide the same keys."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core.config.redact import REDACTED as CONFIG_REDACTED
from memory_core.config.redact import redact_secrets
from memory_core.secrets import REDACTED, is_secret_key, is_secret_value, redact, redact_text
from memory_core.stores.redact import redact as redact_at_border

WORDS = ("api", "key", "Api", "KEY", "token", "Tokens", "max", "secret", "client", "password", "auth",
         "cookies", "session", "signing", "recent", "keep", "soft", "trim", "chars", "bearer", "id")  # fmt: skip
SEPARATORS = ("", "_", "-", " ", ".")


@st.composite
def key_names(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    return draw(st.sampled_from(SEPARATORS)).join(words)


@given(key_names())
def test_border_and_config_display_hide_the_same_keys(key: str):
    hidden = is_secret_key(key)
    assert (redact_at_border({key: 1}) == {key: REDACTED}) is hidden
    assert (redact_secrets({key: 1}) == {key: CONFIG_REDACTED}) is hidden


def test_config_display_shows_an_unset_secret_as_unset():
    assert redact_secrets({"api_key": None, "token": ""}) == {"api_key": None, "token": ""}
    assert redact({"api_key": None}) == {"api_key": REDACTED}


def test_key_shaped_strings_are_hidden_only_when_asked():
    data = {"note": "sk-abcdef123456", "model": "gpt"}
    assert redact(data) == data
    assert redact(data, hide_secret_values=True, placeholder="x") == {"note": "x", "model": "gpt"}
    assert is_secret_value("ghp_abcdef") and not is_secret_value("skeleton")


def test_non_text_keys_are_never_secrets():
    assert not is_secret_key(7)
    assert redact({7: "v", ("a",): "w"}) == {7: "v", ("a",): "w"}


@st.composite
def text_key_names(draw: st.DrawFn) -> str:
    """Names as a text spells them in one word (`name=value` reads letters, digits, `_` and `-`)."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4))
    return draw(st.sampled_from(("", "_", "-"))).join(words)


@given(text_key_names(), st.sampled_from(("=", ": ", '": "', "=")))
def test_free_text_hides_the_value_of_every_name_the_key_rule_hides(name: str, sep: str):
    # The free-text scan's cheap pre-check must never skip a name is_secret_key accepts.
    text = f"before {name}{sep}value0123 after"
    hidden = "value0123" not in redact_text(text)
    assert hidden is is_secret_key(name), text
    assert len(redact_text(text, keep_length=True)) == len(text)

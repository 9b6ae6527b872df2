"""The Config screen's inputs: proposed values (checked with Mycel's own rules), the layer, the file hash."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms

from memory_core.config import ConfigLayerName, Severity
from memory_core.config.dev_schema import COMPACT_JSON_KEYS
from memory_core.config.schema import INVALID, KEY_SPECS, ValueKind, coerce_value
from mycel_dashboard.screens.config.editor import Proposal
from mycel_dashboard.web.forms import error_text

_SHA256 = r"^[0-9a-f]{64}$"


def _parse(key_path: str, raw: str) -> Any:
    """Text from the page as the JSON value it stands for: numbers as numbers, true/false as booleans."""
    text = raw.strip()
    spec = KEY_SPECS.get(key_path)
    if spec is not None and spec.kind is ValueKind.BOOL:
        return {"true": True, "false": False}.get(text.lower(), text)
    try:
        return int(text)
    except ValueError:
        return text


class ConfigForm(forms.Form):
    """Proposed values keyed by their dotted path; blank fields mean "leave as it is"."""

    thread = forms.CharField(required=False, max_length=20_000)
    layer = forms.ChoiceField(
        required=False,
        choices=[(ConfigLayerName.USER.value, "user"), (ConfigLayerName.PROJECT.value, "project")],
    )
    sha256 = forms.RegexField(required=False, regex=_SHA256)

    def __init__(self, data: Any, *, keys: Sequence[str]) -> None:
        super().__init__(data)
        self.keys = tuple(keys)
        for key in self.keys:
            self.fields[key] = forms.CharField(required=False, max_length=64, strip=True)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for key in self.keys:
            raw = cleaned.get(key)
            if not raw:
                cleaned[key] = None
                continue
            value, problems = coerce_value(key, _parse(key, raw))
            errors = [p.message for p in problems if p.severity is Severity.ERROR]
            if value is INVALID or errors:
                self.add_error(key, errors[0] if errors else f"{raw!r} is not a value Mycel accepts.")
                continue
            cleaned[key] = value
        return cleaned

    def proposal(self) -> Proposal:
        """The valid values and, per refused key, the rule it broke (Mycel's wording)."""
        self.is_valid()
        values = {k: self.cleaned_data[k] for k in self.keys if self.cleaned_data.get(k) is not None}
        errors = {k: error_text(self.errors[k]) for k in self.keys if k in self.errors}
        return Proposal(values=values, errors=errors)

    @property
    def chosen_thread(self) -> str | None:
        self.is_valid()
        return self.cleaned_data.get("thread") or None

    @property
    def chosen_layer(self) -> ConfigLayerName:
        self.is_valid()
        return ConfigLayerName(self.cleaned_data.get("layer") or ConfigLayerName.USER.value)

    @property
    def expected_sha256(self) -> str | None:
        """The hash the layer file had when the preview was made ("" or absent: it did not exist)."""
        self.is_valid()
        return self.cleaned_data.get("sha256") or None


class RestoreForm(forms.Form):
    layer = forms.ChoiceField(
        choices=[(ConfigLayerName.USER.value, "user"), (ConfigLayerName.PROJECT.value, "project")]
    )
    # A kept version's name; `.absent` marks "no file" (the save at that time created the file).
    version = forms.RegexField(regex=r"^runtime\.json\.bak-[0-9T]+(-\d+)?(\.absent)?$", max_length=80)
    sha256 = forms.RegexField(required=False, regex=_SHA256)
    thread = forms.CharField(required=False, max_length=20_000)


def _json_like(raw: str) -> Any:
    """Text from the page as the JSON value it stands for; dev's own checks then judge it."""
    text = raw.strip()
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text)
    except ValueError:
        return text


class DevConfigForm(forms.Form):
    """A Mycel dev agent's compact_json keys; blank means "not set" (dev's default; for trigger_tokens, null)."""

    agent = forms.RegexField(regex=r"^m_[A-Za-z0-9]{12}$", required=False)
    thread = forms.CharField(required=False, max_length=20_000)
    expected_sha256 = forms.RegexField(required=False, regex=_SHA256)  # of compact_json when rendered
    drop_unknown = forms.BooleanField(required=False)  # remove the stored keys dev refuses

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        for name in COMPACT_JSON_KEYS:
            self.fields[f"memory.compaction.{name}"] = forms.CharField(
                required=False, max_length=64, strip=True
            )

    def changes(self) -> dict[str, Any]:
        """Compaction key -> value as typed (None: remove it from compact_json)."""
        self.is_valid()
        return {
            name: _json_like(raw)
            if (raw := self.cleaned_data.get(f"memory.compaction.{name}") or "")
            else None
            for name in COMPACT_JSON_KEYS
        }

    @property
    def drops_unknown(self) -> bool:
        self.is_valid()
        return bool(self.cleaned_data.get("drop_unknown"))

    @property
    def expected(self) -> str | None:
        """compact_json_sha256 of the value the form was rendered with (None: the agent had none)."""
        self.is_valid()
        return self.cleaned_data.get("expected_sha256") or None

"""What every read screen's URL parameters share: a bad value never fails the page. It is reported and
replaced by its default, so the rest of the page still works."""

from __future__ import annotations

from typing import Any

from django import forms
from django.forms.utils import ErrorList


def error_text(errors: ErrorList) -> str:
    """One field's error messages as one line."""
    return " ".join(str(error) for error in errors)


class LenientForm(forms.Form):
    """A GET form whose invalid fields fall back to their initial value, with the error kept for the page."""

    def values(self) -> tuple[dict[str, Any], list[str]]:
        self.is_valid()
        values: dict[str, Any] = {}
        problems: list[str] = []
        for name, field in self.fields.items():
            if name in self.errors:
                raw = self.data.get(name, "")
                problems.append(f"Ignored {field.label or name} {raw!r}: {error_text(self.errors[name])}")
                values[name] = field.initial
            else:
                value = self.cleaned_data.get(name)
                values[name] = field.initial if value in (None, "") else value
        return values, problems

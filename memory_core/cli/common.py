"""Helpers shared by the subcommands: one error type, JSON output."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any


class CliError(Exception):
    """A problem the user can fix; printed as one line, exit code 2."""


class UnknownThread(CliError):
    """No Mycel store has the thread (the API answers 404); `problems` are what reading it met."""

    def __init__(self, message: str, *, problems: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


def print_json(data: Any) -> None:
    # One write of the whole text: json.dump streams tens of thousands of small writes.
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")

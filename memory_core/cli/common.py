"""Helpers shared by the subcommands: the command line's own error type, JSON output."""

from __future__ import annotations

import json
import sys
from typing import Any

from memory_core.app.errors import AppError


class CliError(AppError):
    """A problem with the command line itself; printed as one line, exit code 2."""


def print_json(data: Any) -> None:
    # One write of the whole text: json.dump streams tens of thousands of small writes.
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")

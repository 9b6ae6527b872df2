"""The fleet reports the fleet index keeps (memory_core/app/kept_reports.py): the Context tabs'."""

from __future__ import annotations

from memory_core.app import calibration, prompt_cache, tools
from memory_core.app.kept_reports import KeptReport

CONTEXT_REPORTS: tuple[KeptReport, ...] = (calibration.KEPT, tools.KEPT, prompt_cache.KEPT)

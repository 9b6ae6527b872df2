"""The calibration screen's rows (Django-free): `calibration --json`'s very dict, with the links the page
adds: each unseen crossing to its call page, each recommendation to the Config what-if with it proposed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from memory_core.app.calibration_pages import THREAD_ROWS, row_order


@dataclass(frozen=True, slots=True)
class ModelSection:
    data: dict[str, Any]  # one model of calibration_json
    kinds: list[tuple[str, dict[str, Any]]]
    unseen: list[tuple[dict[str, Any], str]]  # (crossing, its call page)
    whatif_thread: str | None  # the thread the what-if links open (the model's busiest)
    limit_whatif_url: str
    trigger_whatif_url: str


def model_sections(
    report: dict[str, Any], *, call_url: Callable[[str, int], str], config_url: str
) -> list[ModelSection]:
    """One section per model of the report, with its links."""
    sections: list[ModelSection] = []
    for model in report["models"]:
        thread = model["busiest_thread"]
        limit, trigger = model["recommended_context_limit"], model["recommended_trigger_tokens"]
        sections.append(
            ModelSection(
                data=model,
                kinds=list(model["by_kind"].items()),
                unseen=[(u, call_url(u["thread_id"], u["call"])) for u in model["crossed_limit_unseen"]],
                whatif_thread=thread,
                limit_whatif_url=_whatif(config_url, thread, {"runtime.context_limit": limit})
                if limit
                else "",
                trigger_whatif_url=_whatif(config_url, thread, {"rules": "dev", "trigger_tokens": trigger})
                if trigger
                else "",
            )
        )
    return sections


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    thread_id: str
    url: str  # the thread's page ("" when the id cannot be linked)
    data: dict[str, Any]  # one model of the thread's own figures


def thread_rows(
    report: dict[str, Any], *, thread_url: Callable[[str], str]
) -> tuple[list[CalibrationRow], int]:
    """Each thread's own figures per model, the first THREAD_ROWS of them, and how many there are."""
    rows = [
        CalibrationRow(t["thread_id"], thread_url(t["thread_id"]), m)
        for t in report["threads"]
        for m in t["models"]
    ]
    rows.sort(key=lambda r: row_order(r.thread_id, r.data))
    return rows[:THREAD_ROWS], report["thread_rows_count"]


def _whatif(config_url: str, thread: str | None, values: dict[str, object]) -> str:
    query = {"thread": thread, **values} if thread is not None else values
    return f"{config_url}?{urlencode(query)}#whatif"

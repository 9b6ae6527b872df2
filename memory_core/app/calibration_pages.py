"""The calibration screen's documents, summed thread by thread: every model's figures (economics'
ModelSum: numbers in arrays, the first entries of the long lists) and, per page (every model, or one),
the threads of its first rows. A sum over a million threads holds numbers and a hundred rows, never the
threads; `mycel-memory calibration --json` prints the lists whole (memory_core/app/calibration.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from memory_core.economics.calibration import (
    CalibrationReport,
    ModelSum,
    ThreadCalibration,
    calibration_json,
    model_json,
)
from memory_core.leaders import Leaders

# What a page shows of the report's long lists (`calibration --json` has them whole, and their lengths).
POINTS_SHOWN = 2_000  # per model, the (estimate, provider) points charted, newest threads first
UNSEEN_SHOWN = 100  # per model, the calls whose real count crossed a line unseen
THREAD_ROWS = 100  # the (thread, model) rows listed: most unseen crossings, then most calls


def row_order(thread_id: str, own: dict[str, Any]) -> tuple[int, int, str]:
    """The order of the page's (thread, model) rows: most unseen crossings, then most calls."""
    return (-len(own["crossed_limit_unseen"]), -own["calls"], thread_id)


class _Rows:
    """One page's (thread, model) rows: how many, and the first THREAD_ROWS in row order with their
    threads' entries (a thread's best row ranks above any row it is behind, so those rows are all there)."""

    def __init__(self) -> None:
        self.first: Leaders[tuple[int, dict[str, Any]]] = Leaders(THREAD_ROWS)

    @property
    def count(self) -> int:
        return self.first.count

    def add(self, position: int, thread_id: str, owns: list[dict[str, Any]]) -> None:
        entry = {"thread_id": thread_id, "models": owns}
        for own in owns:
            self.first.add((row_order(thread_id, own), position), (position, entry))

    def threads(self) -> list[dict[str, Any]]:
        """The listed threads, in the order they were summed."""
        return [entry for _, entry in sorted(dict(self.first.values()).items())]


class CalibrationPages:
    """Every page's document of the calibration screen, summed thread by thread (newest activity first)."""

    def __init__(self, encodings: tuple[str, ...]) -> None:
        self.encodings = encodings
        self.models: dict[str, ModelSum] = {}
        self.rows: dict[str | None, _Rows] = {None: _Rows()}
        self.position = 0

    def add(self, thread: ThreadCalibration) -> None:
        owns = list(thread.own_json)
        if not owns:  # no call: nothing of it on any page
            return
        self.position += 1
        for c in thread.calls:
            self._model(c.model).add_call(c)
        for k in thread.kinds:  # a kind's model is one of the thread's calls'
            self._model(k.model).add_kind(k)
        self.rows[None].add(self.position, thread.thread_id, owns)
        for model in sorted({own["model"] for own in owns}):
            mine = [own for own in owns if own["model"] == model]
            self.rows.setdefault(model, _Rows()).add(self.position, thread.thread_id, mine)

    def add_all(self, threads: Iterable[ThreadCalibration]) -> CalibrationPages:
        for thread in threads:
            self.add(thread)
        return self

    def _model(self, model: str) -> ModelSum:
        if model not in self.models:
            self.models[model] = ModelSum(model, self.encodings, keep=(POINTS_SHOWN, UNSEEN_SHOWN))
        return self.models[model]

    def model_names(self) -> list[str]:
        return sorted(self.models)

    def page(self, model: str | None) -> dict[str, Any]:
        """The document of the page of `model` (None: every model): the report's JSON, its long lists cut
        to their first entries (`<list>_count`: their length), each model's busiest thread (most calls
        behind its fit, else the first with a call) and the threads of the first THREAD_ROWS rows."""
        names = self.model_names() if model is None else [model] if model in self.models else []
        rows = self.rows.get(model) or _Rows()
        document = calibration_json(CalibrationReport(self.encodings, (), ()))  # the report's shape
        return {
            **document,
            "models": [self._page_model(name) for name in names],
            "threads": rows.threads(),
            "thread_rows_count": rows.count,
        }

    def _page_model(self, name: str) -> dict[str, Any]:
        summed = self.models[name]
        figures = summed.result()
        busiest = summed.busiest[1] if summed.busiest is not None else summed.first_thread
        return {
            **model_json(figures),
            "busiest_thread": busiest,
            "points_count": figures.provider_calls,
            "crossed_limit_unseen_count": summed.unseen_count,
        }

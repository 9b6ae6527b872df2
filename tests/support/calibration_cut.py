"""What the calibration screen shows of `mycel-memory calibration --json` (which prints every list whole),
cut here from the whole report the way the page describes it: the oracle the page's sum
(memory_core/app/calibration_pages.py, summed thread by thread) is held to."""

from __future__ import annotations

from collections import Counter
from typing import Any

from memory_core.app import calibration_pages as shown


def page_calibration(document: dict[str, Any]) -> dict[str, Any]:
    """Long lists cut to their first entries (`<list>_count`: their length), each model's busiest thread
    (most points behind its fit, the first of equals; else the first thread with a call), and only the
    threads of the first THREAD_ROWS (thread, model) rows in the page's row order."""
    rows = sorted(
        (shown.row_order(t["thread_id"], own), t["thread_id"])
        for t in document["threads"]
        for own in t["models"]
    )
    listed = {thread_id for _, thread_id in rows[: shown.THREAD_ROWS]}
    return {
        **document,
        "models": [_page_model(m, document["threads"]) for m in document["models"]],
        "threads": [t for t in document["threads"] if t["thread_id"] in listed],
        "thread_rows_count": len(rows),
    }


def _page_model(model: dict[str, Any], threads: list[dict[str, Any]]) -> dict[str, Any]:
    busiest = Counter(p["thread_id"] for p in model["points"]).most_common(1)
    if not busiest:
        busiest = Counter(
            t["thread_id"] for t in threads for m in t["models"] if m["model"] == model["model"]
        ).most_common(1)
    return {
        **model,
        "busiest_thread": busiest[0][0] if busiest else None,
        "points": model["points"][: shown.POINTS_SHOWN],
        "points_count": len(model["points"]),
        "crossed_limit_unseen": model["crossed_limit_unseen"][: shown.UNSEEN_SHOWN],
        "crossed_limit_unseen_count": len(model["crossed_limit_unseen"]),
    }

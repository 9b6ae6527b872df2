"""`mycel-memory calibration [--model M] [--json | --page]`: Mycel's estimate against tiktoken and the provider's
count, per model (memory_core/app/calibration.py `fleet_calibration`, the calibration screen's
very report). Ratios are real / estimate."""

from __future__ import annotations

import argparse

from memory_core import figures
from memory_core.app.calibration import KEPT, calibration_document, calibration_for_page, fleet_calibration
from memory_core.app.status import require_data
from memory_core.cli.common import CliError, print_json
from memory_core.cli.reading import kept_report, open_reader, warn
from memory_core.cli.table import print_table, short_id
from memory_core.economics.calibration import OVERHEAD_NAME, Spread


def run_calibration(args: argparse.Namespace) -> int:
    model = args.model.strip() if isinstance(args.model, str) else None
    if model == "":
        raise CliError("--model needs a model name")
    reader = open_reader()
    require_data(reader.locations)
    if args.page:
        page = calibration_for_page(
            reader, model=model, kept=kept_report(args, reader, KEPT.name), deadline=None
        )
        warn(page.problems)
        print_json(page.document)
        return 0
    found = fleet_calibration(reader, model=model)
    if model is not None and model not in found.models:
        known = ", ".join(sorted(found.models)) or "none"
        raise CliError(f"no model call used model {model!r} (models with calls: {known})")
    warn(found.problems)
    report = found.report
    if args.json:
        print_json(calibration_document(found))
        return 0
    encodings = report.encodings
    print(
        f"ratios are real / Mycel's estimate, to two decimals (--json has them exact); tiktoken in {', '.join(encodings)}"
    )
    print(f"the provider's input_tokens include Mycel's {OVERHEAD_NAME}")
    print()
    print_table(
        (
            "MODEL",
            "CALLS",
            "PROVIDER P10/P50/P90",
            *(f"{e.upper()} P50" for e in encodings),
            "OVERHEAD",
            "RATE",
        ),
        [
            (
                m.model,
                figures.count(m.calls),
                _spread(m.provider_ratio),
                *(figures.ratio(s.p50) if s else "-" for _, s in m.tiktoken_ratio),
                figures.count(m.fit.overhead) if m.fit else "-",
                figures.ratio(m.fit.rate) if m.fit else "-",
            )
            for m in report.models
        ],
    )
    print()
    print_table(
        ("MODEL", "KIND", "MESSAGES", "ESTIMATE", "TIKTOKEN / ESTIMATE", "PROVIDER P50 (DOMINANT)"),
        [
            (
                m.model,
                k.kind.value,
                figures.count(k.messages),
                figures.count(k.estimate_tokens),
                figures.ratio(k.tiktoken[0][2]) if k.tiktoken and k.tiktoken[0][2] is not None else "-",
                figures.ratio(k.provider_ratio.p50) if k.provider_ratio else "-",
            )
            for m in report.models
            for k in m.by_kind
        ],
    )
    print()
    for m in report.models:
        r = m.recommendation
        if r.context_limit is None:
            print(f"{m.model}: no recommendation ({r.reason})")
        else:
            print(
                f"{m.model}: context_limit {figures.count(r.context_limit)} "
                f"(in force {figures.count(r.limit_in_force)}), "
                f"or dev's trigger_tokens {figures.count(r.trigger_tokens)}: {r.reason}"
            )
        for u in m.unseen:
            print(
                f"  unseen: {short_id(u.thread_id)} call {u.call} crossed the {u.line} "
                f"({figures.count(u.real)} by {u.real_from}; Mycel's estimate {figures.count(u.pruned_tokens)}, "
                f"trigger {figures.count(u.trigger_tokens)})"
            )
    return 0


def _spread(value: Spread | None) -> str:
    if value is None:
        return "-"
    return " / ".join(figures.ratio(v) for v in (value.p10, value.p50, value.p90))

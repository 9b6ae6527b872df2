"""The fleet's health in Prometheus's text format, with the official client library (prometheus-client).

Every value is a figure of memory_core/app/health.py, the same that `mycel-memory health --json` prints.
Labels are bounded: layout (main, dev), model (MODEL_LABELS of them and "other"), flag, store; never a
thread id. `METRICS` names every metric exported here (the docs, the Grafana test and the alert rules'
test check theirs against it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import Collector, CollectorRegistry

from memory_core.app.health import (
    ACTIVE_WINDOW,
    FILL_ALERT,
    FILL_BUCKETS,
    Check,
    FleetFigures,
    IndexLag,
    ModelFill,
    ready,
)

METRICS: dict[str, str] = {
    "mycel_memory_threads": "Threads the fleet index holds, by checkpoint layout and model.",
    "mycel_memory_threads_by_state": (
        f"Threads by state and layout: active (a checkpoint in the last {ACTIVE_WINDOW.total_seconds() / 60:.0f}"
        " minutes, Mycel's default idle timeout), idle (an older one), empty (no checkpoint)."
    ),
    "mycel_memory_threads_flagged": (
        "Threads carrying a flag of the Threads list (compacted, pruned, queued, sandbox, breaker_open), "
        "by layout."
    ),
    "mycel_memory_threads_over_fill": (
        f"Threads whose head is over {FILL_ALERT:.0%} of their context window (Mycel's estimate), by model."
    ),
    "mycel_memory_fill_ratio": (
        "Fill of each thread's head: Mycel's token estimate over the thread's context limit, by model."
    ),
    "mycel_memory_checkpoint_bytes": "Bytes of the threads' checkpoints and writes, by layout.",
    "mycel_memory_summaries": "Compaction summaries the threads hold, by layout (increase() = compactions).",
    "mycel_memory_records": (
        "Threads whose record of model calls the fleet index has read, by layout and model (the figures "
        "below are theirs)."
    ),
    "mycel_memory_records_pending": (
        "Threads whose record the fleet index has not read at their newest head yet (their figures below "
        "are as of an older head, or absent)."
    ),
    "mycel_memory_threads_recompacting": (
        "Threads Mycel main compacts again at every call (its estimate stays over the trigger), by layout "
        "and model."
    ),
    "mycel_memory_threads_summaries_not_stored": (
        "Threads with a compaction whose summary Mycel did not store, by layout and model."
    ),
    "mycel_memory_threads_over_fill_sent": (
        f"Threads whose last model call sent over {FILL_ALERT:.0%} of its context window (Mycel's "
        "estimate of what was sent), by model."
    ),
    "mycel_memory_fill_sent_ratio": (
        "What each thread's last model call sent (Mycel's estimate) over that call's context limit, by model."
    ),
    "mycel_memory_calls": "Model calls in the threads' records, by layout and model.",
    "mycel_memory_calls_without_usage": (
        "Model calls the provider answered with no usage stored, by layout and model."
    ),
    "mycel_memory_compactions": (
        "Compactions in the threads' records, by layout and model (increase() = compactions per hour)."
    ),
    "mycel_memory_trimmed_results": (
        "Tool results trimmed or cleared at each thread's last call, by layout and model (increase() = "
        "trims)."
    ),
    "mycel_memory_provider_input_tokens": (
        "The provider's input tokens over the calls that have them, by layout and model; over "
        "mycel_memory_estimated_sent_tokens it is the estimate's drift."
    ),
    "mycel_memory_estimated_sent_tokens": (
        "Mycel's estimate of what those same calls sent, by layout and model."
    ),
    "mycel_memory_cost_usd": (
        "What the provider billed, in USD (tokens x Mycel's pricing cache), over the threads' records, by "
        "the model each call's response named (increase() over a day = cost per day). Unpriced calls: none."
    ),
    "mycel_memory_cost_calls": "The model calls behind mycel_memory_cost_usd, priced or not, by model.",
    "mycel_memory_cost_usd_today": (
        "What the provider billed for today's calls (UTC day, as the Cost page's days), in USD, by the "
        "models of mycel_memory_cost_usd: the cost per model and day, as of the records read."
    ),
    "mycel_memory_store_bytes": (
        "Bytes of each Mycel store on disk: a SQLite file with its write-ahead log (by its role), a "
        "PostgreSQL schema's Mycel tables with TOAST and indexes (postgresql SCHEMA); predict_linear() over "
        "it projects growth."
    ),
    "mycel_memory_index_built": "1 when the fleet index has been started for this store.",
    "mycel_memory_index_complete": "1 when a full pass of the fleet index finished under the current rules.",
    "mycel_memory_index_threads_indexed": "Threads the fleet index's last pass found (or has computed).",
    "mycel_memory_index_threads_pending": "Threads whose newest head the fleet index does not hold yet.",
    "mycel_memory_index_lag_seconds": "Seconds since the oldest head the fleet index does not hold was written.",
    "mycel_memory_index_age_seconds": "Seconds since the fleet index's last full pass finished.",
    "mycel_memory_store_up": "1 when the store answered its readiness probe.",
    "mycel_memory_ready": "1 when every readiness check passes (/readyz).",
}


def _gauge(name: str, labels: Sequence[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, METRICS[name], labels=list(labels))


class HealthCollector(Collector):
    """One scrape's figures, computed before: collecting only renders them."""

    def __init__(
        self,
        figures: FleetFigures | None,
        lag: IndexLag | None,
        checks: Sequence[Check],
        store_bytes: Mapping[str, int] | None = None,
    ) -> None:
        self.figures, self.lag, self.checks = figures, lag, checks
        self.store_bytes = store_bytes or {}

    def collect(self) -> Iterator[Metric]:
        if self.figures is not None:
            yield from _figures(self.figures)
        if self.lag is not None:
            yield from _index(self.lag)
        up = _gauge("mycel_memory_store_up", ["store"])
        for check in self.checks:
            if check.name != "fleet index" and check.kind != "absent":
                up.add_metric([check.name], 1.0 if check.ok else 0.0)
        yield up
        files = _gauge("mycel_memory_store_bytes", ["store"])
        for store, size in sorted(self.store_bytes.items()):
            files.add_metric([store], size)
        yield files
        whole = _gauge("mycel_memory_ready")
        whole.add_metric([], 1.0 if ready(self.checks) else 0.0)
        yield whole


def _figures(figures: FleetFigures) -> Iterator[Metric]:
    threads = _gauge("mycel_memory_threads", ["layout", "model"])
    for (layout, model), n in sorted(figures.threads.items()):
        threads.add_metric([layout, model], n)
    yield threads
    states = _gauge("mycel_memory_threads_by_state", ["state", "layout"])
    for (state, layout), n in sorted(figures.states.items()):
        states.add_metric([state, layout], n)
    yield states
    flagged = _gauge("mycel_memory_threads_flagged", ["flag", "layout"])
    for (flag, layout), n in sorted(figures.flagged.items()):
        flagged.add_metric([flag, layout], n)
    yield flagged
    yield from _fills("mycel_memory_threads_over_fill", "mycel_memory_fill_ratio", figures.fill)
    size = _gauge("mycel_memory_checkpoint_bytes", ["layout"])
    for layout, n in sorted(figures.bytes_on_disk.items()):
        size.add_metric([layout], n)
    yield size
    summaries = _gauge("mycel_memory_summaries", ["layout"])
    for layout, n in sorted(figures.summaries.items()):
        summaries.add_metric([layout], n)
    yield summaries
    yield from _records(figures)


# Each record figure per (layout, model), by metric name: the sums' attribute it reads.
_RECORD_GAUGES = {
    "mycel_memory_records": "threads",
    "mycel_memory_threads_recompacting": "recompacting",
    "mycel_memory_threads_summaries_not_stored": "not_stored",
    "mycel_memory_calls": "calls",
    "mycel_memory_calls_without_usage": "calls_without_usage",
    "mycel_memory_compactions": "compactions",
    "mycel_memory_trimmed_results": "trimmed_results",
    "mycel_memory_provider_input_tokens": "provider_tokens",
    "mycel_memory_estimated_sent_tokens": "estimated_tokens",
}


def _records(figures: FleetFigures) -> Iterator[Metric]:
    for name, attribute in _RECORD_GAUGES.items():
        gauge = _gauge(name, ["layout", "model"])
        for (layout, model), sums in sorted(figures.records.items()):
            gauge.add_metric([layout, model], getattr(sums, attribute))
        yield gauge
    cost = _gauge("mycel_memory_cost_usd", ["model"])
    calls = _gauge("mycel_memory_cost_calls", ["model"])
    for model, (n, usd) in sorted(figures.cost.items()):
        calls.add_metric([model], n)
        if usd is not None:
            cost.add_metric([model], float(usd))
    yield cost
    yield calls
    today = _gauge("mycel_memory_cost_usd_today", ["model"])
    for model, (_, priced) in sorted(figures.cost.items()):
        if priced is not None:  # a priced model with no call today cost $0 today
            today.add_metric([model], float(figures.cost_today.get(model, (0, None))[1] or 0))
    yield today
    pending = _gauge("mycel_memory_records_pending")
    pending.add_metric([], figures.records_pending)
    yield pending
    yield from _fills(
        "mycel_memory_threads_over_fill_sent", "mycel_memory_fill_sent_ratio", figures.fill_sent
    )


def _fills(over_name: str, ratio_name: str, fills: Mapping[str, ModelFill]) -> Iterator[Metric]:
    """A fill distribution per model: the threads over the alert's fill, and the histogram."""
    over = _gauge(over_name, ["model"])
    ratio = HistogramMetricFamily(ratio_name, METRICS[ratio_name], labels=["model"])
    for model, found in sorted(fills.items()):
        over.add_metric([model], found.over_alert)
        buckets = [(str(bound), float(n)) for bound, n in zip(FILL_BUCKETS, found.at_most, strict=True)]
        ratio.add_metric([model], [*buckets, ("+Inf", float(found.known))], sum_value=found.total)
    yield over
    yield ratio


def _index(lag: IndexLag) -> Iterator[Metric]:
    values: dict[str, float | None] = {
        "mycel_memory_index_built": float(lag.built),
        "mycel_memory_index_complete": float(lag.complete),
        "mycel_memory_index_threads_indexed": float(lag.indexed),
        "mycel_memory_index_threads_pending": float(lag.pending),
        "mycel_memory_index_lag_seconds": lag.lag_s,
        "mycel_memory_index_age_seconds": lag.age_s,
    }
    for name, value in values.items():
        if value is not None:  # a pass never finished has no age: absent, not 0
            gauge = _gauge(name)
            gauge.add_metric([], value)
            yield gauge


def exposition(
    figures: FleetFigures | None,
    lag: IndexLag | None,
    checks: Sequence[Check],
    store_bytes: Mapping[str, int] | None = None,
) -> bytes:
    """The scrape's body (text format 0.0.4)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(HealthCollector(figures, lag, checks, store_bytes))
    return generate_latest(registry)

"""Memory health an operator can alert on: the fleet's figures from the fleet index, how far the index is
behind, whether each store answers, and which alerts fire.

One truth: `/metrics` (mycel_dashboard/web/metrics.py, rendered by memory_core/app/metrics.py), `/readyz`
and `mycel-memory health` all take their figures from here. The fleet's figures are tallies of the index's
per-thread facts (IndexedThread), grouped by model and layout: the dashboard asks its database for them in
SQL (IndexTallies), the command line tallies the same facts in Python (`tally`), and a test holds the two
equal. Nothing here walks the fleet's checkpoints, except `in_memory_groups` for a command line that has
no index to read.
"""

from __future__ import annotations

import contextlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Protocol

from memory_core.app.cost import pricing_of
from memory_core.app.fleet_index import (
    FLAGS,
    FleetIndexStore,
    Freshness,
    IndexedThread,
    IndexQuery,
    index_version,
    indexed_facts,
    since_id,
    store_name,
)
from memory_core.economics.cost import PriceBook, UsageGroup, group_report, usd
from memory_core.family import registered_only_rows
from memory_core.records import StoreProblem
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.locations import SQLITE_PATH_VARIABLES, MycelLocations, StoreRole
from memory_core.stores.probe import probe_postgres, probe_sqlite
from memory_core.stores.reader import MycelReader

# Upper bounds of the fill histogram's buckets (fill = Mycel's estimate of the head over the thread's limit).
FILL_BUCKETS = (0.5, 0.7, 0.8, 0.9, 1.0)
FILL_ALERT = 0.9  # a thread over this fill counts in threads_over_fill (the alert's 90 %)
MODEL_LABELS = 20  # the models named in labels; the rest are summed under "other"
OTHER_MODELS = "other"
NO_MODEL = "(none)"
MODEL_LABEL_CHARS = 80
INDEX_LAG_ALERT_S = 600.0  # the index this far behind the store's newest head: the alert fires
PROBE_TIMEOUT_S = 2.0  # each store's probe; /readyz is called every few seconds
# A thread with a checkpoint newer than this is "active": Mycel's own default idle timeout for a chat session
# (ChatSessionPolicy.idle_ttl_sec, 600 s). Checkpoints are what every layout stores; whether the agent runs
# at this instant is in Mycel's memory only.
ACTIVE_WINDOW = timedelta(minutes=10)
STATES = ("active", "idle", "empty")  # a checkpoint within ACTIVE_WINDOW, an older one, none at all


def active_from(now: datetime | None = None) -> datetime:
    """The last activity from which a thread counts as active, at `now` (default: now)."""
    return (now or datetime.now(UTC)) - ACTIVE_WINDOW


def state_of(thread: IndexedThread, active_since: datetime) -> str:
    """The thread's state in STATES, from its indexed head and last activity."""
    row = thread.row
    if row.head_checkpoint_id is None:
        return "empty"
    return "active" if row.updated_at is not None and row.updated_at >= active_since else "idle"


# -- the fleet's figures ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordSums:
    """The record tallies (fleet_index.RecordTally) of a group's threads that have one, summed."""

    threads: int = 0  # threads with a record
    current: int = 0  # of those, read at the thread's indexed head (the rest: as of an older head)
    recompacting: int = 0  # threads Mycel main re-compacts at every call
    not_stored: int = 0  # threads with a compaction whose summary Mycel did not store
    calls: int = 0
    calls_without_usage: int = 0
    compactions: int = 0
    trimmed_results: int = 0
    fill_sent_known: int = 0
    fill_sent_sum: float = 0.0
    fill_sent_at_most: tuple[int, ...] = (0,) * len(FILL_BUCKETS)
    provider_tokens: int = 0
    estimated_tokens: int = 0

    def plus(self, other: RecordSums) -> RecordSums:
        return RecordSums(
            threads=self.threads + other.threads,
            current=self.current + other.current,
            recompacting=self.recompacting + other.recompacting,
            not_stored=self.not_stored + other.not_stored,
            calls=self.calls + other.calls,
            calls_without_usage=self.calls_without_usage + other.calls_without_usage,
            compactions=self.compactions + other.compactions,
            trimmed_results=self.trimmed_results + other.trimmed_results,
            fill_sent_known=self.fill_sent_known + other.fill_sent_known,
            fill_sent_sum=self.fill_sent_sum + other.fill_sent_sum,
            fill_sent_at_most=tuple(
                a + b for a, b in zip(self.fill_sent_at_most, other.fill_sent_at_most, strict=True)
            ),
            provider_tokens=self.provider_tokens + other.provider_tokens,
            estimated_tokens=self.estimated_tokens + other.estimated_tokens,
        )


def record_sums(threads: Iterable[IndexedThread]) -> RecordSums:
    """The record tallies of `threads` (those that have one) summed: health.tally's, the tests' oracle."""
    held = [t for t in threads if t.record is not None]
    found = [t.record for t in held if t.record is not None]
    fills = [r.fill_sent for r in found if r.fill_sent is not None]
    return RecordSums(
        threads=len(found),
        current=sum(1 for t in held if t.record is not None and t.record.head == t.row.head_checkpoint_id),
        recompacting=sum(1 for r in found if r.recompacting),
        not_stored=sum(1 for r in found if r.compactions_not_stored > 0),
        calls=sum(r.calls for r in found),
        calls_without_usage=sum(r.calls_without_usage for r in found),
        compactions=sum(r.compactions for r in found),
        trimmed_results=sum(r.trimmed_results for r in found),
        fill_sent_known=len(fills),
        fill_sent_sum=sum(fills),
        fill_sent_at_most=tuple(sum(1 for f in fills if f <= bound) for bound in FILL_BUCKETS),
        provider_tokens=sum(r.provider_tokens for r in found),
        estimated_tokens=sum(r.estimated_tokens for r in found),
    )


@dataclass(frozen=True, slots=True)
class GroupTally:
    """The index's threads of one (model, layout): counts and sums, nothing per thread."""

    model: str | None
    layout: str
    threads: int
    flagged: Mapping[str, int]  # flag (fleet_index.FLAGS) -> threads carrying it
    fill_known: int  # threads whose fill is known
    fill_sum: float
    fill_at_most: tuple[int, ...]  # threads with fill <= each of FILL_BUCKETS
    bytes_on_disk: int
    summaries: int  # compaction summaries the threads' rows count
    records: RecordSums = field(default_factory=RecordSums)  # of the threads with a record
    states: Mapping[str, int] = field(default_factory=dict)  # state (STATES) -> threads


class IndexTallies(Protocol):
    """The index's facts of one store tallied by (model, layout), by the database that keeps them."""

    def tallies(self, store: str, *, active_since: datetime) -> list[GroupTally]:
        """The groups; a thread last active at or after `active_since` counts as active (state_of)."""
        ...

    def usage(self, store: str) -> list[UsageGroup]:
        """The record pass's calls with usage, summed over the store's threads per (model, day, branch
        kind): what the Cost report prices (memory_core.app.cost.CostIndex.usage)."""
        ...


def usage_tally(threads: Iterable[IndexedThread]) -> list[UsageGroup]:
    """The same groups as IndexTallies.usage (not summed: group_report sums them), from the facts."""
    return [
        replace(g, thread_id=None)
        for thread in threads
        for g in (thread.record.usage if thread.record is not None else ())
    ]


@dataclass(frozen=True, slots=True)
class ModelCost:
    model: str
    calls: int
    cost_usd: Decimal | None  # None: no price for it (or no pricing cache)


def model_costs(
    usage: Iterable[UsageGroup], book: PriceBook | None, day: date | None = None
) -> list[ModelCost]:
    """Calls and cost per model (the call's), as the Cost report sums and prices them (its one function);
    with `day`, of that UTC day's calls."""
    report = group_report(usage, (), book, since=day, until=day)
    return [ModelCost(m.line.name, m.line.calls, m.line.cost_usd) for m in report.models]


def tally(threads: Iterable[IndexedThread], *, active_since: datetime) -> list[GroupTally]:
    """The same tallies as IndexTallies, from the facts themselves (the command line; the tests' oracle)."""
    groups: dict[tuple[str | None, str], list[IndexedThread]] = defaultdict(list)
    for thread in threads:
        groups[(thread.row.model, thread.row.layout)].append(thread)
    out = []
    for (model, layout), members in groups.items():
        fills = [t.fill for t in members if t.fill is not None]
        flagged = Counter(flag for t in members for flag in t.flags)
        states = Counter(state_of(t, active_since) for t in members)
        out.append(
            GroupTally(
                model,
                layout,
                len(members),
                {flag: flagged[flag] for flag in FLAGS},
                len(fills),
                sum(fills),
                tuple(sum(1 for f in fills if f <= bound) for bound in FILL_BUCKETS),
                sum(t.row.bytes_on_disk for t in members),
                sum(t.row.summaries for t in members),
                record_sums(members),
                {state: states[state] for state in STATES},
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class ModelFill:
    known: int
    total: float
    at_most: tuple[int, ...]  # cumulative, one per FILL_BUCKETS

    @property
    def over_alert(self) -> int:
        return self.known - self.at_most[FILL_BUCKETS.index(FILL_ALERT)]


@dataclass(frozen=True, slots=True)
class FleetFigures:
    """The fleet's figures with bounded labels: models beyond the first MODEL_LABELS are "other"."""

    threads: Mapping[tuple[str, str], int]  # (layout, model) -> threads
    flagged: Mapping[tuple[str, str], int]  # (flag, layout) -> threads
    fill: Mapping[str, ModelFill]  # model -> its fill distribution
    bytes_on_disk: Mapping[str, int]  # layout -> bytes of its threads' checkpoints and writes
    summaries: Mapping[str, int]  # layout -> compaction summaries
    records: Mapping[tuple[str, str], RecordSums] = field(default_factory=dict)  # (layout, model) -> sums
    # The call's model (MODEL_LABELS of them by calls, the rest "other") -> calls and their cost in USD
    # (None when none of them is priced): the Cost report's figures over every thread's record.
    cost: Mapping[str, tuple[int, Decimal | None]] = field(default_factory=dict)
    states: Mapping[tuple[str, str], int] = field(default_factory=dict)  # (state, layout) -> threads
    cost_today: Mapping[str, tuple[int, Decimal | None]] = field(default_factory=dict)  # as `cost`, today's

    @property
    def active(self) -> int:
        return sum(n for (state, _), n in self.states.items() if state == "active")

    @property
    def total_threads(self) -> int:
        return sum(self.threads.values())

    @property
    def over_fill(self) -> int:
        return sum(f.over_alert for f in self.fill.values())

    @property
    def breaker_open(self) -> int:
        return sum(n for (flag, _), n in self.flagged.items() if flag == "breaker_open")

    @property
    def recompacting(self) -> int:
        return sum(r.recompacting for r in self.records.values())

    @property
    def not_stored(self) -> int:
        return sum(r.not_stored for r in self.records.values())

    @property
    def fill_sent(self) -> dict[str, ModelFill]:
        """Per model, the fill of each thread's last call as sent (its record's), over every layout."""
        out: dict[str, ModelFill] = {}
        for (_, model), r in sorted(self.records.items()):
            before = out.get(model, ModelFill(0, 0.0, (0,) * len(FILL_BUCKETS)))
            out[model] = ModelFill(
                before.known + r.fill_sent_known,
                round(before.total + r.fill_sent_sum, 6),
                tuple(a + b for a, b in zip(before.at_most, r.fill_sent_at_most, strict=True)),
            )
        return out

    @property
    def over_fill_sent(self) -> int:
        """Threads whose last call sent more than FILL_ALERT of its window (Mycel's estimate)."""
        return sum(f.over_alert for f in self.fill_sent.values())

    @property
    def records_pending(self) -> int:
        """Threads whose record was not read at their indexed head (their figures are older, or none)."""
        return self.total_threads - sum(r.current for r in self.records.values())


def model_label(model: str | None) -> str:
    if not model:
        return NO_MODEL
    return model[:MODEL_LABEL_CHARS]


def cost_figures(
    costs: Sequence[ModelCost], named: Iterable[str] | None = None
) -> dict[str, tuple[int, Decimal | None]]:
    """Calls and cost per model under bounded labels: the MODEL_LABELS models with most calls by name (or
    the labels `named`, so that a day's figures use the whole period's)."""
    ranked = sorted(costs, key=lambda c: (-c.calls, c.model))
    kept = set(named) if named is not None else {model_label(c.model) for c in ranked[:MODEL_LABELS]}
    out: dict[str, tuple[int, Decimal | None]] = {}
    for found in costs:
        label = model_label(found.model) if model_label(found.model) in kept else OTHER_MODELS
        calls, cost = out.get(label, (0, None))
        if found.cost_usd is not None:
            cost = (cost or Decimal(0)) + found.cost_usd
        out[label] = (calls + found.calls, cost)
    return out


def figures_of(
    groups: Sequence[GroupTally], costs: Sequence[ModelCost] = (), costs_today: Sequence[ModelCost] = ()
) -> FleetFigures:
    """The groups summed under bounded labels (the busiest MODEL_LABELS models by name, the rest "other")."""
    per_model = Counter[str]()
    for g in groups:
        per_model[model_label(g.model)] += g.threads
    ranked = sorted(per_model, key=lambda m: (-per_model[m], m))
    named = set(ranked[:MODEL_LABELS])

    def label(model: str | None) -> str:
        found = model_label(model)
        return found if found in named else OTHER_MODELS

    threads: Counter[tuple[str, str]] = Counter()
    flagged: Counter[tuple[str, str]] = Counter()
    states: Counter[tuple[str, str]] = Counter()
    fills: dict[str, list[Any]] = {}
    sizes: Counter[str] = Counter()
    summaries: Counter[str] = Counter()
    records: dict[tuple[str, str], RecordSums] = {}
    every_day = cost_figures(costs)
    for g in groups:
        model = label(g.model)
        records[(g.layout, model)] = records.get((g.layout, model), RecordSums()).plus(g.records)
        threads[(g.layout, model)] += g.threads
        for flag in FLAGS:
            flagged[(flag, g.layout)] += g.flagged.get(flag, 0)
        for state in STATES:
            states[(state, g.layout)] += g.states.get(state, 0)
        known, total, at_most = fills.setdefault(model, [0, 0.0, [0] * len(FILL_BUCKETS)])
        fills[model] = [
            known + g.fill_known,
            total + g.fill_sum,
            [a + b for a, b in zip(at_most, g.fill_at_most, strict=True)],
        ]
        sizes[g.layout] += g.bytes_on_disk
        summaries[g.layout] += g.summaries
    return FleetFigures(
        dict(threads),
        dict(flagged),
        {m: ModelFill(k, round(t, 6), tuple(a)) for m, (k, t, a) in fills.items()},
        dict(sizes),
        dict(summaries),
        {key: replace(r, fill_sent_sum=round(r.fill_sent_sum, 6)) for key, r in records.items()},
        every_day,
        dict(states),
        cost_figures(costs_today, named=every_day),
    )


def cost_of_usage(
    usage: Sequence[UsageGroup], book: PriceBook | None, now: datetime | None = None
) -> tuple[list[ModelCost], list[ModelCost]]:
    """figures_of's costs from the index's usage: every day's, and today's (UTC)."""
    today = (now or datetime.now(UTC)).astimezone(UTC).date()
    return model_costs(usage, book), model_costs(usage, book, today)


def index_groups(
    index: FleetIndexStore, store: str, *, active_since: datetime, page: int = 5000
) -> tuple[list[GroupTally], list[UsageGroup]]:
    """Every indexed thread of `store`, tallied in Python (the command line's way to the same figures)."""
    threads: list[IndexedThread] = []
    while True:
        _, _, part = index.page(store, IndexQuery(sort="thread", offset=len(threads), limit=page))
        threads.extend(part)
        if len(part) < page:
            return tally(threads, active_since=active_since), usage_tally(threads)


def in_memory_groups(
    reader: MycelReader, problems: list[StoreProblem], *, active_since: datetime
) -> list[GroupTally]:
    """The same facts computed from the stores, thread by thread (no index to read: the naive way)."""
    listed = reader.list_threads()
    agents = reader.list_agents()
    problems.extend([*listed.problems, *agents.problems])
    rows = [*listed.value, *registered_only_rows(agents.value, (r.thread_id for r in listed.value))]
    return tally(indexed_facts(reader, rows, index_version(reader), problems), active_since=active_since)


# -- the index's lag --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexLag:
    """How far the fleet index of the reader's store is behind the store."""

    built: bool  # the index has a state row for this store
    complete: bool  # a full pass finished under the current rules and config
    indexed: int  # threads the last pass found (or the running pass has computed)
    pending: int  # threads whose head the index does not hold yet
    lag_s: float  # seconds since the oldest head the index does not hold was written (0: none)
    age_s: float | None  # seconds since the last full pass finished (None: never)
    error: str = ""  # why the last pass stopped, if it failed


def index_lag(
    reader: MycelReader, index: FleetIndexStore, problems: list[StoreProblem], *, now: datetime | None = None
) -> IndexLag:
    """The index against the store's heads, by the look's own question, without recomputing anything."""
    now = now or datetime.now(UTC)
    store = store_name(reader)
    state = index.state(store)
    if state is None:
        total, _ = reader.backend.newest_heads(problems, limit=1, offset=0, by_id=False, descending=True)
        return IndexLag(False, False, 0, total, 0.0, None)
    age = (now - state.finished_at).total_seconds() if state.finished_at else None
    if not state.complete or state.version != index_version(reader):
        since = state.started_at or now
        pending = max(0, state.total - state.done) if state.total else 0
        return IndexLag(True, False, state.done, pending, _seconds(now, since), age, state.error)
    heads = reader.backend.thread_heads(problems, since=since_id(state.watermark))
    held = index.indexed_heads(store, [thread for thread, _, _ in heads])
    moved = [head for thread, count, head in heads if held.get(thread, (None, -1, ""))[:2] != (head, count)]
    written = [t for t in (time_of_checkpoint_id(head) for head in moved) if t is not None]
    lag = _seconds(now, min(written)) if written else 0.0
    return IndexLag(True, True, state.total, len(moved), lag, age, state.error)


def lag_after_look(freshness: Freshness, *, now: datetime | None = None) -> IndexLag | None:
    """The lag right after a look that left no moved thread behind (it asked index_lag's own question
    and caught every answer up): none pending; None when the look cannot say (not ready, or behind)."""
    state = freshness.state
    if not freshness.ready or freshness.behind or freshness.problems or state is None or not state.complete:
        return None
    now = now or datetime.now(UTC)
    age = (now - state.finished_at).total_seconds() if state.finished_at else None
    return IndexLag(True, True, state.total, 0, 0.0, age, state.error)


def _seconds(now: datetime, then: datetime) -> float:
    return round(max(0.0, (now - then).total_seconds()), 3)


# -- readiness --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Check:
    """One readiness check: `kind` is safe to show anyone; `message` may name paths and hosts (passwords
    masked) and is for the operator's own tools only (the command line, logs)."""

    name: str
    ok: bool
    kind: str = "ok"  # ok, absent (an optional store not made yet), or a ProblemKind value
    message: str = ""


def store_bytes(reader: MycelReader, problems: list[StoreProblem]) -> dict[str, int]:
    """Bytes each Mycel store holds on disk, by store: every SQLite file that exists (store_file_bytes) and
    every PostgreSQL schema holding Mycel's tables (their catalog sizes). Cheap enough for every scrape; the
    Storage page measures the same stores table by table."""
    return store_file_bytes(reader.locations) | reader.backend.schema_bytes(problems)


def store_file_bytes(locations: MycelLocations) -> dict[str, int]:
    """Bytes of each Mycel SQLite file that exists, its write-ahead log included, by store role, from the
    files' sizes alone (the Storage page's dbstat measures the same files page by page)."""
    out: dict[str, int] = {}
    seen: set[Path] = set()
    for role, path in locations.databases().items():
        if path in seen:
            continue
        seen.add(path)
        try:
            size = path.stat().st_size
        except OSError:
            continue
        wal = path.with_name(path.name + "-wal")
        with contextlib.suppress(OSError):
            size += wal.stat().st_size
        out[role.value] = size
    return out


def store_checks(locations: MycelLocations, *, timeout_s: float = PROBE_TIMEOUT_S) -> list[Check]:
    """Each configured Mycel store, probed: the checkpoint store must answer, a side store only when it
    exists or its variable names it (Mycel makes them on first use)."""
    checks: list[Check] = []
    if locations.postgres_url:
        problem = probe_postgres(locations.postgres_url, "checkpoints", timeout_s=timeout_s)
        checks.append(_checked("checkpoints (postgresql)", problem))
    for role, path in locations.databases().items():
        checkpoints = role is StoreRole.MAIN and not locations.postgres_url
        named = SQLITE_PATH_VARIABLES.get(role) in locations.explicit
        if not path.exists() and not checkpoints and not named:
            checks.append(Check(role.value, True, "absent"))
            continue
        checks.append(_checked(role.value, probe_sqlite(path, role.value, timeout_s=timeout_s)))
    return checks


def _checked(name: str, problem: StoreProblem | None) -> Check:
    if problem is None:
        return Check(name, True)
    return Check(name, False, problem.kind.value, problem.message)


def index_check(lag: IndexLag | None, *, max_lag_s: float = INDEX_LAG_ALERT_S) -> Check:
    """The index is not too far behind: a build in progress is fine, a head unindexed for long is not."""
    if lag is None:
        return Check("fleet index", True, "absent", "no dashboard database to keep it")
    if lag.lag_s > max_lag_s:
        return Check(
            "fleet index",
            False,
            "lagging",
            f"{lag.pending:,} threads wait; the oldest for {lag.lag_s:,.0f} s (limit {max_lag_s:,.0f} s)",
        )
    state = "complete" if lag.complete else ("being built" if lag.built else "not built")
    return Check("fleet index", True, "ok", f"{state}, {lag.pending:,} threads pending")


def ready(checks: Sequence[Check]) -> bool:
    return all(c.ok for c in checks)


def checks_json(checks: Sequence[Check], *, with_messages: bool) -> list[dict[str, Any]]:
    return [
        {"name": c.name, "ok": c.ok, "kind": c.kind, **({"message": c.message} if with_messages else {})}
        for c in checks
    ]


# -- the alerts -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Alert:
    """An alert of ops/prometheus/mycel-memory-rules.yml as the command line evaluates it, now."""

    name: str
    count: float  # the figure behind it
    firing: bool
    says: str


@dataclass(frozen=True, slots=True)
class Health:
    figures: FleetFigures | None  # None when no thread could be tallied
    lag: IndexLag | None  # None when there is no index (the command line without a dashboard database)
    checks: list[Check]
    problems: list[StoreProblem] = field(default_factory=list)
    store_bytes: Mapping[str, int] = field(default_factory=dict)  # store_bytes

    @property
    def alerts(self) -> list[Alert]:
        figures, lag = self.figures, self.lag
        over = figures.over_fill if figures else 0
        breaker = figures.breaker_open if figures else 0
        recompacting = figures.recompacting if figures else 0
        failing = [c for c in self.checks if not c.ok]
        lag_s = lag.lag_s if lag else 0.0
        return [
            Alert("MycelMemoryStoreDown", len(failing), bool(failing), "a store does not answer"),
            Alert(
                "MycelMemoryThreadNearLimit",
                over,
                over > 0,
                f"threads over {FILL_ALERT:.0%} of their context window",
            ),
            Alert(
                "MycelMemoryBreakerOpen", breaker, breaker > 0, "threads with dev's compaction breaker open"
            ),
            Alert(
                "MycelMemoryRecompactingEveryCall",
                recompacting,
                recompacting > 0,
                "threads Mycel main compacts again at every call",
            ),
            Alert(
                "MycelMemoryIndexLagging",
                lag_s,
                lag_s > INDEX_LAG_ALERT_S,
                f"the fleet index behind the store by more than {INDEX_LAG_ALERT_S:,.0f} s",
            ),
        ]

    @property
    def firing(self) -> bool:
        return any(a.firing for a in self.alerts)


def health_of(
    reader: MycelReader, index: FleetIndexStore | None, *, timeout_s: float = PROBE_TIMEOUT_S
) -> Health:
    """The command line's Health: the stores probed, then the figures from the dashboard's fleet index
    when it holds a complete pass (as /metrics has them), else computed from the stores thread by thread.
    It never looks or builds: the index is measured as it stands (its lag says how far behind)."""
    checks = store_checks(reader.locations, timeout_s=timeout_s)
    problems: list[StoreProblem] = []
    if not all(c.ok for c in checks):
        return Health(None, None, checks, problems)
    lag, figures = None, None
    if index is None:
        checks.append(index_check(None))
    else:
        lag = index_lag(reader, index, problems)
        checks.append(index_check(lag))
        if lag.complete:
            groups, usage = index_groups(index, store_name(reader), active_since=active_from())
            figures = figures_of(groups, *cost_of_usage(usage, pricing_of(reader).book))
    if figures is None:
        figures = figures_of(in_memory_groups(reader, problems, active_since=active_from()))
    return Health(figures, lag, checks, problems, store_bytes(reader, problems))


def figures_json(figures: FleetFigures) -> dict[str, Any]:
    return {
        "threads": [
            {"layout": layout, "model": model, "threads": n}
            for (layout, model), n in sorted(figures.threads.items())
        ],
        "flagged": [
            {"flag": flag, "layout": layout, "threads": n}
            for (flag, layout), n in sorted(figures.flagged.items())
        ],
        "fill": _fills_json(figures.fill),
        "bytes_on_disk": dict(sorted(figures.bytes_on_disk.items())),
        "summaries": dict(sorted(figures.summaries.items())),
        "states": [
            {"state": state, "layout": layout, "threads": n}
            for (state, layout), n in sorted(figures.states.items())
        ],
        "total_threads": figures.total_threads,
        "active_threads": figures.active,
        "over_fill": figures.over_fill,
        "breaker_open": figures.breaker_open,
        # From the threads' records of model calls (the index's record pass): as of `records_pending`.
        "records": [
            {"layout": layout, "model": model, **_record_json(sums)}
            for (layout, model), sums in sorted(figures.records.items())
        ],
        "fill_sent": _fills_json(figures.fill_sent),
        "cost": [
            {"model": model, "calls": calls, "cost_usd": usd(cost)}
            for model, (calls, cost) in sorted(figures.cost.items())
        ],
        "cost_today": [
            {"model": model, "calls": calls, "cost_usd": usd(cost)}
            for model, (calls, cost) in sorted(figures.cost_today.items())
        ],
        "records_pending": figures.records_pending,
        "recompacting": figures.recompacting,
        "summaries_not_stored": figures.not_stored,
        "over_fill_sent": figures.over_fill_sent,
    }


def _fills_json(fills: Mapping[str, ModelFill]) -> list[dict[str, Any]]:
    return [
        {
            "model": model,
            "known": f.known,
            "sum": f.total,
            "at_most": dict(zip((str(b) for b in FILL_BUCKETS), f.at_most, strict=True)),
            "over_alert": f.over_alert,
        }
        for model, f in sorted(fills.items())
    ]


def _record_json(sums: RecordSums) -> dict[str, Any]:
    return {
        "threads": sums.threads,
        "current": sums.current,
        "recompacting": sums.recompacting,
        "summaries_not_stored": sums.not_stored,
        "calls": sums.calls,
        "calls_without_usage": sums.calls_without_usage,
        "compactions": sums.compactions,
        "trimmed_results": sums.trimmed_results,
        "provider_input_tokens": sums.provider_tokens,
        "estimated_sent_tokens": sums.estimated_tokens,
    }


def lag_json(lag: IndexLag) -> dict[str, Any]:
    return {
        "built": lag.built,
        "complete": lag.complete,
        "indexed": lag.indexed,
        "pending": lag.pending,
        "lag_seconds": lag.lag_s,
        "age_seconds": lag.age_s,
        "error": lag.error,
    }


def health_json(health: Health) -> dict[str, Any]:
    """`mycel-memory health --json`: the checks, the figures behind the alerts, and which fire."""
    return {
        "ready": ready(health.checks),
        "firing": [a.name for a in health.alerts if a.firing],
        "alerts": [
            {"name": a.name, "count": a.count, "firing": a.firing, "says": a.says} for a in health.alerts
        ],
        "checks": checks_json(health.checks, with_messages=True),
        "index": lag_json(health.lag) if health.lag else None,
        "figures": figures_json(health.figures) if health.figures else None,
        "store_bytes": dict(sorted(health.store_bytes.items())),
        "problems": [p.message for p in health.problems],
    }

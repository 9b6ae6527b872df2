"""/metrics (issue 29) on the real sample home, through Django's test client: parsed with prometheus-client's
own parser, every metric of memory_core/app/metrics.METRICS is there, labels are bounded, and every value
equals the same figure of `mycel-memory health --json` and `threads --json` (one truth). The SQL tallies
equal the facts tallied in Python; the access rule (token of scope metrics, loopback) holds."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from prometheus_client.parser import text_string_to_metric_families

from memory_core.app.cost import pricing_of
from memory_core.app.fleet_index import Freshness, IndexState, index_rows, store_name
from memory_core.app.health import (
    FILL_BUCKETS,
    MODEL_LABELS,
    OTHER_MODELS,
    GroupTally,
    IndexLag,
    cost_of_usage,
    figures_of,
    lag_after_look,
    model_label,
    tally,
    usage_tally,
)
from memory_core.app.metrics import METRICS
from memory_core.economics.cost import usd
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.api.tokens import create_token
from mycel_dashboard.models import ApiToken, FleetThread
from mycel_dashboard.monitoring.tallies import DashboardFleetTallies
from mycel_dashboard.web.fleet_index import DashboardFleetIndex
from tests.support.cli import run_cli

Samples = dict[str, list[tuple[dict[str, str], float]]]


def scrape(client, **extra: str) -> Samples:
    response = client.get("/metrics", **extra)
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    found: Samples = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    hits = [v for found, v in samples[name] if all(found.get(k) == w for k, w in labels.items())]
    assert len(hits) == 1, (name, labels, samples.get(name))
    return hits[0]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    """`mycel-memory ARGV --json` with the dashboard's fleet index, as the console script opens it."""
    code, out, err = run_cli(capsys, *argv, fleet_index=DashboardFleetIndex)
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.mark.django_db(transaction=True)
def test_metrics_equal_the_json_figures(client, sample_home: Path, settings, capsys) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    samples = scrape(client)

    # Every metric the module documents is exported, with its HELP (the parser keeps only documented ones).
    exported = {name.removesuffix("_bucket").removesuffix("_count").removesuffix("_sum") for name in samples}
    assert set(METRICS) <= exported, set(METRICS) - exported

    code, threads = cli(capsys, "threads", "--json")
    assert code == 0
    thread_ids = {t["thread_id"] for t in threads}  # type: ignore[attr-defined]
    # Bounded labels: never a thread id; at most MODEL_LABELS models and "other".
    for name, found in samples.items():
        if name.startswith("mycel_memory_"):
            for labels, _ in found:
                assert not thread_ids & set(labels.values()), (name, labels)
    models = {labels["model"] for labels, _ in samples["mycel_memory_threads"]}
    assert len(models) <= MODEL_LABELS + 1

    # One truth with threads --json: threads by (layout, model), bytes and summaries by layout.
    by_group = Counter((t["layout"], model_label(t["model"])) for t in threads)  # type: ignore[attr-defined]
    assert {(lb["layout"], lb["model"]): v for lb, v in samples["mycel_memory_threads"]} == by_group
    size, summaries = Counter[str](), Counter[str]()
    for t in threads:  # type: ignore[attr-defined]
        size[t["layout"]] += t["bytes_on_disk"]
        summaries[t["layout"]] += t["summaries"]
    assert {lb["layout"]: v for lb, v in samples["mycel_memory_checkpoint_bytes"]} == size
    assert {lb["layout"]: v for lb, v in samples["mycel_memory_summaries"]} == summaries

    # One truth with health --json (the same index, tallied in Python by the command line).
    code, health = cli(capsys, "health", "--json")
    assert isinstance(health, dict)
    figures = health["figures"]
    assert code == (1 if health["firing"] else 0)
    assert figures["total_threads"] == len(threads) == sum(v for _, v in samples["mycel_memory_threads"])
    for row in figures["flagged"]:
        assert (
            value(samples, "mycel_memory_threads_flagged", flag=row["flag"], layout=row["layout"])
            == row["threads"]
        )
    for row in figures["fill"]:
        model = row["model"]
        assert value(samples, "mycel_memory_threads_over_fill", model=model) == row["over_alert"]
        assert value(samples, "mycel_memory_fill_ratio_count", model=model) == row["known"]
        assert value(samples, "mycel_memory_fill_ratio_sum", model=model) == pytest.approx(row["sum"])
        for bound in FILL_BUCKETS:
            assert (
                value(samples, "mycel_memory_fill_ratio_bucket", model=model, le=str(bound))
                == row["at_most"][str(bound)]
            )
    assert sum(v for _, v in samples["mycel_memory_threads_over_fill"]) == figures["over_fill"]
    # Threads by state: one truth with health --json, a partition of each layout's threads (the sample
    # home's are all older than the active window, and its registry-only rows have no checkpoint).
    for row in figures["states"]:
        assert (
            value(samples, "mycel_memory_threads_by_state", state=row["state"], layout=row["layout"])
            == row["threads"]
        )
    per_layout = Counter[str]()
    for t in threads:  # type: ignore[attr-defined]
        per_layout[t["layout"]] += 1
    for layout, n in per_layout.items():
        assert sum(v for lb, v in samples["mycel_memory_threads_by_state"] if lb["layout"] == layout) == n
    headless = sum(1 for t in threads if t["head_checkpoint_id"] is None)  # type: ignore[attr-defined]
    assert sum(v for lb, v in samples["mycel_memory_threads_by_state"] if lb["state"] == "empty") == headless
    assert (
        figures["active_threads"]
        == 0
        == sum(v for lb, v in samples["mycel_memory_threads_by_state"] if lb["state"] == "active")
    )
    index = health["index"]
    assert value(samples, "mycel_memory_index_complete") == 1.0 == float(index["complete"])
    assert value(samples, "mycel_memory_index_threads_indexed") == index["indexed"] == len(threads)
    assert value(samples, "mycel_memory_index_threads_pending") == index["pending"] == 0
    assert value(samples, "mycel_memory_ready") == 1.0
    # The sample home has a thread over 90 % of its window: the near-limit alert fires, exit status 1.
    assert figures["over_fill"] >= 1 and "MycelMemoryThreadNearLimit" in health["firing"] and code == 1

    # The record figures: one truth with health --json, and with each thread's own record (thread and
    # calls --json), tallied here by (layout, model).
    assert value(samples, "mycel_memory_records_pending") == figures["records_pending"] == 0
    expected: dict[tuple[str, str], Counter[str]] = {}
    sent: dict[str, list[float]] = {}
    for t in threads:  # type: ignore[attr-defined]
        if t["head_checkpoint_id"] is None:
            continue
        _, detail = cli(capsys, "thread", t["thread_id"], "--json")
        _, calls = cli(capsys, "calls", t["thread_id"], "--json")
        assert isinstance(detail, dict) and isinstance(calls, list)
        group = expected.setdefault((t["layout"], model_label(t["model"])), Counter())
        group["threads"] += 1
        group["recompacting"] += bool(detail["recompacts_every_call"])
        group["summaries_not_stored"] += bool(detail["compactions_not_stored"])
        group["calls"] += len(calls)
        group["calls_without_usage"] += sum(
            1 for c in calls if c["provider_input_tokens"] is None and not c.get("refused", False)
        )  # a refused request got no answer to carry usage
        group["compactions"] += sum(1 for c in calls if c["compacted"])
        group["trimmed_results"] += (calls[-1]["soft_trimmed"] + calls[-1]["hard_cleared"]) if calls else 0
        measured = [c for c in calls if c["provider_input_tokens"] is not None]
        group["provider_input_tokens"] += sum(c["provider_input_tokens"] for c in measured)
        group["estimated_sent_tokens"] += sum(c["estimated_tokens"]["sent"] for c in measured)
        if calls:
            last = calls[-1]
            sent.setdefault(model_label(t["model"]), []).append(
                last["estimated_tokens"]["sent"] / last["context_limit"]
            )
    assert sum(g["recompacting"] for g in expected.values()) >= 1  # the compacting sample thread
    metric_of = {
        "threads": "mycel_memory_records",
        "recompacting": "mycel_memory_threads_recompacting",
        "summaries_not_stored": "mycel_memory_threads_summaries_not_stored",
        "calls": "mycel_memory_calls",
        "calls_without_usage": "mycel_memory_calls_without_usage",
        "compactions": "mycel_memory_compactions",
        "trimmed_results": "mycel_memory_trimmed_results",
        "provider_input_tokens": "mycel_memory_provider_input_tokens",
        "estimated_sent_tokens": "mycel_memory_estimated_sent_tokens",
    }
    by_json = {(r["layout"], r["model"]): r for r in figures["records"]}
    assert by_json.keys() == expected.keys()
    for (layout, model), counts in expected.items():
        for key, metric in metric_of.items():
            assert (
                value(samples, metric, layout=layout, model=model)
                == by_json[(layout, model)][key]
                == counts[key]
            ), (key, layout, model)
    for row in figures["fill_sent"]:
        fills = sent[row["model"]]
        assert (
            value(samples, "mycel_memory_fill_sent_ratio_count", model=row["model"])
            == row["known"]
            == len(fills)
        )
        assert row["sum"] == pytest.approx(sum(fills), abs=1e-6)  # rounded to 6 places, as "fill"
        over = sum(1 for f in fills if f > 0.9)
        assert (
            value(samples, "mycel_memory_threads_over_fill_sent", model=row["model"])
            == row["over_alert"]
            == over
        )
    assert figures["recompacting"] >= 1 and "MycelMemoryRecompactingEveryCall" in health["firing"]

    # Cost per model: one truth with `mycel-memory cost --json` (the Cost page's report, every period).
    _, cost = cli(capsys, "cost", "--json")
    assert isinstance(cost, dict)
    by_model = {m["model"]: m for m in cost["models"]}
    assert by_model and {row["model"] for row in figures["cost"]} == set(by_model)
    for row in figures["cost"]:
        line = by_model[row["model"]]
        assert row["calls"] == line["calls"] == value(samples, "mycel_memory_cost_calls", model=row["model"])
        assert row["cost_usd"] == line["cost_usd"]
        if line["cost_usd"] is not None:
            assert value(samples, "mycel_memory_cost_usd", model=row["model"]) == pytest.approx(
                float(line["cost_usd"])
            )
    assert any(line["cost_usd"] for line in by_model.values())  # the sample home's pricing cache prices some

    # The stores' files: one truth with health --json, and each the file's size with its -wal on disk.
    files = {lb["store"]: v for lb, v in samples["mycel_memory_store_bytes"]}
    assert files == health["store_bytes"] and "main" in files
    for role, path in resolve_locations().databases().items():
        if role.value in files:
            wal = path.with_name(path.name + "-wal")
            assert files[role.value] == path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


@pytest.mark.django_db(transaction=True)
def test_sql_tallies_equal_the_facts_tallied_in_python(client, sample_home: Path, settings, capsys) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    scrape(client)  # builds the small fleet's index
    reader = MycelReader(resolve_locations())
    store = store_name(reader)
    ids = list(FleetThread.objects.filter(store=store).values_list("thread_id", flat=True))
    assert ids
    threads = index_rows(DashboardFleetIndex(), store, ids)
    # A moment between the threads' last activities: some count as active, some as idle.
    times = sorted(t.row.updated_at for t in threads if t.row.updated_at is not None)
    since = times[len(times) // 2]
    book = pricing_of(reader).book
    python = figures_of(tally(threads, active_since=since), *cost_of_usage(usage_tally(threads), book))
    sql = figures_of(
        DashboardFleetTallies().tallies(store, active_since=since),
        *cost_of_usage(DashboardFleetTallies().usage(store), book),
    )
    assert sql.states == python.states
    states = Counter[str]()
    for (state, _), n in sql.states.items():
        states[state] += n
    assert states["active"] == sum(
        1 for t in threads if t.row.head_checkpoint_id and t.row.updated_at >= since
    )
    assert states["active"] >= 1 and states["idle"] >= 1 and sum(states.values()) == len(threads)
    assert sql.cost == python.cost and sql.cost
    # A day's cost per model (the metric of today's) is the Cost report's over that one day.
    usage = DashboardFleetTallies().usage(store)
    days = sorted({g.day for g in usage if g.day is not None})
    assert days
    for day in (days[0], days[-1]):
        _, on_day = cost_of_usage(usage, book, now=datetime.combine(day, datetime.min.time(), UTC))
        _, report = cli(capsys, "cost", "--since", day.isoformat(), "--until", day.isoformat(), "--json")
        assert isinstance(report, dict) and report["models"]
        assert {c.model: (c.calls, usd(c.cost_usd)) for c in on_day} == {
            m["model"]: (m["calls"], m["cost_usd"]) for m in report["models"]
        }
    assert sql.threads == python.threads
    assert sql.flagged == python.flagged
    assert sql.bytes_on_disk == python.bytes_on_disk and sql.summaries == python.summaries
    assert sql.fill.keys() == python.fill.keys()
    for model, found in sql.fill.items():
        assert (found.known, found.at_most) == (python.fill[model].known, python.fill[model].at_most)
        assert found.total == pytest.approx(python.fill[model].total)
    # The records' sums (the scrape read every record of this small fleet).
    assert sql.records.keys() == python.records.keys() and sql.records
    for key, found in sql.records.items():
        assert replace(found, fill_sent_sum=0.0) == replace(python.records[key], fill_sent_sum=0.0), key
        assert found.fill_sent_sum == pytest.approx(python.records[key].fill_sent_sum)
    assert sum(r.threads for r in sql.records.values()) == sum(1 for t in ids) - _headless(store)


def test_models_past_the_cap_are_summed_as_other() -> None:
    groups = [
        GroupTally(f"model-{i:02}", "main", 100 - i, {}, 1, 0.5, (1, 1, 1, 1, 1), 10, 1)
        for i in range(MODEL_LABELS + 5)
    ]
    found = figures_of(groups)
    models = {model for _, model in found.threads}
    assert len(models) == MODEL_LABELS + 1 and OTHER_MODELS in models
    assert found.threads[("main", OTHER_MODELS)] == sum(
        100 - i for i in range(MODEL_LABELS, MODEL_LABELS + 5)
    )
    assert found.total_threads == sum(g.threads for g in groups)
    assert found.fill[OTHER_MODELS].known == 5


@pytest.mark.django_db(transaction=True)
def test_metrics_access_by_token_scope_or_loopback(client, sample_home: Path, settings) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    user = User.objects.create_user("scraper", password="scraper-pass-123")
    _, metrics_token = create_token(user, ApiToken.Scope.METRICS)
    _, viewer_token = create_token(user)
    remote = {"REMOTE_ADDR": "10.1.2.3"}

    settings.DASHBOARD_METRICS_ACCESS = "token-or-loopback"
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", **remote).status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}", **remote).status_code == 200

    settings.DASHBOARD_METRICS_ACCESS = "token"
    assert client.get("/metrics").status_code == 403  # loopback alone is not enough
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {viewer_token}").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}").status_code == 200
    # A metrics token reads /metrics only, never the API.
    assert client.get("/api/threads", HTTP_AUTHORIZATION=f"Bearer {metrics_token}").status_code == 401

    settings.DASHBOARD_METRICS_ACCESS = "loopback"
    assert client.get("/metrics").status_code == 200
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {metrics_token}", **remote).status_code == 403

    settings.DASHBOARD_METRICS_ACCESS = "everyone"  # a typo refuses, never opens
    refused = client.get("/metrics")
    assert refused.status_code == 403 and b"DASHBOARD_METRICS_ACCESS" in refused.content


def _headless(store: str) -> int:
    return FleetThread.objects.filter(store=store, head_checkpoint_id__isnull=True).count()


def test_a_look_that_left_threads_behind_does_not_stand_for_the_lag() -> None:
    # A scrape reuses its look's answer only when the look caught every moved thread up.
    done = IndexState("s", "v", complete=True, total=7, finished_at=datetime(2026, 12, 5, tzinfo=UTC))
    now = datetime(2026, 12, 5, 0, 1, tzinfo=UTC)
    caught = lag_after_look(Freshness(done, ready=True, moved=3, caught_up=3), now=now)
    assert caught == IndexLag(True, True, 7, 0, 0.0, 60.0, "")
    assert lag_after_look(Freshness(done, ready=True, moved=300, behind=300), now=now) is None
    assert lag_after_look(Freshness(None, ready=False, needs_builder=True), now=now) is None
    building = IndexState("s", "v", complete=False, total=7)
    assert lag_after_look(Freshness(building, ready=True), now=now) is None

"""The Context tabs from the fleet index (memory_core/app/kept_reports.py) over Mycel's sample home: once the
record pass has kept every thread's reductions and the builder has summed them, each tab reads that sum,
and every figure equals `mycel-memory … --json` (which walks the fleet), cut as a page shows it. A thread
that moves leaves the sum behind, and the page says so until the builder has read and summed it again."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from memory_core.app import calibration_pages, tool_pages, tools
from memory_core.app.fleet_index import BUILD_ROW_CAP, build, store_name
from memory_core.app.fleet_records import build_records
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.models import FleetReport
from mycel_dashboard.web import fleet_index as web_index
from mycel_dashboard.web.fleet_index import DashboardFleetIndex, builder_reader, sum_reports
from tests.core.store_builders import build_thread
from tests.support.calibration_cut import page_calibration
from tests.support.cli import cli_json, run_cli
from tests.support.tools_cut import page_tools

# page, its query, the context key of its document, the CLI's arguments, what a page shows of the CLI's
PAGES: list[tuple[str, dict[str, str], str, list[str], Callable[[dict[str, Any]], dict[str, Any]]]] = [
    ("context_calibration", {}, "calibration", ["calibration"], page_calibration),
    (
        "context_calibration",
        {"model": "claude-sonnet-4-5-20250929"},
        "calibration",
        ["calibration", "--model", "claude-sonnet-4-5-20250929"],
        page_calibration,
    ),
    ("context_tools", {"by": "day"}, "pressure", ["tools"], page_tools),
    ("context_cache", {}, "fleet", ["cache", "--all"], lambda document: document),
]
KEPT_NOTE = ("kept_as_of", "kept_behind_threads", "kept_summing_again")


def _catch_up() -> int | None:
    """The builder's work: the index, the records it lacks, the reports' sums."""
    locations = resolve_locations()
    index = DashboardFleetIndex()
    build(lambda cap: builder_reader(locations, cap), index)
    assert build_records(builder_reader(locations, BUILD_ROW_CAP), index) is not None
    return sum_reports(index, store_name(MycelReader(locations)))


def _comparable(document: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in document.items() if k not in KEPT_NOTE}
    if out.get("pricing"):
        out["pricing"] = {**out["pricing"]}
    return out


def _as_shown(cut: Callable[[dict[str, Any]], dict[str, Any]], cli: dict[str, Any]) -> dict[str, Any]:
    return {
        **cut(cli),
        "analysed_threads": cli["analysed_threads"],
        "pending_threads": cli["pending_threads"],
    }


@pytest.fixture
def indexed_home(sample_home: Path, settings: Any) -> Path:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False  # the test is the builder
    assert _catch_up() == 3  # the three reports summed
    return sample_home


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("page", "query", "key", "args", "cut"), PAGES)
def test_each_tab_reads_the_kept_sum_and_it_equals_the_walk(
    viewer_client,
    indexed_home: Path,
    capsys,
    page: str,
    query: dict[str, str],
    key: str,
    args: list[str],
    cut,
) -> None:
    response = viewer_client.get(reverse(page), query)
    assert response.status_code == 200
    document = response.context[key]
    assert document["kept_as_of"] is not None and document["kept_behind_threads"] == 0
    assert document["kept_summing_again"] is False
    body = html.unescape(response.content.decode())
    assert 'id="fleet-kept"' in body and "From the fleet index:" in body
    assert 'id="fleet-kept-behind"' not in body and 'id="fleet-pending"' not in body
    assert _comparable(document) == _as_shown(cut, cli_json(capsys, *args, "--json"))
    # `--page` prints the tab's very document, from the same sum, its age included.
    code, out, err = run_cli(capsys, *args, "--page", fleet_index=DashboardFleetIndex)
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(document))


@pytest.mark.django_db(transaction=True)
def test_a_thread_that_moves_leaves_the_sum_behind_until_the_builder_catches_up(
    viewer_client, indexed_home: Path, capsys
) -> None:
    before = viewer_client.get(reverse("context_tools")).context["pressure"]
    build_thread(indexed_home / "leon.db", "a-new-thread", turns=2, parallel=2, tool_chars=3000)

    response = viewer_client.get(reverse("context_tools"))
    assert response.status_code == 200
    document = response.context["pressure"]
    # The look caught up the new head; its record is the builder's: the figures stay as summed, and say so.
    assert document["kept_behind_threads"] == 1
    assert {k: v for k, v in document.items() if k not in KEPT_NOTE} == {
        k: v for k, v in before.items() if k not in KEPT_NOTE
    }
    body = html.unescape(response.content.decode())
    assert "figures are as of before 1 thread that moved since" in body
    walked = cli_json(capsys, "tools", "--json")
    assert walked["threads"] == before["threads"] + 1

    assert _catch_up() == 3
    document = viewer_client.get(reverse("context_tools")).context["pressure"]
    assert document["kept_behind_threads"] == 0 and document["threads"] == before["threads"] + 1
    assert _comparable(document) == _as_shown(page_tools, walked)


@pytest.mark.django_db(transaction=True)
def test_long_lists_are_cut_for_the_page_with_their_lengths_kept(
    viewer_client, sample_home: Path, settings: Any, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    monkeypatch.setattr(calibration_pages, "THREAD_ROWS", 2)
    monkeypatch.setattr(calibration_pages, "POINTS_SHOWN", 3)
    monkeypatch.setattr(tool_pages, "RE_REQUESTS_SHOWN", 0)
    monkeypatch.setattr(tool_pages, "TOOL_THREADS_SHOWN", 1)
    monkeypatch.setattr(tool_pages, "THREAD_TOTALS_SHOWN", 2)
    assert _catch_up() == 3
    cli = cli_json(capsys, "calibration", "--json")
    page = viewer_client.get(reverse("context_calibration")).context["calibration"]
    rows = sum(len(t["models"]) for t in cli["threads"])
    assert page["thread_rows_count"] == rows > 2 and len(page["threads"]) <= 2
    for shown, whole in zip(page["models"], cli["models"], strict=True):
        assert shown["points"] == whole["points"][:3] and shown["points_count"] == len(whole["points"])
    body = html.unescape(viewer_client.get(reverse("context_calibration")).content.decode())
    assert f"of {rows} (every one is in mycel-memory calibration --json)" in body.replace(
        "<code>", ""
    ).replace("</code>", "")

    tools_cli = cli_json(capsys, "tools", "--json")
    pressure = viewer_client.get(reverse("context_tools")).context["pressure"]
    assert pressure["re_requests"] == [] and pressure["re_requests_count"] == len(tools_cli["re_requests"])
    assert pressure["thread_totals"] == tools_cli["thread_totals"][:2]
    assert pressure["thread_totals_count"] == len(tools_cli["thread_totals"]) > 2
    for shown, whole in zip(pressure["tools"], tools_cli["tools"], strict=True):
        assert shown["threads"] == whole["threads"][:1] and shown["threads_count"] == len(whole["threads"])


def test_page_without_an_index_walks_and_cache_page_needs_all(sample_home: Path, capsys) -> None:
    code, out, err = run_cli(capsys, "tools", "--page")
    assert code == 0, err
    page = json.loads(out)
    assert "kept_as_of" not in page and page == _as_shown(page_tools, cli_json(capsys, "tools", "--json"))
    code, out, err = run_cli(capsys, "cache", "--all", "--threshold", "0.5", "--page")
    assert code != 0 and "--page prints the tab's fleet view" in err


@pytest.mark.django_db(transaction=True)
def test_a_long_record_pass_is_summed_as_it_goes(
    sample_home: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The builder's thread sums the Context reports every SUM_EVERY records it reads, so a record pass of
    # hours shows the newest threads' figures early (each sum says how many threads are behind).
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = True
    monkeypatch.setattr(web_index, "SUM_EVERY", 2)
    locations = resolve_locations()
    store = store_name(MycelReader(locations))
    analysed: list[int] = []
    summing = web_index.sum_reports

    def counted(index: DashboardFleetIndex, name: str) -> int | None:
        summed = summing(index, name)
        analysed.append(FleetReport.objects.get(store=name, report=tools.KEPT.name).analysed)
        return summed

    monkeypatch.setattr(web_index, "sum_reports", counted)
    assert web_index.start_builder(locations, store)
    web_index.wait_for_builders(timeout_s=120)
    threads = _walked_threads()
    assert analysed[:3] == [2, 4, 6] and analysed[-1] == threads


def _walked_threads() -> int:
    """Threads with a model call record, as the walk counts them."""
    return tools.fleet_tool_pressure(MycelReader(resolve_locations())).progress.analysed

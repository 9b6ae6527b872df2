"""The retention page: the CLI's figures, refusals on the page, and an export only operators get, audited."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from django.urls import reverse

from mycel_dashboard.cli import main
from mycel_dashboard.models import AuditEntry
from tests.core.store_builders import file_hashes
from tests.support.cli import cli_json


def _page_figures(body: str) -> tuple[int, dict[str, int]]:
    total = re.search(r'id="retention-frees" data-bytes="(\d+)"', body)
    assert total, "no total on the page"
    rows = re.findall(r'<tr data-thread="([^"]*)">.*?data-frees="(\d+)"', body, re.S)
    return int(total.group(1)), {html.unescape(t): int(b) for t, b in rows}


@pytest.mark.parametrize(
    ("query", "flags"),
    [
        ({"keep_last": "2"}, ("--keep-last", "2")),
        ({"heads_only": "on"}, ("--heads-only",)),
        ({"idle_days": "0", "keep_last": "5"}, ("--idle-days", "0", "--keep-last", "5")),
    ],
)
def test_the_page_shows_the_clis_figures(viewer_client, sample_home: Path, capsys, query, flags) -> None:
    data = cli_json(capsys, "retention", *flags, "--json")
    response = viewer_client.get(reverse("retention"), query)
    assert response.status_code == 200
    body = response.content.decode()
    total, rows = _page_figures(body)
    assert total == data["totals"]["frees_bytes"] > 0
    assert rows == {t["thread_id"]: t["frees_bytes"] for t in data["threads"] if t["drops"]}
    assert "Nothing is deleted here" in body and "with Mycel stopped" in body
    assert "Always kept, whatever the policy" in body
    for t in data["threads"]:
        assert {k["reason"] for k in t["keeps"]} >= {"head"}


def test_rows_sort_by_what_they_free(viewer_client, sample_home: Path) -> None:
    down = _page_figures(viewer_client.get(reverse("retention"), {"heads_only": "on"}).content.decode())[1]
    up = _page_figures(
        viewer_client.get(reverse("retention"), {"heads_only": "on", "sort": "frees"}).content.decode()
    )[1]
    assert list(down.values()) == sorted(down.values(), reverse=True)
    assert list(up.values()) == sorted(up.values())


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"keep_last": "0"}, "keep-last must be 1 or more"),
        ({"idle_days": "-2"}, "idle-days must be 0 or more"),
        ({"keep_last": "<script>alert(1)</script>"}, "keep-last must be a whole number"),
    ],
)
def test_invalid_values_are_a_message_on_the_page(viewer_client, sample_home: Path, query, message) -> None:
    response = viewer_client.get(reverse("retention"), query)
    assert response.status_code == 200
    body = response.content.decode()
    assert message in html.unescape(body)
    assert "<script>alert(1)" not in body
    assert 'id="retention-frees"' not in body


def test_a_viewer_sees_no_export_and_a_forced_post_is_refused_and_audited(
    viewer_client, sample_home: Path
) -> None:
    page = viewer_client.get(reverse("retention"), {"keep_last": "2"}).content.decode()
    assert 'id="retention-export-form"' not in page
    assert "Only operators may export" in page
    before = file_hashes(sample_home)
    response = viewer_client.post(reverse("retention_export"), {"keep_last": "2"})
    assert response.status_code == 403
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.actor) == ("retention_export", "refused", "viewer")
    assert entry.after == {"asked": {"keep_last": "2", "heads_only": "", "idle_days": ""}}
    assert file_hashes(sample_home) == before


def test_an_operator_downloads_the_script_and_the_export_is_audited(
    operator_client, sample_home: Path, capsys
) -> None:
    data = cli_json(capsys, "retention", "--keep-last", "3", "--json")
    before = file_hashes(sample_home)
    response = operator_client.post(reverse("retention_export"), {"keep_last": "3", "idle_days": ""})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/sql")
    assert re.fullmatch(
        r'attachment; filename="mycel-retention-\d{8}-\d{6}\.sql"', response["Content-Disposition"]
    )
    script = response.content.decode()
    assert script.startswith("-- Mycel retention plan")
    assert f"-- Frees {data['totals']['frees_bytes']} bytes" in script
    assert "BEGIN IMMEDIATE;" in script and "VACUUM;" in script
    assert file_hashes(sample_home) == before  # exporting deletes nothing
    entry = AuditEntry.objects.get()
    assert (entry.action, entry.result, entry.actor) == ("retention_export", "applied", "operator")
    assert entry.after["policy"] == {"keep_last": 3, "heads_only": False, "idle_days": None}
    assert entry.after["totals"] == data["totals"]
    assert {t["thread_id"]: t["drops"] for t in entry.after["threads"]} == {
        t["thread_id"]: len(t["drops"]) for t in data["threads"] if t["drops"]
    }
    assert "sk-" not in json.dumps(entry.after)
    # The audit screen lists it (the filter's option names the action too: look in the rows).
    audit = operator_client.get(reverse("audit"), {"action": "retention_export"}).content.decode()
    assert re.search(r"<td>Export a retention script</td>", audit)


def test_an_invalid_export_is_refused_and_audited(operator_client, sample_home: Path) -> None:
    response = operator_client.post(reverse("retention_export"), {"keep_last": "0"})
    assert response.status_code == 400
    assert "keep-last must be 1 or more" in response.content.decode()
    entry = AuditEntry.objects.get()
    assert entry.result == "refused" and "keep-last" in entry.message


def test_the_cli_export_is_audited_as_cli_user(
    db, sample_home: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setenv("USER", "ops")
    target = tmp_path / "plan.sql"
    assert main(["retention", "--heads-only", "--export", str(target)]) == 0
    assert target.read_text().startswith("-- Mycel retention plan")
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.action, entry.result, entry.target) == (
        "cli:ops",
        "retention_export",
        "applied",
        str(target.resolve()),
    )
    assert entry.after["policy"]["heads_only"] is True

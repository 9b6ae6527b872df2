"""The Tool-output pressure screen over Mycel's sample home and a hand-built home: the very figures
`mycel-memory tools --json` prints, each heatmap cell linked to the calls behind it."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from tests.core.test_tool_pressure import SAME_ARGS, TRIM_AND_CLEAR, build_scripted
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at
from tests.support.tools_cut import page_tools


def _figure(body: str) -> dict:
    start = body.index('<script id="tools-figure" type="application/json">') + len(
        '<script id="tools-figure" type="application/json">'
    )
    return json.loads(body[start : body.index("</script>", start)])


@pytest.mark.parametrize("by", ["thread", "day"])
def test_page_shows_the_cli_figures(viewer_client, sample_home: Path, capsys, by: str) -> None:
    response = viewer_client.get(reverse("context_tools"), {"by": by})
    assert response.status_code == 200
    cli = cli_json(capsys, "tools", "--json")
    assert response.context["pressure"] == page_tools(cli)  # the CLI's very figures, cut as a page shows them
    body = response.content.decode()
    shown = dict(re.findall(r'data-tool="([^"]*)" data-sent-share="([^"]*)"', body))
    assert {html.unescape(k): float(v) for k, v in shown.items()} == {
        t["tool"]: t["sent_share"] for t in cli["tools"]
    }
    # The heatmap: one row per tool, one column per thread (or day), each cell the JSON's share.
    figure = _figure(body)["data"][0]
    assert figure["type"] == "heatmap" and figure["y"] == [t["tool"] for t in cli["tools"]]
    if by == "thread":
        assert len(figure["x"]) == len(cli["thread_totals"]) == 6
        column = [t["thread_id"] for t in cli["thread_totals"]]
        key, share = "threads", "thread_sent_share"
    else:
        assert figure["x"] == [d["day"] for d in cli["day_totals"]] == ["2026-11-30"]
        column = [d["day"] for d in cli["day_totals"]]
        key, share = "days", "day_sent_share"
    for r, tool in enumerate(cli["tools"]):
        for entry in tool[key]:
            c = column.index(entry["thread_id"] if by == "thread" else entry["day"])
            assert figure["z"][r][c] == round(entry[share], 4)
            assert figure["customdata"][r][c][3] == f"{entry['sent_chars']:,}"
    # Bash in the thread that trimmed: its cell opens the timeline filtered to Bash's changed results.
    bash = next(t for t in cli["tools"] if t["tool"] == "Bash")
    trimmed = next(t for t in bash["threads"] if t["trimmed"])
    url = (
        reverse("thread", args=[trimmed["thread_id"]]) + "?" + urlencode({"tool": "Bash", "show": "changed"})
    )
    assert html.escape(url) in body
    if by == "thread":
        r, c = 0, column.index(trimmed["thread_id"])
        assert figure["customdata"][r][c][2] == url


def test_a_re_request_links_the_call_pages_of_the_clear_and_the_ask(
    viewer_client, tmp_path, monkeypatch, capsys
) -> None:
    folder = tmp_path / "store"
    folder.mkdir()
    build_scripted(folder / "leon.db", "trim-and-clear", TRIM_AND_CLEAR)
    build_scripted(folder / "leon.db", "same-args", SAME_ARGS)
    point_env_at(monkeypatch, folder)
    response = viewer_client.get(reverse("context_tools"))
    assert response.status_code == 200
    cli = cli_json(capsys, "tools", "--json")
    assert response.context["pressure"] == page_tools(cli) and len(cli["re_requests"]) == 2
    body = response.content.decode()
    for ask in cli["re_requests"]:
        for number in (ask["cleared_call"], ask["asked_call"]):
            assert f'href="{reverse("call", args=[ask["thread_id"], number])}"' in body
    assert "re-read of the file" in body and "same arguments" in body


def test_a_bad_by_is_a_message_and_the_thread_heatmap(viewer_client, sample_home: Path) -> None:
    response = viewer_client.get(reverse("context_tools"), {"by": "<b>odd</b>"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Ignored by" in body and "<b>odd</b>" not in body and "&lt;b&gt;odd&lt;/b&gt;" in body
    assert response.context["by"] == "thread"


def test_no_mycel_data_is_a_page_not_an_error(viewer_client) -> None:
    response = viewer_client.get(reverse("context_tools"))
    assert response.status_code == 200
    assert "No tool result was sent" in response.content.decode() or response.context["problems"]

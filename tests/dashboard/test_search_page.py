"""The Search screen over Mycel's sample home plus planted threads: snippets with <mark>, everything else
escaped, links into the timeline, filters, bad input as a message, and the CLI's --json figures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.urls import reverse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.cli import main
from tests.dashboard.planting import plant_thread

SCRIPT = "<script>window.__pwned=1</script>"
KEY = "sk-live-PLANTEDsearchKEY0123456789"


@pytest.fixture
def planted(sample_home: Path, settings, monkeypatch: pytest.MonkeyPatch) -> Path:
    # The CLI and the page read the same index: the CLI's cache folder is the dashboard's facts folder.
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(settings.DASHBOARD_FACTS_DIR))
    plant_thread(
        sample_home / "leon.db",
        "m_search-1",
        [
            HumanMessage(content=f"find the walrus {SCRIPT} please", id="h"),
            AIMessage(
                content="",
                id="a",
                tool_calls=[
                    {"id": "c", "name": "Bash", "args": {"command": "grep walrus zoo.txt", "api_key": KEY}}
                ],
            ),
            ToolMessage(content=f"walrus found; token={KEY}", tool_call_id="c", name="Bash", id="t"),
        ],
    )
    return sample_home


def test_hits_are_marked_escaped_and_linked(viewer_client, planted: Path):
    response = viewer_client.get(reverse("search"), {"q": "walrus"})
    assert response.status_code == 200
    body = response.content.decode()
    assert SCRIPT not in body and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in body
    assert body.count("<mark>walrus</mark>") == 3
    base = reverse("thread", args=["m_search-1"])
    for index in (0, 1, 2):
        assert f'href="{base}#msg-{index}"' in body
    assert "Tool call" in body and "Tool result" in body and "<code>Bash</code>" in body


def test_the_page_shows_what_the_cli_prints(viewer_client, planted: Path, capsys):
    response = viewer_client.get(reverse("search"), {"q": "walrus", "tool": "Bash"})
    page = [(h.thread_id, h.index, "".join(p.text for p in h.pieces)) for h in response.context["hits"]]
    capsys.readouterr()
    assert main(["search", "walrus", "--tool", "Bash", "--json"]) == 0
    cli = [(r["thread_id"], r["index"], r["snippet"]) for r in json.loads(capsys.readouterr().out)]
    assert page == cli and len(page) == 2


def test_filters_narrow_the_hits(viewer_client, planted: Path):
    def threads(**query: str) -> list[tuple[str, int]]:
        response = viewer_client.get(reverse("search"), query)
        assert response.status_code == 200
        return [(h.thread_id, h.index) for h in response.context["hits"]]

    assert threads(q="walrus", tool="Read") == []
    assert sorted(threads(q="walrus", thread="m_search-1")) == [("m_search-1", i) for i in range(3)]
    assert threads(q="walrus", thread="no-such-thread") == []
    assert threads(q="walrus", since="2999-01-01") == []
    assert len(threads(q='"the walrus"')) == 1
    assert threads(q='"walrus the"') == []


def test_no_planted_key_is_found_or_shown(viewer_client, planted: Path):
    for probe in (KEY, "PLANTEDsearchKEY0123456789"):
        response = viewer_client.get(reverse("search"), {"q": probe})
        assert response.status_code == 200
        assert response.context["hits"] == []
    body = viewer_client.get(reverse("search"), {"q": "walrus"}).content.decode()
    assert KEY not in body and "PLANTEDsearchKEY" not in body


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"q": '"*"'}, "no words to search for"),
        ({"q": "walrus", "since": "yesterday"}, "Ignored since"),
        ({"q": "walrus", "since": "2026-02-01", "until": "2026-01-01"}, "Ignored until"),
        ({"q": "x" * 25_000}, "Ignored query"),
    ],
)
def test_bad_input_is_a_message(viewer_client, planted: Path, query: dict[str, str], message: str):
    response = viewer_client.get(reverse("search"), query)
    assert response.status_code == 200
    assert message in response.content.decode()


@pytest.mark.parametrize(
    "q", ['walrus" OR "x', "NEAR(walrus find)", "walrus*", "text:walrus", "\x00\x1b[31m walrus", "x" * 10_000]
)
def test_a_hostile_query_answers_200(viewer_client, planted: Path, q: str):
    response = viewer_client.get(reverse("search"), {"q": q})
    assert response.status_code == 200
    assert 'class="problem"' not in response.content.decode()


def test_no_query_shows_the_form_only(viewer_client, planted: Path):
    response = viewer_client.get(reverse("search"))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="search-form"' in body and 'id="search-empty"' in body and "search-hit" not in body


def test_htmx_gets_the_results_partial(viewer_client, planted: Path):
    response = viewer_client.get(reverse("search"), {"q": "walrus"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section id="search-results"')
    assert "HX-Request" in response["Vary"]


def test_an_unusable_index_is_a_message(viewer_client, planted: Path, settings, tmp_path: Path):
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where the folder should be")
    settings.DASHBOARD_FACTS_DIR = blocker
    response = viewer_client.get(reverse("search"), {"q": "walrus"})
    assert response.status_code == 200
    assert "search index" in response.content.decode()


def test_the_management_command_builds_the_index_the_page_uses(planted: Path, viewer_client):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("search_index", stdout=out)
    assert re.search(r"Indexed [\d,]+ threads, [\d,]+ documents", out.getvalue()), out.getvalue()
    response = viewer_client.get(reverse("search"), {"q": "walrus"})
    assert len(response.context["hits"]) == 3
    assert response.context["results"].refresh.threads_updated == 0  # built already: nothing left to do


def test_a_spent_budget_indexes_one_more_thread_per_search(viewer_client, planted: Path, settings):
    settings.DASHBOARD_FLEET_BUDGET_S = 0.0
    first = viewer_client.get(reverse("search"), {"q": "walrus"})
    assert first.status_code == 200
    refresh = first.context["results"].refresh
    total = refresh.threads_updated + refresh.threads_pending
    assert refresh.threads_updated == 1 and refresh.threads_pending == total - 1 > 0
    assert 'id="search-pending"' in first.content.decode()
    for _ in range(total - 1):
        last = viewer_client.get(reverse("search"), {"q": "walrus"})
    assert last.context["results"].refresh.threads_pending == 0
    assert 'id="search-pending"' not in last.content.decode()
    assert len(last.context["hits"]) == 3


def test_a_very_common_query_says_it_ranked_only_the_newest_matches(
    viewer_client, planted: Path, capsys, monkeypatch: pytest.MonkeyPatch
):
    from memory_core.stores.sqlite import search_index

    monkeypatch.setattr(search_index, "COMMON_MATCHES", 1)
    body = viewer_client.get(reverse("search"), {"q": "walrus"}).content.decode()
    notice = re.search(r'id="search-newest">([^<]+)<', body)
    assert notice is not None and "the best of the newest 1:" in notice.group(1)
    assert main(["search", "walrus", "--json"]) == 0
    out = capsys.readouterr()
    assert "note: More than 1 documents match" in out.err
    assert isinstance(json.loads(out.out), list)  # --json stays the list of hits

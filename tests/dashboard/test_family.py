"""Sub-agents in their family on the Threads list and the Thread page (agent_registry.db).

Checkpoints by LangGraph's real SqliteSaver (store_builders) or the demo's real graph; the registry as
Mycel's repo writes it (memory_core/demo/subagents.py).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.urls import reverse

from memory_core import memo
from memory_core.demo import write_demo_home
from memory_core.demo.subagents import AgentsTableRow, write_agent_registry
from mycel_dashboard.web.ids import id_to_url
from tests.core.store_builders import build_thread
from tests.support.mycel_env import point_env_at

# A parent whose id needs escaping everywhere and encoding in every URL.
PARENT = 'user/42 <b>"&\x1b'
CHILD = "subagent-c0ffee01"
GRANDCHILD = "subagent-c0ffee02"
FAILED = "subagent-c0ffee03"
OTHER = "unrelated-thread"
T0 = 1_796_029_200.0


def _rows() -> tuple[AgentsTableRow, ...]:
    return (
        AgentsTableRow("c0ffee01", "survey <i>logs</i>", CHILD, "completed", PARENT, "explore", T0),
        AgentsTableRow("c0ffee02", "deeper", GRANDCHILD, "running", CHILD, "explore", T0 + 3),
        AgentsTableRow("c0ffee03", "archive", FAILED, "error", PARENT, "general-purpose", T0 + 7),
    )


@pytest.fixture
def family_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    memo.reset()
    home = tmp_path / "family-home"
    home.mkdir()
    for thread_id in (PARENT, CHILD, GRANDCHILD, OTHER):
        build_thread(home / "leon.db", thread_id, turns=1)
    write_agent_registry(home / "agent_registry.db", _rows())
    point_env_at(monkeypatch, home)
    return home


def _list(client, **params: str) -> str:
    response = client.get(reverse("threads"), params)
    assert response.status_code == 200
    return response.content.decode()


def _thread_page(client, thread_id: str) -> str:
    response = client.get(reverse("thread", args=[thread_id]))
    assert response.status_code == 200
    return response.content.decode()


def _listed(body: str) -> set[str]:
    """Every thread id with a row of its own (the row's first cell carries the whole id as its title)."""
    return {html.unescape(t) for t in re.findall(r'<td title="([^"]*)">', body)}


def _family_card(body: str) -> str:
    match = re.search(r'<section class="card" id="family".*?</section>', body, re.S)
    assert match, "no family card"
    return match.group(0)


def test_the_list_shows_a_failed_registration_as_a_marked_row_without_a_link(viewer_client, family_home):
    body = _list(viewer_client)
    assert _listed(body) == {PARENT, CHILD, GRANDCHILD, FAILED, OTHER}
    row = re.search(rf'<tr>\s*<td title="{FAILED}">.*?</tr>', body, re.S)
    assert row
    assert "registered, no checkpoints" in row.group(0)
    assert "sub-agent · error" in row.group(0)
    assert f'href="{reverse("thread", args=[FAILED])}"' not in row.group(0)


def test_each_sub_agent_row_names_and_links_its_parent(viewer_client, family_home):
    body = _list(viewer_client)
    row = re.search(rf'<tr>\s*<td title="{GRANDCHILD}">.*?</tr>', body, re.S)
    assert row
    assert "sub-agent · running" in row.group(0)
    assert f'<a class="mono parent" href="{reverse("thread", args=[CHILD])}"' in row.group(0)
    parent_row = re.search(rf'<tr>\s*<td title="{CHILD}">.*?</tr>', body, re.S)
    assert parent_row
    assert f'href="{reverse("thread", args=[PARENT])}"' in parent_row.group(0)
    assert "user/42 &lt;b&gt;&quot;&amp;\\x1b</a>" in parent_row.group(0)


def test_the_family_filter_keeps_a_thread_and_all_its_descendants(viewer_client, family_home):
    body = _list(viewer_client, family=id_to_url(PARENT))
    assert _listed(body) == {PARENT, CHILD, GRANDCHILD, FAILED}
    assert 'id="family-filter"' in body
    # The form keeps the filter, in its URL form, when the search or flag changes.
    assert f'<input type="hidden" name="family" value="{id_to_url(PARENT)}">' in body
    assert _listed(_list(viewer_client, family=CHILD)) == {CHILD, GRANDCHILD}
    assert _listed(_list(viewer_client, family=CHILD, q="nothing-matches")) == set()
    assert _listed(_list(viewer_client, family=OTHER)) == {OTHER}


def test_a_family_filter_that_cannot_be_decoded_is_said_and_ignored(viewer_client, family_home):
    body = _list(viewer_client, family="~!!not base64")
    assert "Ignored family of" in body
    assert _listed(body) == {PARENT, CHILD, GRANDCHILD, FAILED, OTHER}


def test_the_thread_page_draws_the_family_tree_with_links_only_to_pages_that_exist(
    viewer_client, family_home
):
    card = _family_card(_thread_page(viewer_client, PARENT))
    assert f'href="{reverse("thread", args=[CHILD])}"' in card
    assert f'href="{reverse("thread", args=[GRANDCHILD])}"' in card
    assert f'href="{reverse("thread", args=[FAILED])}"' not in card
    failed = re.search(rf'<span class="mono" title="{FAILED}">.*?</li>', card, re.S)
    assert failed and "no checkpoints" in failed.group(0) and ">error<" in failed.group(0)
    # Nested: the grandchild sits in a list inside the child's item.
    child_item = re.search(
        rf'<li><a class="mono" href="{re.escape(reverse("thread", args=[CHILD]))}".*?</ul>\s*</li>',
        card,
        re.S,
    )
    assert child_item and GRANDCHILD in child_item.group(0)
    assert f'href="{reverse("threads")}?family={id_to_url(PARENT)}"' in card


def test_the_family_card_escapes_odd_ids_and_names(viewer_client, family_home):
    card = _family_card(_thread_page(viewer_client, CHILD))
    assert "<b>" not in card and "<i>" not in card
    # Shown as the tables show ids (control characters spelled out), whole and escaped in the title.
    assert "user/42 &lt;b&gt;&quot;&amp;\\x1b</a>" in card
    assert "survey &lt;i&gt;logs&lt;/i&gt;" in card
    assert f'href="{reverse("thread", args=[PARENT])}"' in card
    assert f'title="{html.escape(PARENT)}"' in card
    assert "(this thread)" in card and "parent" in card


def test_a_thread_without_family_has_no_card(viewer_client, family_home):
    assert 'id="family"' not in _thread_page(viewer_client, OTHER)


def test_a_missing_registry_is_said_quietly_and_everything_else_works(viewer_client, family_home):
    (family_home / "agent_registry.db").unlink()
    body = _list(viewer_client)
    assert _listed(body) == {PARENT, CHILD, GRANDCHILD, OTHER}
    assert re.search(r'id="absent-stores">[^<]*agent_registry\.db does not exist', body)
    assert not re.search(r'role="alert">[^<]*agent_registry', body)
    page = _thread_page(viewer_client, PARENT)
    assert re.search(r'id="absent-stores">[^<]*agent_registry\.db does not exist', page)
    assert not re.search(r'role="alert">[^<]*agent_registry', page)
    assert 'id="family"' not in page and 'id="timeline"' in page


def test_a_damaged_registry_is_an_alert_and_the_rest_of_each_page_works(viewer_client, family_home):
    (family_home / "agent_registry.db").write_bytes(b"not sqlite at all " * 50)
    body = _list(viewer_client)
    assert re.search(r'class="problem" role="alert">[^<]*agent_registry\.db is not an SQLite database', body)
    assert _listed(body) == {PARENT, CHILD, GRANDCHILD, OTHER}
    page = _thread_page(viewer_client, PARENT)
    assert re.search(r'class="problem" role="alert">[^<]*agent_registry\.db is not an SQLite database', page)
    assert 'id="timeline"' in page and 'id="family"' not in page


def test_the_demo_home_has_a_parent_with_a_completed_and_a_failed_sub_agent(
    viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    memo.reset()
    manifest = write_demo_home(tmp_path / "demo", seed=3, threads=1)
    point_env_at(monkeypatch, manifest.folder)
    parent = manifest.threads[0].thread_id
    card = _family_card(_thread_page(viewer_client, parent))
    linked = re.findall(r'<a class="mono" href="/threads/(subagent-[0-9a-f]{8})/"', card)
    unlinked = re.findall(r'<span class="mono" title="(subagent-[0-9a-f]{8})">', card)
    assert len(linked) == 1 and len(unlinked) == 1
    assert ">completed<" in card and ">error<" in card
    # The completed one is a real thread: its page opens, names its parent, and shows its model calls.
    child_page = _thread_page(viewer_client, linked[0])
    assert f'href="{reverse("thread", args=[parent])}"' in _family_card(child_page)
    listed = _listed(_list(viewer_client, family=parent))
    assert listed == {parent, linked[0], unlinked[0]}

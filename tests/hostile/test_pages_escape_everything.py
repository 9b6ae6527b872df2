"""Every page and partial of the app, over a data home where every string is hostile: all of it is text.

The pages are enumerated per URL name, and a test fails when the URLconf gains a name this file does not
visit, so a new page cannot be forgotten.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import quote, urlencode

import pytest
from django.test import Client
from django.urls import get_resolver, reverse

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.conftest import point_env_at
from tests.hostile.html_checks import page_problems
from tests.hostile.payloads import (
    CSV_FORMULAS,
    EVERYTHING,
    MARKUP,
    TEMPLATE_SYNTAX,
    HostileHome,
    escaped,
    write_hostile_home,
)

HX = {"HTTP_HX_REQUEST": "true"}


def hx_target(target: str) -> dict[str, str]:
    return {**HX, "HTTP_HX_TARGET": target}


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> HostileHome:
    return write_hostile_home(tmp_path_factory.mktemp("hostile") / "home")


@pytest.fixture
def home(pristine: HostileHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> HostileHome:
    """A fresh copy per test (rollbacks and saves write into it), with Mycel's env pointed at it."""
    folder = tmp_path / "hostile-home"
    shutil.copytree(pristine.folder, folder, symlinks=True)
    workspace = folder / pristine.workspace.relative_to(pristine.folder)
    # The threads row names the workspace by absolute path: point it at the copy.
    with sqlite3.connect(folder / "leon.db") as db:
        db.execute("UPDATE threads SET cwd = ? WHERE cwd = ?", (str(workspace), str(pristine.workspace)))
    db.close()
    point_env_at(monkeypatch, folder)
    return replace(pristine, folder=folder, workspace=workspace)


def _checkpoints(home: HostileHome, thread_id: str) -> list[str]:
    with sqlite3.connect(home.folder / "leon.db") as db:
        rows = db.execute(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id", (thread_id,)
        ).fetchall()
    db.close()
    return [r[0] for r in rows]


def _messages(home: HostileHome, thread_id: str) -> int:
    state = MycelReader(resolve_locations()).get_state(thread_id).value
    return len(state.messages) if state else 0


@dataclass(frozen=True)
class Visit:
    name: str  # the URL name
    url: str
    headers: dict[str, str]


def get_visits(home: HostileHome) -> Iterator[Visit]:
    """Every GET page and partial, per URL name, over every thread of the hostile home."""
    main = home.thread_id
    yield Visit("home", reverse("home"), {})
    threads = reverse("threads")
    for query in ("", f"?{urlencode({'q': MARKUP['script']})}", "?sort=name", "?flag=compacted"):
        yield Visit("threads", threads + query, {})
        yield Visit("threads", threads + query, hx_target("thread-rows"))
    for thread_id in home.thread_ids:
        base = reverse("thread", args=[thread_id])
        for view in ("stored", "sent"):
            yield Visit("thread", f"{base}?view={view}", {})
            yield Visit("thread", f"{base}?view={view}", hx_target("timeline"))
        for panel in ("integrity", "sandbox", "queue", "file-operations", "run-events"):
            url = reverse("panel", args=[thread_id, panel])
            yield Visit("panel", url, {})
            yield Visit("panel", url, hx_target(f"panel-{panel}"))
        for index in range(_messages(home, thread_id)):
            for view in ("stored", "sent"):
                url = f"{reverse('message_text', args=[thread_id, index])}?view={view}"
                yield Visit("message_text", url, {})
                yield Visit("message_text", url, HX)
        checkpoints = _checkpoints(home, thread_id)
        for checkpoint_id in checkpoints[-3:]:
            url = reverse("checkpoint", args=[thread_id, checkpoint_id])
            yield Visit("checkpoint", url, {})
            yield Visit("checkpoint", f"{url}?against={checkpoints[0]}", hx_target("checkpoint-diff"))
            yield Visit("rollback_preview", reverse("rollback_preview", args=[thread_id, checkpoint_id]), {})
        yield Visit("undo_preview", reverse("undo_preview", args=[thread_id]), {})
        dry_run = reverse("dry_run", args=[thread_id])
        yield Visit("dry_run", dry_run, {})
        yield Visit(
            "dry_run", f"{dry_run}?context_limit=2000&keep_recent_tokens=100", hx_target("dry-run-result")
        )
        config = f"{reverse('config')}?{urlencode({'thread': thread_id})}"
        yield Visit("config", config, {})
        yield Visit("config", f"{config}&memory.pruning.soft_trim_chars=100", hx_target("whatif"))
    for spill_id in home.spill_ids:
        yield Visit("spill", reverse("spill", args=[main, spill_id]), {})
    preview = f"{reverse('config_preview')}?{urlencode({'thread': main, 'layer': 'user'})}"
    yield Visit("config_preview", f"{preview}&memory.pruning.soft_trim_chars=1500", {})
    yield Visit("config_preview", f"{preview}&memory.pruning.soft_trim_chars=1500", hx_target("save-panel"))
    yield Visit("audit", reverse("audit"), {})
    yield Visit(
        "audit", f"{reverse('audit')}?{urlencode({'thread': MARKUP['svg_onload']})}", hx_target("audit-rows")
    )


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8")
    return response.content.decode("utf-8")


def _fingerprint(client: Client, url: str) -> str:
    found = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', client.get(url).content.decode())
    assert found is not None, url
    return found.group(1)


def act_with_hostile_strings(client: Client, home: HostileHome) -> list[tuple[str, int, str]]:
    """Every POST endpoint, with data that makes the audit log record hostile strings."""
    out: list[tuple[str, int, str]] = []

    def post(name: str, url: str, data: dict[str, str], **headers: str) -> None:
        response = client.post(url, data, **headers)
        out.append((name, response.status_code, _body(response)))

    for thread_id in (*home.formula_thread_ids, home.odd_id_thread_id, home.thread_id):
        target = _checkpoints(home, thread_id)[0]
        preview = reverse("rollback_preview", args=[thread_id, target])
        fingerprint = _fingerprint(client, preview)
        post(
            "rollback_apply",
            reverse("rollback_apply", args=[thread_id, target]),
            {"fingerprint": fingerprint},
        )
    undo = reverse("undo_preview", args=[home.thread_id])
    post(
        "undo_apply",
        reverse("undo_apply", args=[home.thread_id]),
        {"fingerprint": _fingerprint(client, undo)},
    )
    post(
        "dry_run_generate",
        reverse("dry_run_generate", args=[home.thread_id]),
        {"context_limit": "2000"},
        **hx_target("dry-run-result"),
    )
    sha = re.search(
        r'name="sha256" value="([0-9a-f]*)"',
        client.get(
            f"{reverse('config_preview')}?{urlencode({'thread': home.thread_id, 'layer': 'user'})}"
            "&memory.pruning.soft_trim_chars=1500"
        ).content.decode(),
    )
    assert sha is not None
    save = {
        "thread": home.thread_id,
        "layer": "user",
        "sha256": sha.group(1),
        "memory.pruning.soft_trim_chars": "1500",
    }
    post("config_save", reverse("config_save"), save, **hx_target("save-panel"))
    post("config_save", reverse("config_save"), save, **hx_target("save-panel"))  # stale: refused
    post(
        "config_restore",
        reverse("config_restore"),
        {"layer": "user", "version": MARKUP["svg_onload"], "thread": home.thread_id},
        **hx_target("save-panel"),
    )
    post("logout", reverse("logout"), {})
    return out


# Names reached other than by `get_visits`: the login form, the POST-only actions.
OTHER_NAMES = {
    "login",
    "logout",
    "rollback_apply",
    "undo_apply",
    "dry_run_generate",
    "config_save",
    "config_restore",
    "audit_csv",
}


def test_every_url_name_is_visited(pristine: HostileHome, home: HostileHome):
    names = {key for key in get_resolver().reverse_dict if isinstance(key, str)}
    visited = {visit.name for visit in get_visits(home)} | OTHER_NAMES
    assert names - visited == set(), "a page this file does not visit: add it to get_visits"


def test_every_page_and_partial_renders_hostile_data_as_text(viewer_client: Client, home: HostileHome):
    seen = 0
    for visit in get_visits(home):
        response = viewer_client.get(visit.url, **visit.headers)
        assert response.status_code == 200, (visit.url, visit.headers)
        body = _body(response)
        assert page_problems(body) == [], (visit.url, visit.headers)
        seen += 1
    assert seen > 150


def test_hostile_strings_show_escaped_where_they_belong(viewer_client: Client, home: HostileHome):
    def page(url: str, **headers: str) -> str:
        response = viewer_client.get(url, **headers)
        assert response.status_code == 200, url
        return _body(response)

    listing = page(reverse("threads"))
    assert escaped(MARKUP["img_onerror"]) in listing  # the agent's (member's) name
    assert escaped(MARKUP["svg_onload"]) in listing  # the model from the checkpoint metadata
    assert escaped(home.odd_id_thread_id) in listing

    thread = page(reverse("thread", args=[home.thread_id]))
    assert escaped(f"Please summarise this page: {EVERYTHING}") in thread  # human message
    assert escaped(f"Done: {MARKUP['close_script_in_json']} {MARKUP['css']}") in thread  # AI text
    assert escaped(MARKUP["script"] + " " + MARKUP["img_onerror"]) in thread  # tool output
    assert escaped(f"Summary: {EVERYTHING}") in thread  # active summary
    assert escaped(f"prefix {MARKUP['svg_onload']} {TEMPLATE_SYNTAX}") in thread  # split-turn prefix
    assert escaped(f"old {MARKUP['iframe']}") in thread  # inactive summary
    assert escaped(MARKUP["close_script_in_json"]).replace("&quot;", "\\&quot;") in thread  # tool-call args
    # Template syntax from data is never evaluated: it stays literally as written.
    assert TEMPLATE_SYNTAX in thread
    assert "&amp;lt;script&amp;gt;window.__pwned=11" in thread  # entities stay entities, never decoded

    queue = page(reverse("panel", args=[home.thread_id, "queue"]))
    assert escaped(EVERYTHING) in queue and escaped(MARKUP["img_onerror"]) in queue
    operations = page(reverse("panel", args=[home.thread_id, "file-operations"]))
    assert escaped(f"../../{MARKUP['svg_onload']}") in operations
    events = page(reverse("panel", args=[home.thread_id, "run-events"]))
    assert escaped(MARKUP["script"]) in events and "\ufffd" in events  # the lone surrogate, replaced
    sandbox = page(reverse("panel", args=[home.thread_id, "sandbox"]))
    assert escaped(f"/tmp/{MARKUP['svg_onload']}") in sandbox

    spill = page(reverse("spill", args=[home.thread_id, home.spill_ids[0]]))
    assert len(spill) > 1_000_000 and escaped(MARKUP["img_onerror"]) in spill

    checkpoint = page(
        reverse("checkpoint", args=[home.metadata_thread_id, _checkpoints(home, home.metadata_thread_id)[0]])
    )
    assert escaped(MARKUP["svg_onload"]) in checkpoint  # a metadata value under a hostile key
    assert escaped(MARKUP["script"]) in checkpoint

    config = page(f"{reverse('config')}?{urlencode({'thread': home.thread_id})}")
    assert escaped(MARKUP["script"]) in config or escaped(MARKUP["svg_onload"]) in config


def test_invalid_utf8_in_a_blob_renders_the_rest_of_the_thread(viewer_client: Client, home: HostileHome):
    response = viewer_client.get(reverse("thread", args=[home.bad_utf8_thread_id]))
    assert response.status_code == 200
    body = _body(response)
    assert page_problems(body) == []
    assert escaped(f"reply {MARKUP['img_onerror']}") in body  # the intact message next to the broken one


def test_chart_and_scripts_get_json_only_through_json_script(viewer_client: Client, home: HostileHome):
    for thread_id in home.thread_ids:
        body = _body(viewer_client.get(reverse("thread", args=[thread_id])))
        for tag in re.findall(r"<script\b[^>]*>", body):
            assert "src=" in tag or 'type="application/json"' in tag, tag
        assert "</script><script>" not in body
    body = _body(viewer_client.get(reverse("thread", args=[home.odd_id_thread_id])))
    figure = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert figure is not None and "<" not in figure.group(1)
    assert quote(home.odd_id_thread_id, safe="") in figure.group(1) or "%3Cimg" in figure.group(1)


def test_actions_with_hostile_data_escape_and_csv_neutralises_formulas(
    operator_client: Client, home: HostileHome
):
    for name, status, body in act_with_hostile_strings(operator_client, home):
        assert status < 500, name
        assert page_problems(body) == [], name
    # Logged out by the last action: log in again to read what the actions recorded.
    from django.contrib.auth.models import User

    operator_client.force_login(User.objects.get(username="operator"))
    audit = _body(operator_client.get(reverse("audit")))
    assert page_problems(audit) == []
    assert escaped(home.odd_id_thread_id) in audit
    response = operator_client.get(reverse("audit_csv"))
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(_body(response))))
    assert len(rows) > len(home.formula_thread_ids)
    cells = [cell for row in rows[1:] for cell in row]
    for cell in cells:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    for thread_id in home.formula_thread_ids:
        assert "'" + thread_id in cells  # kept, behind the apostrophe that makes it text
    assert set(CSV_FORMULAS) == {t[0] for t in home.formula_thread_ids}


def test_login_page_escapes_a_hostile_next_url(client: Client, home: HostileHome):
    body = _body(client.get(f"{reverse('login')}?{urlencode({'next': MARKUP['attribute_breakout']})}"))
    assert page_problems(body) == []
    response = client.get(f"{reverse('login')}?{urlencode({'next': 'javascript:alert(1)'})}")
    assert response.status_code == 200

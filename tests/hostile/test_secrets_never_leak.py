"""Credentials planted under many key spellings never reach a page, a partial, an export, a CLI line or a log.

The hostile home plants them in checkpoint metadata (flat, nested dicts, lists), in a message's metadata,
in runtime.json, models.json (`providers.*.api_key`) and the project layer. The real sample home holds the
key Mycel itself copied into every checkpoint's metadata.
"""

from __future__ import annotations

import http.cookiejar
import json
import logging
import re
import shutil
import sqlite3
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse
from langchain_core.messages import AIMessage, HumanMessage

from memory_core.cli import main as cli_main
from memory_core.demo import FAKE_API_KEY
from memory_core.secrets import REDACTED
from tests.dashboard.broken_homes import every_screen, sample_checkpoints
from tests.dashboard.planting import plant_thread
from tests.hostile.pages import act_with_hostile_strings, body_of, checkpoint_ids, get_visits
from tests.hostile.payloads import SECRETS, HostileHome
from tests.support.sample_data import SAMPLE_HOME
from tests.support.server import PASSWORD, running_server

LEAK = re.compile(r"leak-[A-Za-z-]+-00\d\d|" + re.escape(FAKE_API_KEY))


def leaks(text: str) -> list[str]:
    return sorted(set(LEAK.findall(text)))


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Every log record of the test, at DEBUG, from every logger."""
    caplog.set_level(logging.DEBUG)
    return caplog


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    lines = []
    for record in caplog.records:
        lines.append(record.getMessage())
        if record.exc_text:
            lines.append(record.exc_text)
        lines.append(repr(record.__dict__))
    return "\n".join(lines)


def test_planted_secrets_are_really_in_the_data(home: HostileHome):
    """Guards the other tests: every value is on disk, so finding none on a page means it was hidden."""
    on_disk = b"".join(p.read_bytes() for p in home.folder.rglob("*") if p.is_file())
    for value in SECRETS.values():
        assert value.encode() in on_disk, value
    assert FAKE_API_KEY.encode() in on_disk


def test_no_page_partial_action_or_export_shows_a_secret(
    operator_client: Client, home: HostileHome, all_logs: pytest.LogCaptureFixture
):
    seen = 0
    for visit in get_visits(home):
        response = operator_client.get(visit.url, **visit.headers)
        assert leaks(body_of(response)) == [], visit
        assert leaks(json.dumps(dict(response.items()))) == [], visit  # headers too
        seen += 1
    for name, _, body in act_with_hostile_strings(operator_client, home):
        assert leaks(body) == [], name
    from django.contrib.auth.models import User

    operator_client.force_login(User.objects.get(username="operator"))
    assert leaks(body_of(operator_client.get(reverse("audit")))) == []
    csv_text = body_of(operator_client.get(reverse("audit_csv")))
    assert (
        ",config_save," in csv_text
    )  # the saves are in the export, so their recorded documents were checked
    assert leaks(csv_text) == []
    assert seen > 150
    assert leaks(_logged(all_logs)) == []


def test_the_cli_prints_no_secret(
    home: HostileHome,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    all_logs: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
):
    main, meta = home.thread_id, home.metadata_thread_id
    messages = tmp_path / "messages.json"
    messages.write_text(
        json.dumps(
            [
                {"type": "human", "content": "hi", "additional_kwargs": dict(SECRETS), "metadata": SECRETS},
                {"type": "ai", "content": "hello", "response_metadata": {"headers": dict(SECRETS)}},
            ]
        )
    )
    project = ["--project-dir", str(home.workspace)]
    commands: list[list[str]] = [
        ["threads"],
        ["threads", "--json"],
        ["plan", "--messages", str(messages), "--runtime-config", str(home.folder / "runtime.json")],
        ["plan", "--messages", str(messages), "--json"],
        ["config"],
        ["config", "--json"],
        ["config", "--json", *project],
        ["config", "set", "memory.pruning.soft_trim_chars", "1500", "--layer", "user", "--dry-run"],
        ["config", "set", "memory.pruning.soft_trim_chars", "1500", "--layer", "project", "--json", "--dry-run", *project],
        ["config", "history", "--layer", "user", "--json"],
    ]  # fmt: skip
    for thread_id in (main, meta, home.odd_id_thread_id):
        first = checkpoint_ids(home, thread_id)[0]
        commands += [
            ["thread", thread_id],
            ["thread", thread_id, "--json"],
            ["dry-run", thread_id, "--show-text"],
            ["dry-run", thread_id, "--json", "--show-text"],
            ["rollback", thread_id, "--to", first, "--dry-run"],
            ["rollback", thread_id, "--to", first, "--dry-run", "--json"],
        ]
    monkeypatch.chdir(home.workspace)
    outputs = 0
    for argv in commands:
        code = cli_main(argv)
        out, err = capsys.readouterr()
        assert code in (0, 1, 2), argv
        assert out or err, argv
        assert leaks(out + err) == [], argv
        outputs += 1
    assert outputs == len(commands)
    assert leaks(_logged(all_logs)) == []


def _login(url: str) -> urllib.request.OpenerDirector:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    form = opener.open(f"{url}/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
    assert token is not None
    data = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": token.group(1), "username": "operator", "password": PASSWORD}
    ).encode()
    login = urllib.request.Request(f"{url}/login/", data=data, headers={"Referer": f"{url}/login/"})  # noqa: S310
    opener.open(login, timeout=30)
    return opener


def test_a_real_server_logs_no_secret_at_debug(pristine: HostileHome, tmp_path: Path):
    folder = tmp_path / "served"
    shutil.copytree(pristine.folder, folder, symlinks=True)
    env = {"LOG_LEVEL": "DEBUG", "GUNICORN_CMD_ARGS": "--log-level debug --access-logfile -"}
    with running_server(tmp_path, folder, extra_env=env) as server:
        opener = _login(server.url)
        main, meta = pristine.thread_id, pristine.metadata_thread_id
        paths = [
            "/threads/",
            f"/threads/{main}/",
            f"/threads/{main}/?view=sent",
            f"/threads/{meta}/",
            f"/threads/{main}/dry-run/",
            f"/config/?thread={main}",
            "/threads/no-such-thread/",  # a 404 is logged
            f"/threads/{main}/spill/..%2f..%2fetc%2fpasswd/",
        ]
        paths += [
            f"/threads/{main}/panels/{p}/" for p in ("queue", "run-events", "sandbox", "file-operations")
        ]
        paths += [f"/threads/{meta}/checkpoints/{c}/" for c in checkpoint_ids(pristine, meta)]
        bodies = {}
        for path in paths:
            try:
                body = opener.open(server.url + urllib.parse.quote(path, safe="/?=%&"), timeout=60).read()
            except urllib.error.HTTPError as exc:
                body = exc.read()
            bodies[path] = body.decode("utf-8", "replace")
            assert leaks(bodies[path]) == [], path
        log = server.log_text()
    assert main in bodies["/threads/"]  # logged in: the pages were the real ones, not the login form
    assert '"GET /threads/no-such-thread/ HTTP/1.1" 404' in log  # the access log at debug: the server did log
    assert leaks(log) == []


# -- the real sample home: Mycel itself copied its model key into every checkpoint's metadata --------------

SAMPLE_KEY = "sk-ant-FAKE-sample-key"
PLANTED_THREAD = "m_secretSecret-1"
# The environment-variable spelling, which the hostile home does not use.
PLANTED = {"OPENAI_API_KEY": "leak-OPENAI-API-KEY-0014", **SECRETS}


def _sample_thread_ids() -> list[str]:
    uri = f"file:{SAMPLE_HOME / 'leon.db'}?mode=ro&immutable=1"
    with closing(sqlite3.connect(uri, uri=True)) as db:
        return [r[0] for r in db.execute("SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id")]


def test_no_page_over_the_sample_home_shows_mycels_own_key_or_a_planted_one(
    viewer_client: Client, sample_home: Path
):
    assert SAMPLE_KEY.encode() in (sample_home / "leon.db").read_bytes()  # really in the data
    planted = plant_thread(
        sample_home / "leon.db",
        PLANTED_THREAD,
        [HumanMessage(content="hi", id="h"), AIMessage(content="hello", id="a")],
        metadata={**PLANTED, "model": "gpt-4o-mini"},
    )
    screens = [
        screen
        for thread_id in _sample_thread_ids()
        for screen in every_screen(thread_id)
        if screen.name not in ("home", "threads", "audit")  # once, with the planted thread's below
    ]
    screens += every_screen(PLANTED_THREAD, checkpoint_ids=[planted])
    listing = body_of(viewer_client.get(reverse("threads")))
    assert f'href="{reverse("thread", args=[PLANTED_THREAD])}"' in listing
    for screen in screens:
        response = viewer_client.get(screen.url, **screen.headers)
        assert response.status_code < 500, screen
        body = body_of(response)
        assert SAMPLE_KEY not in body, screen
        assert leaks(body) == [], screen
    assert len(screens) > 150


def test_checkpoint_metadata_says_which_key_was_redacted(viewer_client: Client, sample_home: Path):
    thread_id = "m_0D8EzdJXJhk9-1"
    checkpoint_id = sample_checkpoints(thread_id)[0]
    body = body_of(viewer_client.get(reverse("checkpoint", args=[thread_id, checkpoint_id])))
    assert SAMPLE_KEY not in body
    # The key's name is shown, its value hidden.
    assert re.search(r">api_key</th>\s*<td><pre>" + re.escape(REDACTED) + "</pre>", body), body

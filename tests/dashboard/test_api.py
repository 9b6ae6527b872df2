"""The read-only JSON API under /api/: bearer-token auth, paging, JSON errors, and every endpoint equal to
the CLI's `--json` over the real sample home (the same builders behind both)."""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.api.tokens import create_token
from mycel_dashboard.models import ApiToken
from tests.core.store_builders import PLANTED_SECRETS, build_thread
from tests.dashboard.planting import plant_thread
from tests.support.cli import cli_json

HOSTILE = '<script>alert("api")</script><img src=x onerror=alert(1)>'


@pytest.fixture
def token(viewer) -> str:
    return create_token(viewer)[1]


def _get(client, url: str, token: str | None, **query: Any):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
    return client.get(url, query, **headers)


def _json(response, status: int = 200) -> Any:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    return json.loads(response.content)


def _all_pages(client, url: str, token: str, **query: Any) -> list[Any]:
    """Every result, following `next` until it is null."""
    data = _json(_get(client, url, token, **query))
    results = list(data["results"])
    while data["next"] is not None:
        assert data["next"].startswith("http://testserver/api/")
        data = _json(_get(client, data["next"], token))
        results.extend(data["results"])
    assert len(results) == data["count"]
    return results


def _threads_with_calls() -> list[str]:
    reader = MycelReader(resolve_locations())
    return [r.thread_id for r in reader.list_threads().value if r.messages and r.head_checkpoint_id]


# -- auth --


def test_no_token_is_401_json(client, sample_home: Path, db) -> None:
    body = _json(_get(client, reverse("api_threads"), None), 401)
    assert "Bearer" in body["error"]


def test_a_viewer_token_reads_and_its_use_is_recorded(client, sample_home: Path, viewer, token: str) -> None:
    assert ApiToken.objects.get().last_used_at is None
    rows = _json(_get(client, reverse("api_threads"), token))["results"]
    assert rows and all("thread_id" in row for row in rows)
    assert ApiToken.objects.get().last_used_at is not None


@pytest.mark.parametrize(
    "header",
    ["Bearer mycel_not-a-token-at-all", "Bearer ", "Basic dmlld2VyOnZpZXdlci1wYXNzLTEyMw==", "mycel_x"],
)
def test_a_wrong_or_malformed_token_is_401(client, sample_home: Path, token: str, header: str) -> None:
    response = client.get(reverse("api_threads"), HTTP_AUTHORIZATION=header)
    assert "error" in _json(response, 401)
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_token_differing_in_its_secret_part_is_401(client, sample_home: Path, token: str) -> None:
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    assert _json(_get(client, reverse("api_threads"), forged), 401)["error"] == "invalid or revoked API token"


def test_a_revoked_token_is_401(client, sample_home: Path, viewer, token: str) -> None:
    assert _get(client, reverse("api_threads"), token).status_code == 200
    call_command("api_token", "revoke", "viewer", stdout=StringIO())
    assert _json(_get(client, reverse("api_threads"), token), 401)["error"] == "invalid or revoked API token"


def test_an_inactive_users_token_is_401(client, sample_home: Path, viewer, token: str) -> None:
    viewer.is_active = False
    viewer.save()
    assert _get(client, reverse("api_threads"), token).status_code == 401


def test_a_session_login_does_not_authorise_the_api(viewer_client, sample_home: Path) -> None:
    # Only a bearer token does: a cookie would make every endpoint readable by a forged cross-site request.
    assert "error" in _json(viewer_client.get(reverse("api_threads")), 401)


def test_the_api_never_writes(client, sample_home: Path, token: str) -> None:
    for method in ("post", "put", "patch", "delete"):
        response = getattr(client, method)(reverse("api_threads"), HTTP_AUTHORIZATION=f"Bearer {token}")
        assert "read-only" in _json(response, 405)["error"]


def test_api_token_command_creates_lists_and_revokes(viewer, db) -> None:
    out = StringIO()
    call_command("api_token", "create", "viewer", stdout=out)
    plain = out.getvalue().splitlines()[-1]
    row = ApiToken.objects.get()
    # Stored hashed, never in clear.
    assert row.token_sha256 == hashlib.sha256(plain.encode()).hexdigest()
    assert plain not in json.dumps(list(ApiToken.objects.values()), default=str)
    assert row.scope == "viewer" and plain.startswith(row.prefix)

    listing = StringIO()
    call_command("api_token", "list", stdout=listing)
    assert row.prefix in listing.getvalue() and plain not in listing.getvalue()
    assert "never used" in listing.getvalue()

    call_command("api_token", "revoke", str(row.pk), stdout=StringIO())
    row.refresh_from_db()
    assert row.revoked_at is not None
    with pytest.raises(CommandError, match="no live API token"):
        call_command("api_token", "revoke", str(row.pk), stdout=StringIO())
    with pytest.raises(CommandError, match="no user"):
        call_command("api_token", "create", "nobody", stdout=StringIO())


# -- one truth: the CLI's --json --


def test_threads_equal_the_clis_json(client, sample_home: Path, token: str, capsys) -> None:
    assert _all_pages(client, reverse("api_threads"), token, limit=2) == cli_json(capsys, "threads", "--json")


def test_thread_calls_and_whatif_equal_the_clis_json(client, sample_home: Path, token: str, capsys) -> None:
    compared = 0
    for thread_id in _threads_with_calls():
        thread = _json(_get(client, reverse("api_thread", args=[thread_id]), token))
        assert thread == cli_json(capsys, "thread", thread_id, "--json")
        calls = _all_pages(client, reverse("api_calls", args=[thread_id]), token, limit=3)
        assert calls == cli_json(capsys, "calls", thread_id, "--json")
        url = reverse("api_whatif", args=[thread_id])
        proposed = _json(_get(client, url, token, **{"context_limit": "8000", "protect-recent": "1"}))
        cli = cli_json(
            capsys, "whatif", thread_id, "--context-limit", "8000", "--protect-recent", "1", "--json"
        )
        assert proposed == cli
        assert proposed["current"] == calls
        compared += 1
    assert compared >= 2


def test_rules_reach_the_same_builder(client, sample_home: Path, token: str, capsys) -> None:
    thread_id = _threads_with_calls()[0]
    api = _json(_get(client, reverse("api_calls", args=[thread_id]), token, rules="dev"))["results"]
    assert api == cli_json(capsys, "calls", thread_id, "--rules", "dev", "--json")
    bad = _json(_get(client, reverse("api_thread", args=[thread_id]), token, rules="nope"), 400)
    assert "rules" in bad["error"]


def test_storage_equals_the_clis_json(client, sample_home: Path, token: str, capsys) -> None:
    assert _json(_get(client, reverse("api_storage"), token)) == cli_json(capsys, "storage", "--json")
    assert _json(_get(client, reverse("api_storage"), token, turns="5")) == cli_json(
        capsys, "storage", "--turns", "5", "--json"
    )
    assert "turns" in _json(_get(client, reverse("api_storage"), token, turns="-1"), 400)["error"]


def test_a_checkpoint_is_its_state_as_the_page_shows_it(client, sample_home: Path, token: str) -> None:
    reader = MycelReader(resolve_locations())
    thread_id = _threads_with_calls()[0]
    checkpoints = reader.list_checkpoints(thread_id).value
    for row in (checkpoints[0], checkpoints[-1]):
        data = _json(_get(client, reverse("api_checkpoint", args=[thread_id, row.checkpoint_id]), token))
        state = reader.get_state(thread_id, row.checkpoint_id).value
        assert state is not None
        assert data["checkpoint_id"] == row.checkpoint_id
        assert data["parent_checkpoint_id"] == row.parent_checkpoint_id
        assert data["is_head"] == (row.checkpoint_id == checkpoints[0].checkpoint_id)
        assert [m["text"] for m in data["messages"]] == [m.text for m in state.messages]
        assert [m["type"] for m in data["messages"]] == [m.type.value for m in state.messages]
        assert set(data["channels"]) == set(state.channels)
        # The page shows the same messages.
        page = client.get(reverse("checkpoint", args=[thread_id, row.checkpoint_id]))
        assert page.status_code in (200, 302)
    head = _json(
        _get(client, reverse("api_checkpoint", args=[thread_id, checkpoints[0].checkpoint_id]), token)
    )
    assert head["diff"] is not None and head["diff"]["against"] == checkpoints[0].parent_checkpoint_id


def test_search_equals_the_clis_json(client, sample_home: Path, token: str, capsys) -> None:
    url = reverse("api_search")
    everything = _all_pages(client, url, token, q="the", limit=7)
    assert everything == cli_json(capsys, "search", "the", "--limit", "500", "--json")
    assert len(everything) > 50  # more than the CLI's default, over several pages
    # The first page is the CLI's best matches.
    first = _json(_get(client, url, token, q="the", limit=10))
    assert first["results"] == cli_json(capsys, "search", "the", "--limit", "10", "--json")
    assert first["more"] is False
    thread_id = everything[0]["thread_id"]
    filtered = _all_pages(client, url, token, q="file", tool="Bash", thread=thread_id)
    assert filtered == cli_json(
        capsys, "search", "file", "--tool", "Bash", "--thread", thread_id, "--limit", "500", "--json"
    )
    assert all(hit["thread_id"] == thread_id for hit in filtered)


def test_search_says_what_it_added_to_the_index_first(client, sample_home: Path, token: str) -> None:
    url = reverse("api_search")
    threads = _json(_get(client, reverse("api_threads"), token))["count"]
    first = _json(_get(client, url, token, q="the"))["indexed"]
    assert first["threads_updated"] == threads and first["documents_added"] > threads
    assert first["threads_pending"] == 0
    again = _json(_get(client, url, token, q="file"))["indexed"]
    assert again == dict.fromkeys(first, 0)  # nothing moved: this search added nothing


@pytest.mark.parametrize(
    ("query", "status"),
    [({"q": ""}, 400), ({}, 400), ({"q": "x", "since": "yesterday"}, 400), ({"q": "x", "limit": "0"}, 400)],
)
def test_bad_search_input_is_400(
    client, sample_home: Path, token: str, query: dict[str, str], status: int
) -> None:
    assert _json(_get(client, reverse("api_search"), token, **query), status)["error"]


@pytest.mark.parametrize("q", ['"unclosed', HOSTILE, "a OR b NOT c*", 'NEAR("x" "y")', "\x00\u202e"])
def test_a_hostile_search_query_is_json(client, sample_home: Path, token: str, q: str) -> None:
    response = _get(client, reverse("api_search"), token, q=q)
    assert response.status_code in (200, 400)
    body = _json(response, response.status_code)
    assert "results" in body or "error" in body
    assert "<" not in response.content.decode()


def test_search_finds_no_planted_secret(client, hostile_home: dict[str, str], token: str) -> None:
    for secret in PLANTED_SECRETS.values():
        response = _get(client, reverse("api_search"), token, q=secret.split()[-1])
        assert secret not in response.content.decode()
        assert response.status_code in (200, 400)


# -- paging --


@pytest.fixture
def many_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home with more threads than a small page, written by LangGraph's real SqliteSaver."""
    from tests.support.mycel_env import point_env_at

    folder = tmp_path / "built"
    folder.mkdir()
    for n in range(7):
        build_thread(folder / "leon.db", f"thread-{n}", turns=1, parallel=1, tool_chars=40)
    point_env_at(monkeypatch, folder)
    return folder


def test_paging_covers_every_thread_once(client, many_threads: Path, token: str) -> None:
    first = _json(_get(client, reverse("api_threads"), token, limit=3))
    assert first["count"] == 7 and len(first["results"]) == 3 and first["next"]
    ids = [r["thread_id"] for r in _all_pages(client, reverse("api_threads"), token, limit=3)]
    assert sorted(ids) == [f"thread-{n}" for n in range(7)]
    by_offset = _json(_get(client, reverse("api_threads"), token, limit=3, offset=3))["results"]
    assert [r["thread_id"] for r in by_offset] == ids[3:6]
    last = _json(_get(client, reverse("api_threads"), token, limit=3, offset=6))
    assert len(last["results"]) == 1 and last["next"] is None
    default = _json(_get(client, reverse("api_threads"), token))
    assert len(default["results"]) == 7 and default["next"] is None


def test_a_cursor_neither_repeats_nor_skips_when_a_thread_arrives(
    client, many_threads: Path, token: str
) -> None:
    before = [r["thread_id"] for r in _all_pages(client, reverse("api_threads"), token)]
    first = _json(_get(client, reverse("api_threads"), token, limit=3))
    build_thread(many_threads / "leon.db", "thread-new", turns=1, parallel=1, tool_chars=40)
    after = [r["thread_id"] for r in _all_pages(client, reverse("api_threads"), token)]
    assert set(after) == {*before, "thread-new"}
    seen = [r["thread_id"] for r in first["results"]]
    data = first
    while data["next"] is not None:
        data = _json(_get(client, data["next"], token))
        seen.extend(r["thread_id"] for r in data["results"])
    assert len(seen) == len(set(seen)), "a thread came twice"
    assert set(before) <= set(seen), "a thread was skipped"
    # The rest of the list, exactly as it stands now, after the first page's last thread.
    assert seen[3:] == after[after.index(seen[2]) + 1 :]


@pytest.mark.parametrize(
    "query",
    [
        {"limit": "0"},
        {"limit": "1001"},
        {"limit": "ten"},
        {"offset": "-1"},
        {"offset": "x"},
        {"cursor": "not-a-cursor"},
        {"cursor": "eyJhZnRlciI6ICJnb25lIn0"},  # {"after": "gone"}: no such thread
        {"cursor": "eyJhZnRlciI6ICJnb25lIn0", "offset": "1"},
        {"sort": "name"},
    ],
)
def test_bad_paging_is_400_json(client, many_threads: Path, token: str, query: dict[str, str]) -> None:
    assert _json(_get(client, reverse("api_threads"), token, **query), 400)["error"]


def test_limit_1000_is_allowed(client, many_threads: Path, token: str) -> None:
    assert _json(_get(client, reverse("api_threads"), token, limit="1000"))["count"] == 7


# -- errors, hostile ids, secrets, escaping --


@pytest.fixture
def hostile_home(many_threads: Path) -> dict[str, str]:
    """A thread with a hostile id and hostile text everywhere, secrets in its metadata."""
    thread_id = f"{HOSTILE}/../x?y#z"
    checkpoint = plant_thread(
        many_threads / "leon.db",
        thread_id,
        [
            HumanMessage(content=HOSTILE, id="h1"),
            AIMessage(
                content="", id="a1", tool_calls=[{"id": "t1", "name": HOSTILE, "args": {"x": HOSTILE}}]
            ),
            ToolMessage(content=HOSTILE + "</script>", tool_call_id="t1", id="t1r"),
            AIMessage(
                content=HOSTILE,
                id="a2",
                usage_metadata={"input_tokens": 9, "output_tokens": 1, "total_tokens": 10},
            ),
        ],
        metadata={**PLANTED_SECRETS, "nested": {"credentials": dict(PLANTED_SECRETS)}, "label": HOSTILE},
    )
    build_thread(many_threads / "leon.db", "with-secrets", turns=2, configurable=PLANTED_SECRETS)
    return {"thread_id": thread_id, "checkpoint_id": checkpoint}


def _every_endpoint(reader: MycelReader) -> list[str]:
    urls = [reverse("api_threads"), reverse("api_storage"), reverse("api_search") + "?q=x"]
    for row in reader.list_threads().value:
        urls += [
            reverse("api_thread", args=[row.thread_id]),
            reverse("api_calls", args=[row.thread_id]),
            reverse("api_whatif", args=[row.thread_id]) + "?context_limit=500",
        ]
        urls += [
            reverse("api_checkpoint", args=[row.thread_id, c.checkpoint_id])
            for c in reader.list_checkpoints(row.thread_id).value
        ]
    return urls


def test_no_secret_and_no_markup_in_any_response(client, hostile_home: dict[str, str], token: str) -> None:
    reader = MycelReader(resolve_locations())
    urls = _every_endpoint(reader)
    assert len(urls) > 20
    for url in urls:
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
        assert response.status_code in (200, 503), url
        assert response["Content-Type"] == "application/json"
        assert response["X-Content-Type-Options"] == "nosniff"
        body = response.content.decode()
        for secret in PLANTED_SECRETS.values():
            assert secret not in body, (url, secret)
        # Strings carry <, > and & escaped: even a body sniffed as HTML holds no tag.
        assert "<" not in body and ">" not in body, url
        json.loads(body)


def test_a_hostile_id_round_trips_and_its_text_is_data(
    client, hostile_home: dict[str, str], token: str
) -> None:
    thread_id, checkpoint_id = hostile_home["thread_id"], hostile_home["checkpoint_id"]
    thread = _json(_get(client, reverse("api_thread", args=[thread_id]), token))
    assert thread["thread_id"] == thread_id
    url = reverse("api_checkpoint", args=[thread_id, checkpoint_id])
    data = _json(_get(client, url, token))
    assert data["messages"][0]["text"] == HOSTILE
    assert data["messages"][1]["tool_calls"][0]["name"] == HOSTILE
    assert data["metadata"]["label"] == HOSTILE
    listed = [r["thread_id"] for r in _all_pages(client, reverse("api_threads"), token, limit=2)]
    assert thread_id in listed


@pytest.mark.parametrize(
    "path",
    [
        "/api/threads/no-such-thread/",
        "/api/threads/no-such-thread/calls/",
        "/api/threads/no-such-thread/whatif/",
        "/api/threads/no-such-thread/checkpoints/x/",
        "/api/threads/~!!!not-base64/",
        "/api/threads/~/calls/",
        "/api/threads/thread-0/checkpoints/no-such-checkpoint/",
        "/api/nothing-here/",
        "/api/threads/a/b/c/d/e/",
    ],
)
def test_unknown_things_are_json_404(client, many_threads: Path, token: str, path: str) -> None:
    assert _json(_get(client, path, token), 404)["error"]


def test_unknown_paths_need_a_token_too(client, many_threads: Path, db) -> None:
    assert _json(client.get("/api/nothing-here/"), 401)["error"]


def test_bad_whatif_settings_are_400(client, many_threads: Path, token: str) -> None:
    url = reverse("api_whatif", args=["thread-0"])
    # Named as the API takes it, not as the command line's flag (--context-limit).
    said = _json(_get(client, url, token, context_limit="-5"), 400)["error"]
    assert said == "context_limit must be a positive integer, not '-5'"
    assert "runtime_config" in _json(_get(client, url, token, runtime_config="/etc/passwd"), 400)["error"]
    assert _json(_get(client, url, token, trigger_tokens="100"), 400)["error"]


def test_no_mycel_data_is_503_json(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "absent" / "leon.db"))
    assert "no Mycel data" in _json(_get(client, reverse("api_threads"), token), 503)["error"]
    assert "no Mycel data" in _json(_get(client, reverse("api_storage"), token), 503)["error"]


def test_a_damaged_leon_db_is_503_naming_it_not_an_empty_list(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str
) -> None:
    from tests.support.mycel_env import point_env_at

    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "leon.db").write_text("this is not a database\n" * 100)
    point_env_at(monkeypatch, folder)
    for url in (
        reverse("api_threads"),
        reverse("api_thread", args=["thread-0"]),
        reverse("api_calls", args=["thread-0"]),
        reverse("api_checkpoint", args=["thread-0", "c1"]),
        reverse("api_storage"),
        reverse("api_search") + "?q=anything",
    ):
        body = _json(_get(client, url, token), 503)
        assert "leon.db" in body["error"], (url, body)

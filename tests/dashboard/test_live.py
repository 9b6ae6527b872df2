"""The live partials the Thread page and the Threads list poll: 304 while nothing changed, the new content
after a real saver's write, the running mark from run events, odd ids, and a broken store said plainly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory_core.demo import RunEventsTableRow, write_run_events
from memory_core.messages import Message, MessageType, ToolCall
from mycel_dashboard.screens.live.pulse import in_flight
from tests.core.store_builders import build_thread
from tests.dashboard.broken_homes import exclusively_locked
from tests.support.mycel_env import point_env_at

LIVE = "live-thread-1"
TOOL_HEAVY = "m_npRsndIka9dx-2"  # the sample home's; its checkpoints are months old
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def live_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home whose one thread the real SqliteSaver (WAL) wrote a moment ago."""
    folder = tmp_path / "live-home"
    folder.mkdir()
    build_thread(folder / "leon.db", LIVE, turns=1, parallel=1)
    point_env_at(monkeypatch, folder)
    return folder


def _messages(response) -> int:
    found = re.search(r'data-messages="(\d+)"', response.content.decode())
    assert found, response.content.decode()
    return int(found.group(1))


def test_an_unchanged_thread_answers_304_to_its_etag(viewer_client, live_home: Path) -> None:
    url = reverse("thread_live", args=[LIVE])
    first = viewer_client.get(url, **HX)
    assert first.status_code == 200
    etag = first["ETag"]
    assert etag.startswith('"') and "no-cache" in first["Cache-Control"]
    again = viewer_client.get(url, HTTP_IF_NONE_MATCH=etag, **HX)
    assert again.status_code == 304
    assert again.content == b"" and again["ETag"] == etag
    # Another tag (an older page) gets the whole answer.
    assert viewer_client.get(url, HTTP_IF_NONE_MATCH='"stale"', **HX).status_code == 200


def test_a_real_saver_write_between_two_polls_gives_200_with_the_new_messages(
    viewer_client, live_home: Path
) -> None:
    url = reverse("thread_live", args=[LIVE])
    first = viewer_client.get(url, **HX)
    before = _messages(first)
    build_thread(live_home / "leon.db", LIVE, turns=1, parallel=1)  # the graph goes on from the head
    after = viewer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **HX)
    assert after.status_code == 200
    assert after["ETag"] != first["ETag"]
    assert _messages(after) > before
    # The page the poll sends the browser to shows the new turn, at its new index.
    page = viewer_client.get(reverse("thread", args=[LIVE])).content.decode()
    assert f'id="msg-{_messages(after) - 1}"' in page
    assert viewer_client.get(url, HTTP_IF_NONE_MATCH=after["ETag"], **HX).status_code == 304


def test_a_fresh_checkpoint_shows_the_running_mark(viewer_client, live_home: Path) -> None:
    body = viewer_client.get(reverse("thread_live", args=[LIVE]), **HX).content.decode()
    assert 'id="running-mark"' in body and "newest checkpoint was written" in body


def _events(home: Path, *types: str) -> None:
    write_run_events(
        home / "events.db",
        [
            RunEventsTableRow(
                TOOL_HEAVY, "run-live-1", kind, {"note": "<b>x</b>"}, None, "2026-11-30T10:00:00"
            )
            for kind in types
        ],
    )


def test_an_unfinished_run_in_run_events_shows_the_running_mark_until_it_ends(
    viewer_client, sample_home: Path
) -> None:
    url = reverse("thread_live", args=[TOOL_HEAVY])
    idle = viewer_client.get(url, **HX)
    assert idle.status_code == 200 and 'id="running-mark"' not in idle.content.decode()
    _events(sample_home, "run_start")
    busy = viewer_client.get(url, HTTP_IF_NONE_MATCH=idle["ETag"], **HX)
    assert busy.status_code == 200
    body = busy.content.decode()
    assert "Running" in body and "run run-live-1 started and has no run_done" in body
    _events(sample_home, "run_done")
    done = viewer_client.get(url, HTTP_IF_NONE_MATCH=busy["ETag"], **HX)
    assert done.status_code == 200 and 'id="running-mark"' not in done.content.decode()


def test_the_call_in_flight_is_the_pending_tool_call_or_the_models_answer() -> None:
    ask = Message(MessageType.HUMAN, "list the files")
    calling = Message(MessageType.AI, "", tool_calls=(ToolCall(id="c1", name="Bash", args={}),))
    result = Message(MessageType.TOOL, "a\nb", tool_call_id="c1")
    answer = Message(MessageType.AI, "two files")
    assert in_flight([ask]) == "the model's answer"
    assert in_flight([ask, calling]) == "tool call Bash"
    assert in_flight([ask, calling, result]) == "the model's answer"
    assert in_flight([ask, calling, result, answer]) is None
    assert in_flight([]) is None


def test_the_thread_page_carries_the_live_block_with_its_first_tag(viewer_client, live_home: Path) -> None:
    page = viewer_client.get(reverse("thread", args=[LIVE])).content.decode()
    live = viewer_client.get(reverse("thread_live", args=[LIVE]), **HX)
    assert f'data-live-url="{reverse("thread_live", args=[LIVE])}"' in page
    assert f'data-etag="{live["ETag"].strip(chr(34))}"' in page
    assert "dashboard/live.js" in page


@pytest.mark.parametrize("thread_id", ["a/b c", "<script>alert(1)</script>", "ü?&#x=1", " leading"])
def test_odd_thread_ids_poll_cleanly_and_escaped(
    viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, thread_id: str
) -> None:
    folder = tmp_path / "odd"
    folder.mkdir()
    build_thread(folder / "leon.db", thread_id, turns=1, parallel=1)
    point_env_at(monkeypatch, folder)
    url = reverse("thread_live", args=[thread_id])
    response = viewer_client.get(url, **HX)
    assert response.status_code == 200
    assert "<script>alert" not in response.content.decode()
    assert viewer_client.get(url, HTTP_IF_NONE_MATCH=response["ETag"], **HX).status_code == 304


def test_an_unknown_thread_is_a_404_fragment_not_a_500(viewer_client, live_home: Path) -> None:
    response = viewer_client.get(reverse("thread_live", args=["<b>nobody</b>"]), **HX)
    assert response.status_code == 404
    body = response.content.decode()
    assert "in any configured store" in body and "<b>nobody" not in body


def test_a_missing_leon_db_is_a_message_in_the_partial(
    viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_env_at(monkeypatch, tmp_path / "no-such-home")
    for url in (reverse("thread_live", args=[LIVE]), reverse("threads_live")):
        response = viewer_client.get(url, **HX)
        assert response.status_code == 200, url
        assert 'class="problem' in response.content.decode() and "leon.db" in response.content.decode()


def test_a_locked_leon_db_is_a_message_in_the_partial_and_not_kept(viewer_client, sample_home: Path) -> None:
    url = reverse("thread_live", args=[TOOL_HEAVY])
    with exclusively_locked(sample_home / "leon.db"):
        locked = viewer_client.get(url, **HX)
        assert locked.status_code == 200
        assert "locked" in locked.content.decode()
    after = viewer_client.get(url, HTTP_IF_NONE_MATCH=locked["ETag"], **HX)
    assert after.status_code == 200 and "locked" not in after.content.decode()


# -- the Threads list -------------------------------------------------------------------------------


def _since(page: str) -> tuple[str, str]:
    found = re.search(r'data-live-since="([^"]+)" data-live-known="(\d+)"', page)
    assert found, "the rows carry what the list was drawn up to"
    return found.group(1), found.group(2)


def test_the_thread_list_answers_304_until_a_thread_moves_or_appears(viewer_client, live_home: Path) -> None:
    page = viewer_client.get(reverse("threads") + "?sort=name&order=asc").content.decode()
    since, known = _since(page)
    assert known == "1" and 'data-live-url="/threads/live/"' in page
    url = f"{reverse('threads_live')}?since={since}&known={known}"
    first = viewer_client.get(url, **HX)
    assert first.status_code == 200 and 'data-new="0" data-moved="0"' in first.content.decode()
    assert viewer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **HX).status_code == 304
    build_thread(live_home / "leon.db", "live-thread-2", turns=1, parallel=1)
    build_thread(live_home / "leon.db", LIVE, turns=1, parallel=1)
    moved = viewer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **HX)
    assert moved.status_code == 200
    body = moved.content.decode()
    assert 'data-new="1" data-moved="1"' in body
    assert "1 new thread, 1 with new activity" in body
    # The rows the pill fetches keep the operator's sort, and now start from the new state.
    rows = viewer_client.get(reverse("threads") + "?sort=name&order=asc", HTTP_HX_TARGET="thread-rows", **HX)
    assert _since(rows.content.decode())[1] == "2"


def test_bad_poll_parameters_are_ignored_not_a_500(viewer_client, live_home: Path) -> None:
    response = viewer_client.get(f"{reverse('threads_live')}?since=soon&known=-3", **HX)
    assert response.status_code == 200
    assert 'data-new="0" data-moved="0"' in response.content.decode()


def test_the_poll_answers_carry_no_secret(viewer_client, live_home: Path) -> None:
    body = viewer_client.get(reverse("thread_live", args=[LIVE]), **HX).content.decode()
    assert "api_key" not in body and json.dumps("sk-") not in body


# -- what a poll costs, and who may poll ------------------------------------------------------------


def test_an_unchanged_poll_runs_one_query_and_none_for_its_session(viewer_client, live_home: Path) -> None:
    """16 open pages poll every 3 s: the session comes from the shared session cache, not a row read per
    poll; the user is still read each time, so a deactivated or re-passworded user is out at once."""
    url = reverse("thread_live", args=[LIVE])
    etag = viewer_client.get(url, **HX)["ETag"]
    with CaptureQueriesContext(connection) as queries:
        assert viewer_client.get(url, HTTP_IF_NONE_MATCH=etag, **HX).status_code == 304
    sql = [q["sql"] for q in queries.captured_queries]
    assert len(sql) == 1 and '"auth_user"' in sql[0], sql
    # Kept open between requests (one per gunicorn thread): no SQLite open and PRAGMA per poll.
    assert connection.settings_dict["CONN_MAX_AGE"] > 0 and connection.settings_dict["CONN_HEALTH_CHECKS"]


def test_an_anonymous_or_logged_out_poll_gets_the_login_redirect_never_a_304_or_data(
    client, viewer, live_home: Path
) -> None:
    url = reverse("thread_live", args=[LIVE])
    client.force_login(viewer)
    etag = client.get(url, **HX)["ETag"]
    client.post(reverse("logout"))
    for who in (client, Client()):  # the logged-out session's cookie, and no cookie at all
        response = who.get(url, HTTP_IF_NONE_MATCH=etag, **HX)
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
        assert "ETag" not in response and b"data-messages" not in response.content


def test_a_fleet_sized_list_polls_without_walking_the_fleet(
    viewer_client, live_home: Path, settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # At DASHBOARD_FLEET_INDEX_FROM threads the poll asks the checkpoints' keys (a count, the threads moved
    # since) and never lists every thread: the same answers as the list in memory gives above.
    from memory_core.stores.reader import MycelReader

    settings.DASHBOARD_FLEET_INDEX_FROM = 1
    settings.DASHBOARD_FLEET_INDEX_BACKGROUND = False
    page = viewer_client.get(reverse("threads")).content.decode()
    since, known = _since(page)
    assert known == "1"
    walks: list[str] = []
    listing = MycelReader.list_threads

    def counted(self: MycelReader, *args: object, **kwargs: object) -> object:
        walks.append("list_threads")
        return listing(self, *args, **kwargs)

    monkeypatch.setattr(MycelReader, "list_threads", counted)
    url = f"{reverse('threads_live')}?since={since}&known={known}"
    first = viewer_client.get(url, **HX)
    assert first.status_code == 200 and 'data-new="0" data-moved="0"' in first.content.decode()
    build_thread(live_home / "leon.db", "live-thread-2", turns=1, parallel=1)
    build_thread(live_home / "leon.db", LIVE, turns=1, parallel=1)
    moved = viewer_client.get(url, HTTP_IF_NONE_MATCH=first["ETag"], **HX)
    assert moved.status_code == 200
    assert 'data-new="1" data-moved="1"' in moved.content.decode()
    # With no `since`, the answer is relative to the newest head now: nothing moved after it.
    now = viewer_client.get(reverse("threads_live"), **HX)
    assert 'data-new="0" data-moved="0"' in now.content.decode()
    assert walks == []

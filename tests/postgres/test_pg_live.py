"""The live partials over Mycel main's layout in PostgreSQL: a write through the real AsyncPostgresSaver
between two polls gives 200 with the new content; no change gives 304."""

from __future__ import annotations

import re
import time

import pytest
from django.urls import reverse

from memory_core.demo import scripts
from memory_core.demo.determinism import DemoClock
from memory_core.demo.graph import build_thread

HX = {"HTTP_HX_REQUEST": "true"}
THREAD = "m_pgMain0001-1"


def _messages(body: str) -> int:
    found = re.search(r'data-messages="(\d+)"', body)
    assert found, body
    return int(found.group(1))


def test_a_postgres_write_between_two_polls_gives_200_and_no_change_gives_304(
    viewer_client, pg_main_db, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = pg_main_db
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    live = reverse("thread_live", args=[THREAD])
    listed = viewer_client.get(reverse("threads")).content.decode()
    since, known = re.search(r'data-live-since="([^"]+)" data-live-known="(\d+)"', listed).groups()
    list_live = f"{reverse('threads_live')}?since={since}&known={known}"

    first = viewer_client.get(live, **HX)
    first_list = viewer_client.get(list_live, **HX)
    assert first.status_code == first_list.status_code == 200
    assert viewer_client.get(live, HTTP_IF_NONE_MATCH=first["ETag"], **HX).status_code == 304
    assert viewer_client.get(list_live, HTTP_IF_NONE_MATCH=first_list["ETag"], **HX).status_code == 304

    # Mycel goes on, on today's clock (its checkpoint ids carry their time): the same thread gets another
    # turn and a new thread starts, both through the saver.
    build_thread(
        url, THREAD, scripts.toad_qa().script, seed=8, clock=DemoClock(seed=8, start_epoch=time.time())
    )
    build_thread(
        url, "m_pgMain0001-3", scripts.toad_qa().script, clock=DemoClock(seed=7, start_epoch=time.time() + 60)
    )

    after = viewer_client.get(live, HTTP_IF_NONE_MATCH=first["ETag"], **HX)
    assert after.status_code == 200
    assert _messages(after.content.decode()) > _messages(first.content.decode())
    moved = viewer_client.get(list_live, HTTP_IF_NONE_MATCH=first_list["ETag"], **HX)
    assert moved.status_code == 200
    assert 'data-new="1" data-moved="1"' in moved.content.decode()
    assert viewer_client.get(live, HTTP_IF_NONE_MATCH=after["ETag"], **HX).status_code == 304

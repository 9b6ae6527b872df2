"""A page's own data never takes a name Django's context processors fill: the checkpoint page once passed
its messages as `messages`, and the base template printed each one as a raw dict in the flash area."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from mycel_dashboard.web.render import render_screen

THREAD = "m_0D8EzdJXJhk9-1"


def test_the_checkpoint_page_lists_its_messages_and_no_flash_note(viewer_client, sample_home: Path) -> None:
    body = viewer_client.get(f"/threads/{THREAD}/").content.decode()
    newest = re.findall(rf'href="/threads/{THREAD}/checkpoints/([^/]+)/"', body)[0]
    page = viewer_client.get(f"/threads/{THREAD}/checkpoints/{newest}/").content.decode()
    assert 'class="flash"' not in page
    assert "{&#x27;index&#x27;" not in page and "{'index'" not in page
    listed = re.search(r'<ol class="messages">(.*?)</ol>', page.split("State at this checkpoint")[1], re.S)
    assert listed is not None
    head = MycelReader(resolve_locations()).get_state(THREAD).value
    assert len(re.findall(r'<li class="msg ', listed.group(1))) == len(head.messages) == 6


def test_a_flash_note_after_a_rollback_is_the_only_flash_on_the_next_page(
    operator_client, sample_home: Path
) -> None:
    body = operator_client.get(f"/threads/{THREAD}/").content.decode()
    target = re.findall(rf'href="/threads/{THREAD}/checkpoints/([^/]+)/"', body)[1]
    preview = operator_client.get(f"/threads/{THREAD}/checkpoints/{target}/rollback/").content.decode()
    fingerprint = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', preview).group(1)
    applied = operator_client.post(
        f"/threads/{THREAD}/checkpoints/{target}/rollback/apply/",
        {"fingerprint": fingerprint, "force": "on"},
        follow=True,
    ).content.decode()
    [flash] = re.findall(r'<ul class="flash" role="status">(.*?)</ul>', applied, re.S)
    assert flash.count("<li") == 1
    assert "Rolled back: the active checkpoint is now" in flash


@pytest.mark.parametrize("name", ["messages", "request", "user", "perms"])
def test_a_screen_that_passes_a_reserved_name_fails_loudly(rf: RequestFactory, admin_user, name: str) -> None:
    request = rf.get("/")
    request.user = admin_user
    with pytest.raises(ImproperlyConfigured, match=f"context names \\['{name}'\\] belong to Django"):
        render_screen(request, "home.html", None, {name: "page data"})

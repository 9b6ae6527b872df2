from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.dashboard.planting import HOSTILE, hostile_messages, name_thread, plant_thread

EVIL = "m_evilEvilEvil-1"


@pytest.fixture
def hostile_home(sample_home: Path) -> Path:
    plant_thread(sample_home / "leon.db", EVIL, hostile_messages(), metadata={"model": HOSTILE})
    name_thread(sample_home / "leon.db", EVIL, HOSTILE)
    return sample_home


def _pages(client) -> list[str]:
    urls = [
        "/threads/",
        f"/threads/?q={EVIL}",
        f"/threads/{EVIL}/",
        f"/threads/{EVIL}/?view=sent",
        f"/threads/{EVIL}/messages/2/",
        f"/threads/{EVIL}/panels/integrity/",
    ]
    body = client.get(f"/threads/{EVIL}/").content.decode()
    urls += [
        f"/threads/{EVIL}/checkpoints/{cid}/"
        for cid in re.findall(rf"/threads/{EVIL}/checkpoints/([^/]+)/", body)
    ]
    pages = []
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        pages.append(response.content.decode())
    return pages


def test_planted_script_is_escaped_on_every_page(viewer_client, hostile_home: Path):
    for body in _pages(viewer_client):
        assert HOSTILE not in body
        assert "<script>alert" not in body


def test_hostile_thread_name_and_tool_output_show_as_text(viewer_client, hostile_home: Path):
    listing = viewer_client.get(f"/threads/?q={EVIL}").content.decode()
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in listing
    thread = viewer_client.get(f"/threads/{EVIL}/").content.decode()
    assert "output: &lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in thread


def test_chart_json_cannot_close_its_script_tag(viewer_client, hostile_home: Path):
    body = viewer_client.get(f"/threads/{EVIL}/").content.decode()
    found = re.search(r'<script id="fill-figure" type="application/json">(.*?)</script>', body, re.S)
    assert found is not None
    assert "<" not in found.group(1)  # json_script escapes every < as \u003C


def test_pages_carry_no_inline_script(viewer_client, hostile_home: Path):
    for body in _pages(viewer_client):
        for tag in re.findall(r"<script\b[^>]*>", body):
            assert "src=" in tag or 'type="application/json"' in tag, tag

from __future__ import annotations

import re
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from tests.dashboard.planting import plant_thread

SAMPLE_KEY = "sk-ant-FAKE-sample-key"  # Mycel copied it into every checkpoint's metadata
PLANTED = {
    "api_key": "sk-planted-api-key-0001",
    "OPENAI_API_KEY": "sk-planted-openai-0002",
    "access_token": "planted-access-token-0003",
    "password": "planted-password-0004",
}
THREAD = "m_secretSecret-1"


def _every_page(client) -> list[tuple[str, str]]:
    urls = ["/", "/threads/"]
    listing = client.get("/threads/").content.decode()
    for thread_id in re.findall(r'<a class="mono" href="/threads/([^/]+)/">', listing):
        base = f"/threads/{thread_id}/"
        urls += [base, base + "?view=sent"]
        urls += [
            f"{base}panels/{name}/"
            for name in ("sandbox", "queue", "file-operations", "run-events", "integrity")
        ]
        body = client.get(base).content.decode()
        checkpoints = re.findall(rf"/threads/{re.escape(thread_id)}/checkpoints/([^/]+)/", body)
        urls += [f"{base}checkpoints/{cid}/" for cid in checkpoints[:3]]
    return [(url, client.get(url).content.decode()) for url in urls]


def test_no_planted_secret_reaches_any_page(viewer_client, sample_home: Path):
    plant_thread(
        sample_home / "leon.db",
        THREAD,
        [HumanMessage(content="hi", id="h"), AIMessage(content="hello", id="a")],
        metadata={**PLANTED, "model": "gpt-4o-mini"},
    )
    pages = _every_page(viewer_client)
    assert any(THREAD in body for _, body in pages)
    assert len(pages) > 40
    for url, body in pages:
        for secret in (SAMPLE_KEY, *PLANTED.values()):
            assert secret not in body, f"{secret} leaked on {url}"


def test_metadata_shows_that_a_key_was_redacted(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/m_0D8EzdJXJhk9-1/").content.decode()
    checkpoint = re.findall(r"/threads/m_0D8EzdJXJhk9-1/checkpoints/([^/]+)/", body)[0]
    page = viewer_client.get(f"/threads/m_0D8EzdJXJhk9-1/checkpoints/{checkpoint}/").content.decode()
    assert "api_key" in page and "[redacted]" in page

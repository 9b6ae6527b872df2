"""The dashboard's pages over Mycel dev's database on a real server: configured by LEON_POSTGRES_URL alone,
no screen knowing the engine; an unreachable server is said on the page, which still renders."""

from __future__ import annotations

from pathlib import Path

import pytest

HEAVY = "m_sK5yDq1FvT7a-3"  # 39 checkpoints, 44 head messages
HEAVY_HEAD = "1f1ed664-81a0-6488-802c-badfc4e83a5b"


def test_list_and_thread_pages_over_postgres(
    viewer_client, pg_dev_sample: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    listed = viewer_client.get("/threads/")
    assert listed.status_code == 200
    body = listed.content.decode()
    for thread_id in ("m_rE2uGx6NbP9w-1", "m_rE2uGx6NbP9w-2", "m_sK5yDq1FvT7a-1", "m_sK5yDq1FvT7a-2", HEAVY):
        assert thread_id in body
    assert "demo data" not in body
    page = viewer_client.get(f"/threads/{HEAVY}/")
    assert page.status_code == 200
    assert HEAVY_HEAD in page.content.decode()
    home = viewer_client.get("/")
    assert home.status_code == 200
    assert "schema agent" in home.content.decode()


def test_an_unreachable_server_is_said_on_the_page(
    viewer_client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEON_POSTGRES_URL", f"postgresql://reader:pw-hidden@/mycel?host={tmp_path / 'none'}")
    for path in ("/", "/threads/"):
        response = viewer_client.get(path)
        assert response.status_code == 200
        body = response.content.decode()
        assert "cannot reach the server" in body
        assert "pw-hidden" not in body

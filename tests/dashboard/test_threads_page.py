from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.mycel_env import point_env_at

SAMPLE_THREADS = (
    "m_npRsndIka9dx-1",
    "m_0D8EzdJXJhk9-1",
    "m_npRsndIka9dx-2",
    "m_0D8EzdJXJhk9-2",
    "m_0D8EzdJXJhk9-3",
    "m_npRsndIka9dx-3",
)
HTMX = {"HTTP_HX_REQUEST": "true"}


def _row_ids(body: str) -> list[str]:
    return re.findall(r'<a class="mono" href="/threads/([^/"]+)/"', body)


def test_thread_list_requires_login(client, db):
    response = client.get("/threads/")
    assert response.status_code == 302
    assert response.url.startswith("/login/")


def test_thread_list_shows_every_sample_thread(viewer_client, sample_home: Path):
    response = viewer_client.get("/threads/")
    assert response.status_code == 200
    assert sorted(_row_ids(response.content.decode())) == sorted(SAMPLE_THREADS)
    assert "HX-Request" in response["Vary"]


def test_htmx_request_gets_only_the_rows_partial(viewer_client, sample_home: Path):
    response = viewer_client.get("/threads/?q=Toad", **HTMX)
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="thread-rows"')
    assert "<html" not in body
    assert "HX-Request" in response["Vary"]


def test_history_restore_gets_the_full_page(viewer_client, sample_home: Path):
    response = viewer_client.get(
        "/threads/?q=Toad", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true"
    )
    assert "<html" in response.content.decode()


def test_search_matches_id_or_name(viewer_client, sample_home: Path):
    by_id = _row_ids(viewer_client.get("/threads/?q=0D8EzdJXJhk9").content.decode())
    assert sorted(by_id) == ["m_0D8EzdJXJhk9-1", "m_0D8EzdJXJhk9-2", "m_0D8EzdJXJhk9-3"]
    by_name = _row_ids(viewer_client.get("/threads/?q=morel").content.decode())
    assert sorted(by_name) == ["m_npRsndIka9dx-1", "m_npRsndIka9dx-2", "m_npRsndIka9dx-3"]


def test_filter_by_compacted_keeps_only_the_compacted_thread(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/?flag=compacted").content.decode()
    assert _row_ids(body) == ["m_0D8EzdJXJhk9-2"]


def test_filter_by_trimmed_finds_the_tool_heavy_thread(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/?flag=pruned").content.decode()
    assert "m_npRsndIka9dx-2" in _row_ids(body)
    assert "m_0D8EzdJXJhk9-1" not in _row_ids(body)


@pytest.mark.parametrize("order", ["asc", "desc"])
def test_sort_by_messages_orders_rows(viewer_client, sample_home: Path, order: str):
    body = viewer_client.get(f"/threads/?sort=messages&order={order}").content.decode()
    ids = _row_ids(body)
    counts = {"m_npRsndIka9dx-2": 31, "m_0D8EzdJXJhk9-2": 24, "m_npRsndIka9dx-1": 10}
    ranked = [i for i in ids if i in counts]
    expected = sorted(counts, key=counts.__getitem__, reverse=order == "desc")
    assert ranked == expected


@pytest.mark.parametrize(
    "sort", ["thread", "name", "model", "messages", "checkpoints", "updated", "bytes", "fill", "flags"]
)
def test_every_column_sorts(viewer_client, sample_home: Path, sort: str):
    response = viewer_client.get(f"/threads/?sort={sort}")
    assert response.status_code == 200
    assert len(_row_ids(response.content.decode())) == len(SAMPLE_THREADS)
    assert 'aria-sort="' in response.content.decode()


def test_bad_parameters_are_reported_and_ignored(viewer_client, sample_home: Path):
    response = viewer_client.get("/threads/?sort=evil&page=-3&flag=nope")
    body = response.content.decode()
    assert response.status_code == 200
    for warning in (
        "Ignored flag &#x27;nope&#x27;: Select a valid choice. nope is not one of the available choices.",
        "Ignored sort &#x27;evil&#x27;: Select a valid choice. evil is not one of the available choices.",
        "Ignored page &#x27;-3&#x27;: Ensure this value is greater than or equal to 1.",
    ):
        assert f'<p class="warning">{warning}</p>' in body
    assert len(_row_ids(body)) == len(SAMPLE_THREADS)


def test_context_fill_uses_the_overridden_limit(viewer_client, sample_home: Path):
    body = viewer_client.get("/threads/?q=m_0D8EzdJXJhk9-2&limit=1000").content.decode()
    assert "set in the URL" in body
    assert re.search(r"\d{3,} %", body)  # the estimate is far above a 1,000-token limit


def test_page_beyond_the_end_shows_the_last_page(viewer_client, sample_home: Path):
    response = viewer_client.get("/threads/?page=99")
    assert response.status_code == 200
    assert len(_row_ids(response.content.decode())) == len(SAMPLE_THREADS)


def test_missing_database_is_a_message_not_an_error(viewer_client, tmp_path: Path, monkeypatch):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    point_env_at(monkeypatch, empty)
    response = viewer_client.get("/threads/")
    assert response.status_code == 200
    assert "No threads found" in response.content.decode()


def test_corrupt_database_is_reported_in_the_page(viewer_client, sample_home: Path):
    for suffix in ("", "-wal", "-shm"):
        path = sample_home / f"leon.db{suffix}"
        if path.exists():
            path.unlink()
    (sample_home / "leon.db").write_bytes(b"this is not a database" * 100)
    response = viewer_client.get("/threads/")
    assert response.status_code == 200
    assert 'class="problem"' in response.content.decode()


def test_the_list_keeps_its_head_facts_in_the_dashboards_folder_only(
    viewer_client, sample_home: Path, settings
):
    from memory_core import memo
    from memory_core.stores.thread_list import derived
    from tests.core.store_builders import file_hashes

    before = file_hashes(sample_home)
    memo.reset()
    first = viewer_client.get("/threads/").content.decode()
    derived.flush()  # the facts file is written in the background
    [kept] = list(Path(settings.DASHBOARD_FACTS_DIR).glob("head-facts-*.sqlite3"))
    assert kept.stat().st_size > 0
    memo.reset()  # as a new worker would start: the facts come back from the file
    assert _row_ids(viewer_client.get("/threads/").content.decode()) == _row_ids(first)
    assert file_hashes(sample_home) == before
    assert not list(sample_home.rglob("head-facts-*"))


def test_sorting_by_context_fill_follows_mycels_estimate(viewer_client, sample_home: Path):
    from memory_core.stores.reader import MycelReader
    from tests.core.store_builders import point_locations

    reader = MycelReader(point_locations(sample_home))
    estimate = {t: reader.get_thread(t).value.estimated_tokens for t in SAMPLE_THREADS}
    # One limit for every thread, so the fill order is the estimate order.
    ranked = _row_ids(viewer_client.get("/threads/?sort=fill&order=desc&limit=100000").content.decode())
    assert [estimate[t] for t in ranked] == sorted(estimate.values(), reverse=True)
    ranked = _row_ids(viewer_client.get("/threads/?sort=fill&order=asc&limit=100000").content.decode())
    assert [estimate[t] for t in ranked] == sorted(estimate.values())


def test_a_sort_by_flags_keeps_the_estimates_a_later_fill_sort_reuses(
    viewer_client, sample_home: Path, monkeypatch
):
    from memory_core import memo
    from memory_core.stores.thread_list import listing

    memo.reset()  # this worker's facts and pruning verdicts from earlier tests
    assert viewer_client.get("/threads/?sort=flags").status_code == 200

    def no_decoding(*args, **kwargs):
        raise AssertionError("the flags sort had decoded this head already")

    monkeypatch.setattr(listing, "decode_checkpoint", no_decoding)
    # The same settings as the flags sort, so the visible page's pruning verdicts are kept too.
    ranked = _row_ids(viewer_client.get("/threads/?sort=fill&order=desc").content.decode())
    assert sorted(ranked) == sorted(SAMPLE_THREADS)


def test_the_fill_column_is_what_mycel_sent_at_the_last_call_beside_the_stored_estimate(
    viewer_client, sample_home, capsys, tmp_path, monkeypatch
):
    import json
    import re

    from memory_core.cli import main

    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    body = viewer_client.get("/threads/").content.decode()
    assert main(["calls", "m_0D8EzdJXJhk9-2", "--json"]) == 0
    last = json.loads(capsys.readouterr().out)[-1]
    row = re.search(r'<tr>\s*<td title="m_0D8EzdJXJhk9-2">.*?</tr>', body, re.S)
    assert row, "no row for the compacting thread"
    cell = row.group(0)
    sent = round(100 * last["estimated_tokens"]["sent"] / last["context_limit"])
    assert f'<span class="num sent-fill">{sent} %</span>' in cell
    assert 'class="muted small stored-fill">stored ' in cell
    assert "re-compacts every call" in cell  # Mycel main compacted again at each of its last calls
    flagged = viewer_client.get("/threads/", {"flag": "recompacts"}).content.decode()
    assert "m_0D8EzdJXJhk9-2" in flagged and "m_npRsndIka9dx-2" not in flagged

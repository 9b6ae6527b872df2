"""The thread list's head facts: reused only under the key they came from, kept in our own cache file.

Every list here is compared with one derived from scratch (no facts at all), so a fact reused under the wrong
key, or read back wrong from the cache file, shows up as a different row.
"""

from __future__ import annotations

import gc
import logging
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver

from memory_core import memo
from memory_core.records import ThreadRow
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite.connect import opened
from memory_core.stores.thread_list import derived, listing
from memory_core.stores.thread_list.derived import DerivedFacts, HeadFacts, default_folder
from memory_core.stores.thread_list.threads import checkpoint_heads
from tests.core.store_builders import build_thread, file_hashes, point_locations

MODEL = {"model": "claude-opus-4-6", "api_key": "sk-ant-FAKE-facts-key"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    for n in range(3):
        build_thread(folder / "leon.db", f"t{n}", turns=n + 1, configurable=MODEL)
    return folder


def listed(home: Path, facts: Path | None) -> tuple[ThreadRow, ...]:
    # A fresh list each time: the list kept per files version would hide what the facts did.
    memo.reset()
    rows = MycelReader(point_locations(home), facts_folder=facts).list_threads().value
    derived.flush()  # the cache file is written in the background
    return rows


def from_scratch(home: Path) -> tuple[ThreadRow, ...]:
    return listed(home, None)


def cache_files(folder: Path) -> list[Path]:
    derived.flush()
    return sorted(folder.glob("head-facts-*.sqlite3"))


def test_a_new_process_reads_the_facts_back_and_lists_the_same_rows(home: Path, tmp_path: Path) -> None:
    facts = tmp_path / "facts"
    first = listed(home, facts)
    assert first == from_scratch(home)
    assert {r.thread_id: r.messages for r in first} == {"t0": 5, "t1": 10, "t2": 15}
    assert all(r.model == "claude-opus-4-6" and r.bytes_on_disk > 0 for r in first)
    [cache] = cache_files(facts)
    with closing(sqlite3.connect(cache)) as conn:
        kept = conn.execute("SELECT thread_id, messages, model FROM head_facts ORDER BY thread_id").fetchall()
    assert kept == [
        ("t0", 5, "claude-opus-4-6"),
        ("t1", 10, "claude-opus-4-6"),
        ("t2", 15, "claude-opus-4-6"),
    ]
    # listed() forgets the in-memory facts, so this reads them back from the file, as a new worker would.
    assert listed(home, facts) == first


def test_facts_are_derived_again_for_a_thread_that_moved(home: Path, tmp_path: Path) -> None:
    facts = tmp_path / "facts"
    before = {r.thread_id: r for r in listed(home, facts)}
    build_thread(home / "leon.db", "t0", turns=2, configurable={"model": "gpt-5"})  # two more turns
    after = listed(home, facts)
    assert after == from_scratch(home)
    moved = {r.thread_id: r for r in after}["t0"]
    assert moved.messages > before["t0"].messages
    assert moved.checkpoints > before["t0"].checkpoints
    assert moved.bytes_on_disk > before["t0"].bytes_on_disk
    assert moved.model == "gpt-5"
    assert {r.thread_id: r for r in after}["t2"] == before["t2"]


def test_only_pending_writes_added_under_the_same_head_still_change_the_bytes(
    home: Path, tmp_path: Path
) -> None:
    """put_writes records a task's writes under the current head before any new checkpoint."""
    facts = tmp_path / "facts"
    before = {r.thread_id: r for r in listed(home, facts)}
    with closing(sqlite3.connect(home / "leon.db", check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        config = saver.get_tuple({"configurable": {"thread_id": "t1"}}).config  # type: ignore[union-attr]
        saver.put_writes(config, [("messages", "x" * 5000)], task_id="pending-task")
    after = {r.thread_id: r for r in listed(home, facts)}
    assert list(after.values()) == list(from_scratch(home))
    assert after["t1"].head_checkpoint_id == before["t1"].head_checkpoint_id
    assert after["t1"].bytes_on_disk > before["t1"].bytes_on_disk + 5000


def test_a_deleted_thread_leaves_the_list_and_a_new_one_with_its_id_starts_afresh(
    home: Path, tmp_path: Path
) -> None:
    facts = tmp_path / "facts"
    listed(home, facts)
    with closing(sqlite3.connect(home / "leon.db", check_same_thread=False)) as conn:
        SqliteSaver(conn).delete_thread("t2")
    assert [r.thread_id for r in listed(home, facts)] == ["t1", "t0"]
    build_thread(home / "leon.db", "t2", turns=1, configurable={"model": "gpt-5"})
    again = {r.thread_id: r for r in listed(home, facts)}
    assert list(again.values()) == list(from_scratch(home))
    assert (again["t2"].messages, again["t2"].model) == (5, "gpt-5")


def test_a_replaced_leon_db_never_reuses_facts_derived_from_the_old_file(home: Path, tmp_path: Path) -> None:
    facts = tmp_path / "facts"
    listed(home, facts)
    other = tmp_path / "other"
    other.mkdir()
    build_thread(other / "leon.db", "t0", turns=1, configurable={"model": "gpt-5"})
    (home / "leon.db").unlink()
    (other / "leon.db").rename(home / "leon.db")
    assert listed(home, facts) == from_scratch(home)
    assert len(cache_files(facts)) == 2


def test_a_corrupt_cache_file_is_set_aside_with_a_warning(
    home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    facts = tmp_path / "facts"
    listed(home, facts)
    [cache] = cache_files(facts)
    cache.write_bytes(b"not a database at all" * 100)
    with caplog.at_level(logging.WARNING, logger="memory_core.stores.thread_list.derived"):
        assert listed(home, facts) == from_scratch(home)
    assert "head facts cache" in caplog.text
    assert cache_files(facts) == [], "set aside, and this process keeps its facts in memory only"


def test_an_unwritable_cache_folder_keeps_facts_in_memory(
    home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING, logger="memory_core.stores.thread_list.derived"):
        assert listed(home, blocker / "facts") == from_scratch(home)
    assert "keeping facts in memory only" in caplog.text
    assert blocker.read_text() == "a file where the folder should be"


def test_mycel_files_stay_byte_identical_and_hold_no_cache(home: Path, tmp_path: Path) -> None:
    before = file_hashes(home)
    listed(home, tmp_path / "facts")
    listed(home, tmp_path / "facts")
    assert file_hashes(home) == before


def test_a_fact_is_reused_only_under_its_exact_key(tmp_path: Path) -> None:
    facts = DerivedFacts(("leon.db", 1, 2), tmp_path)
    kept = HeadFacts(3, "id-3", 900, 7, "m")
    facts.remember({"t": kept})
    assert facts.lookup("t", 3, "id-3") == kept
    assert facts.lookup("t", 4, "id-3") is None
    assert facts.lookup("t", 3, "id-4") is None
    assert facts.lookup("u", 3, "id-3") is None
    assert DerivedFacts(("leon.db", 1, 2), tmp_path).lookup("t", 3, "id-3") == kept, "read back from the file"
    assert DerivedFacts(("leon.db", 1, 3), tmp_path).lookup("t", 3, "id-3") is None, "another file's facts"


def test_a_few_lookups_read_their_rows_and_many_load_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A look that caught up one moved thread of a big fleet must not load every thread's facts to find it.
    monkeypatch.setattr(derived, "POINT_READS", 3)
    database = ("leon.db", 1, 2)
    every = {
        f"t{n}": HeadFacts(n + 1, f"id-{n}", 100 * n, n, "m", breaker_open=bool(n % 2)) for n in range(10)
    }
    DerivedFacts(database, tmp_path).remember(every)
    derived.flush()
    fresh = DerivedFacts(database, tmp_path)
    assert fresh.lookup("t4", 5, "id-4") == every["t4"]
    assert fresh.lookup("t5", 6, "id-5") == every["t5"]  # the flag read back as a bool, as a load reads it
    assert fresh.lookup("t4", 9, "id-4") is None  # its key, even row by row
    assert fresh._facts is None  # noqa: SLF001 - what the point reads leave: nothing loaded
    new = HeadFacts(1, "id-new", 5, 0, None)
    fresh.remember({"t-new": new})  # not loaded: the file alone takes it, and the next reads find it
    assert fresh._facts is None  # noqa: SLF001
    assert fresh.lookup("t1", 2, "id-1") == every["t1"]  # the fourth lookup loads the file whole
    assert fresh._facts is not None and len(fresh._facts) == 11  # noqa: SLF001
    assert fresh.lookup("t-new", 1, "id-new") == new


def test_an_older_cache_version_is_rebuilt(tmp_path: Path) -> None:
    DerivedFacts(("leon.db", 1, 2), tmp_path).remember({"t": HeadFacts(3, "id-3", 900, 7, "m")})
    [cache] = cache_files(tmp_path)
    with closing(sqlite3.connect(cache)) as conn:
        conn.execute("PRAGMA user_version = 0")
    assert DerivedFacts(("leon.db", 1, 2), tmp_path).lookup("t", 3, "id-3") is None


def test_the_command_line_cache_folder_follows_the_environment(tmp_path: Path) -> None:
    assert default_folder({"MYCEL_MEMORY_CACHE_DIR": "/x/y"}) == Path("/x/y")
    assert default_folder({"XDG_CACHE_HOME": "/c"}) == Path("/c/mycel-memory")
    assert default_folder({}) == Path.home() / ".cache" / "mycel-memory"


def test_the_cli_keeps_its_facts_in_the_configured_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memory_core.cli import main as cli_main
    from tests.support.mycel_env import point_env_at

    point_env_at(monkeypatch, home)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cli-cache"))
    memo.reset()
    assert cli_main(["threads", "--json"]) == 0
    assert len(cache_files(tmp_path / "cli-cache")) == 1
    assert "sk-ant" not in capsys.readouterr().out


def test_reads_leave_the_cyclic_collector_alone(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A process-wide switch inside a read would pause the collector for every other request's thread."""
    switched: list[str] = []
    monkeypatch.setattr(gc, "disable", lambda: switched.append("disable"))
    monkeypatch.setattr(gc, "enable", lambda: switched.append("enable"))
    rows = listed(home, None)
    reader = MycelReader(point_locations(home))
    estimates = reader.head_estimates(rows).value
    one = reader.get_thread("t2").value
    assert one is not None and estimates["t2"] == one.estimated_tokens and one.estimated_tokens > 0
    assert switched == []


def test_bytes_summed_beside_the_heads_are_used_only_where_their_key_matches(home: Path) -> None:
    """On a first list the bytes are summed in another snapshot; a commit between the two must not leak in."""
    with opened(home / "leon.db", store="main", timeout_s=5, row_cap=1000) as db, db.snapshot():
        truth = checkpoint_heads(db)
        beside = {
            t: (h.checkpoints, h.head_checkpoint_id, 100 + n)
            for n, (t, h) in enumerate(sorted(truth.items()))
        }
        beside["t0"] = (truth["t0"].checkpoints - 1, "an-older-head", 1)  # summed before t0's last commit
        got = checkpoint_heads(db, summed=lambda: beside)
    assert (got["t1"].checkpoint_bytes, got["t2"].checkpoint_bytes) == (101, 102), (
        "matching keys: used as summed"
    )
    assert got["t0"].checkpoint_bytes == truth["t0"].checkpoint_bytes > 1, "a moved key: summed again here"


def test_head_estimates_are_mycels_estimate_and_a_new_process_reads_them_back(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = tmp_path / "facts"
    rows = listed(home, facts)
    assert all(r.estimated_tokens is None for r in rows), "nothing asked for yet"
    reader = MycelReader(point_locations(home), facts_folder=facts)
    decoded = {r.thread_id: reader.get_state(r.thread_id).value.checkpoint.estimated_tokens for r in rows}  # type: ignore[union-attr]
    estimates = reader.head_estimates(rows)
    assert estimates.value == decoded and estimates.problems == ()
    assert all(v > 100 for v in decoded.values())

    def no_decoding(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kept estimate was decoded again")

    monkeypatch.setattr(listing, "decode_checkpoint", no_decoding)
    again = listed(home, facts)  # a new process: facts come back from the file
    assert {r.thread_id: r.estimated_tokens for r in again} == decoded
    assert MycelReader(point_locations(home), facts_folder=facts).head_estimates(again).value == decoded
    # Rows that do not carry the estimate (listed before it was known) find it in the kept facts.
    assert MycelReader(point_locations(home), facts_folder=facts).head_estimates(rows).value == decoded


def test_an_unreadable_head_has_no_estimate_and_the_others_still_do(home: Path, tmp_path: Path) -> None:
    rows = {r.thread_id: r for r in listed(home, tmp_path / "facts")}
    with closing(sqlite3.connect(home / "leon.db")) as conn, conn:
        conn.execute(
            "UPDATE checkpoints SET checkpoint = x'c1c1c1' WHERE thread_id = 't1' AND checkpoint_id = ?",
            (rows["t1"].head_checkpoint_id,),
        )
    fresh = listed(home, tmp_path / "other-facts")
    estimates = MycelReader(point_locations(home), facts_folder=tmp_path / "other-facts").head_estimates(
        fresh
    )
    assert estimates.value["t1"] is None
    assert estimates.value["t0"] and estimates.value["t2"]


def test_the_facts_file_holds_no_secret_from_the_metadata(home: Path, tmp_path: Path) -> None:
    rows = listed(home, tmp_path / "facts")
    MycelReader(point_locations(home), facts_folder=tmp_path / "facts").head_estimates(rows)
    [cache] = cache_files(tmp_path / "facts")
    stored = b"".join(p.read_bytes() for p in cache.parent.iterdir())
    assert b"claude-opus-4-6" in stored, "the model is kept, so these are the facts' bytes"
    assert b"sk-ant" not in stored and b"FAKE-facts-key" not in stored


def test_requests_arriving_together_decode_each_head_once(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = listed(home, tmp_path / "facts")
    decoded: list[str] = []
    real = listing.decode_checkpoint

    def counting(kind: str | None, blob: bytes | None, **options: bool) -> object:
        decoded.append("one")
        time.sleep(0.05)  # long enough for the other requests to arrive meanwhile
        return real(kind, blob, **options)

    monkeypatch.setattr(listing, "decode_checkpoint", counting)
    reader = MycelReader(point_locations(home), facts_folder=tmp_path / "facts")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: reader.head_estimates(rows).value, range(4)))
    assert all(r == results[0] for r in results) and all(v for v in results[0].values())
    assert len(decoded) == len(rows) == 3


def test_facts_remembered_before_any_lookup_keep_those_in_the_file(tmp_path: Path) -> None:
    DerivedFacts(("leon.db", 1, 2), tmp_path).remember({"t": HeadFacts(3, "id-3", 900, 7, "m")})
    later = DerivedFacts(("leon.db", 1, 2), tmp_path)  # a new process that learns something first
    later.remember({"u": HeadFacts(1, "id-1", 10, 1, "m")})
    assert later.lookup("t", 3, "id-3") is not None and later.lookup("u", 1, "id-1") is not None


def test_reading_one_thread_in_a_new_process_reads_its_row_not_the_facts_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fleet index's look reads a moved thread alone: loading every thread's facts for it cost a 100,000-
    # thread leon.db ~280 ms a look (tests/benchmarks/bench_fleet.py, the page after a new checkpoint).
    facts = tmp_path / "facts"
    every = {row.thread_id: row for row in listed(home, facts)}
    loads: list[str] = []
    load = DerivedFacts._load  # noqa: SLF001

    def counted(self: DerivedFacts) -> dict[str, HeadFacts]:
        loads.append("load")
        return load(self)

    monkeypatch.setattr(DerivedFacts, "_load", counted)
    memo.reset()  # a new process: nothing in memory, the facts file on disk
    reader = MycelReader(point_locations(home), facts_folder=facts)
    [one] = reader.read_thread_rows(["t1"]).value
    derived.flush()
    assert loads == []
    again = {row.thread_id: row for row in reader.list_threads().value}  # a whole list loads the file, once
    assert loads == ["load"]
    assert one == again["t1"] and again.keys() == every.keys()

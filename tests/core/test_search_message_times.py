"""A search hit's time is its message's: when the checkpoint that first held it was written, read from the
steps' writes (stores/message_times.py) and, where they cannot say it, from the checkpoints' message counts;
never the thread head's (an undo written days later moved every hit of the thread to that day). The
since/until filters follow it. Over Mycel's own sample home."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

from memory_core import memo
from memory_core.app.search import _first_held, default_index, search
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import point_locations
from tests.dashboard.planting import plant_thread


def _reader(home: Path) -> MycelReader:
    memo.reset()
    return MycelReader(point_locations(home), facts_folder=home / "cache")


def test_the_writes_say_what_the_checkpoints_say(sample_home: Path) -> None:
    reader = _reader(sample_home)
    rows = reader.list_threads().value
    from_writes = reader.message_times(rows).value
    compared = 0
    for row in rows:
        times = from_writes[row.thread_id]
        held = _first_held(reader, row, row.messages or 0, [])
        assert None not in held and len(held) == row.messages
        if times is not None:
            assert times == held, row.thread_id
            compared += 1
        # Older messages were first held before the head was written.
        assert held[0] is not None and row.updated_at is not None and held[0] < row.updated_at
    # A step of parallel tool calls has no known order, but one time: most threads are read from writes.
    assert compared >= 5


def test_a_hit_has_its_messages_time_and_the_filters_follow_it(sample_home: Path) -> None:
    reader = _reader(sample_home)
    thread = "m_0D8EzdJXJhk9-1"  # "Toad, explain a write-ahead log in two sentences." then two more turns
    row = reader.get_thread(thread).value
    assert row is not None and row.updated_at is not None
    index = default_index(reader)
    hits = search(reader, '"explain a write-ahead log"', thread=thread, index=index).hits
    assert [h.index for h in hits] == [0]
    first_held = _first_held(reader, row, row.messages or 0, [])[0]
    assert first_held is not None
    assert hits[0].at == first_held and first_held < row.updated_at - timedelta(seconds=1)
    # Until just after the message was said (before the head was written): it is found.
    until = first_held + timedelta(milliseconds=500)
    found = search(reader, '"explain a write-ahead log"', thread=thread, until=until, index=index).hits
    assert [h.index for h in found] == [0]
    # Since just after it: it is not, though its thread went on later.
    later = search(reader, '"explain a write-ahead log"', thread=thread, since=until, index=index).hits
    assert later == ()


def test_a_thread_its_writes_cannot_explain_takes_its_checkpoints_times(sample_home: Path) -> None:
    # One checkpoint written whole, with no step's writes (as a rollback or an import writes one): the
    # checkpoints say when its messages were first held.
    checkpoint_id = plant_thread(
        sample_home / "leon.db",
        "t-planted",
        [HumanMessage("a lonely narwhal", id="h"), AIMessage("ok", id="a")],
    )
    reader = _reader(sample_home)
    row = reader.get_thread("t-planted").value
    assert row is not None
    assert reader.message_times([row]).value["t-planted"] is None
    hits = search(reader, "narwhal", index=default_index(reader)).hits
    assert [(h.thread_id, h.index) for h in hits] == [("t-planted", 0)]
    assert hits[0].at == time_of_checkpoint_id(checkpoint_id)

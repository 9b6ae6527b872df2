"""`calls` over Mycel dev's own Postgres database against `driver_log.json`, the scripted model's record of
what it received at every call: the same calls, and in each request the same messages (type and size),
Mycel's unstored system prompt set aside.

Only the threads whose record needs no dev memory rule are compared here. `m_rE2uGx6NbP9w-1` compacted
under dev's trigger (estimated on the summarized view, so no repeated compaction); with main's rules the
record reads two later calls as compactions not stored. Dev's rules are issue 13.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memory_core.messages import MessageType
from memory_core.model_view import model_view
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_calls import configured_for, thread_calls
from memory_core.stores.thread_settings import thread_memory_settings
from memory_core.tokens import content_chars
from tests.conftest import PG_DEV_SAMPLE

MAIN_RULES_SUFFICE = ("m_sK5yDq1FvT7a-1", "m_rE2uGx6NbP9w-2", "m_sK5yDq1FvT7a-2", "m_sK5yDq1FvT7a-3")
_KINDS = {
    MessageType.SYSTEM: "system",
    MessageType.HUMAN: "human",
    MessageType.AI: "ai",
    MessageType.TOOL: "tool",
}


@pytest.fixture
def dev_reader(pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MycelReader:
    # Dev writes summaries to its SQLite fallback at LEON_DB_PATH when Supabase is not configured.
    shutil.copy(PG_DEV_SAMPLE / "leon.db", tmp_path / "leon.db")
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    return MycelReader(resolve_locations())


@pytest.mark.parametrize("thread_id", MAIN_RULES_SUFFICE)
def test_every_request_is_what_the_model_received(dev_reader: MycelReader, thread_id: str) -> None:
    logged = [
        c for c in json.loads((PG_DEV_SAMPLE / "driver_log.json").read_text())["model_calls"]
        if c["thread"] == thread_id and c["kind"] == "step"
    ]  # fmt: skip
    row = dev_reader.get_thread(thread_id).value
    assert row is not None
    locations = dev_reader.locations
    record = thread_calls(
        dev_reader, row, configured_for(locations, thread_memory_settings(locations, row)), counter=None
    )
    assert len(record.calls) == len(logged)
    for call, seen in zip(record.calls, logged, strict=True):
        settings = record.inference.segments[call.segment].settings
        view = model_view(record.messages[: call.index], settings=settings, summary=call.summary)
        sent = [[_KINDS.get(m.type, "other"), content_chars(m.content)] for m in view.messages]
        assert seen["sent"][0][0] == "system"  # Mycel's system prompt, never stored
        assert sent == seen["sent"][1:], (thread_id, call.call)
        assert call.request_messages == len(seen["sent"])

"""`calls` over Mycel dev's own Postgres database against `driver_log.json`, the scripted model's record of
what it received at every call: the same calls, and in each request the same messages (type and size),
Mycel's unstored system prompt set aside.

Every thread of the sample, under the rules of its layout (dev's): `m_rE2uGx6NbP9w-1` compacts three
times under a 6000-token window, once per trigger crossing (dev estimates on the summarized view), and
`m_sK5yDq1FvT7a-2`'s summariser fails until the breaker opens.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memory_core.app.calls import ThreadCalls, configured_for, thread_calls
from memory_core.app.thread_settings import thread_memory_settings
from memory_core.cli import main
from memory_core.messages import MessageType
from memory_core.model_view import model_view
from memory_core.rules.profile import RulesProfile
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.tokens import content_chars
from tests.support.cli import cli_json
from tests.support.sample_data import PG_DEV_SAMPLE

THREADS = ("m_sK5yDq1FvT7a-1", "m_rE2uGx6NbP9w-1", "m_rE2uGx6NbP9w-2", "m_sK5yDq1FvT7a-2", "m_sK5yDq1FvT7a-3")
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


def _logged(thread_id: str, kind: str = "step") -> list[dict[str, Any]]:
    return [
        c for c in json.loads((PG_DEV_SAMPLE / "driver_log.json").read_text())["model_calls"]
        if c["thread"] == thread_id and (c["kind"] == "step") == (kind == "step")
    ]  # fmt: skip


def _record(reader: MycelReader, thread_id: str) -> ThreadCalls:
    row = reader.get_thread(thread_id).value
    assert row is not None
    locations = reader.locations
    return thread_calls(
        reader, row, configured_for(locations, thread_memory_settings(locations, row)), counter=None
    )


@pytest.mark.parametrize("thread_id", THREADS)
def test_every_request_is_what_the_model_received(dev_reader: MycelReader, thread_id: str) -> None:
    logged = _logged(thread_id)
    record = _record(dev_reader, thread_id)
    assert (record.rules, record.rules_reason) == (RulesProfile.DEV, "dev layout")
    assert len(record.calls) == len(logged)
    for call, seen in zip(record.calls, logged, strict=True):
        settings = record.inference.segments[call.segment].settings
        view = model_view(record.messages[: call.index], settings=settings, summary=call.summary)
        sent = [[_KINDS.get(m.type, "other"), content_chars(m.content)] for m in view.messages]
        assert seen["sent"][0][0] == "system"  # Mycel's system prompt, never stored
        assert sent == seen["sent"][1:], (thread_id, call.call)
        assert call.request_messages == len(seen["sent"])


def _compacting_calls(record: ThreadCalls) -> list[int]:
    return [c.index for c in record.calls if c.compacted]


def test_dev_compacts_once_per_trigger_crossing_not_at_every_call(dev_reader: MycelReader) -> None:
    record = _record(dev_reader, "m_rE2uGx6NbP9w-1")
    # The summary rows (compacted_at 11, 16, 19) and the three summariser calls of the driver log.
    assert _compacting_calls(record) == [11, 16, 19] == sorted(r.compacted_at for r in record.summaries)
    assert len(_logged("m_rE2uGx6NbP9w-1", "summary")) == 3
    assert all(c.compaction_stored for c in record.calls)
    over_stored_trigger = [c.index for c in record.calls if c.pruned_tokens > c.trigger_tokens]
    assert over_stored_trigger == [11, 14, 16, 19, 21]  # main's rules would re-compact at 14 and 21
    assert record.calls[-1].context_limit == 6000  # leon:tiny, inferred from the rows
    assert record.inference.disagreements == (
        "Under Mycel dev's rules the thread's summary rows and notices need a context limit near 6,000; "
        "today's config gives 1,000,000.",
    )
    assert record.calls[-1].breaker_failures == 0 and not record.calls[-1].breaker_open


def test_the_breaker_opens_after_three_failed_attempts(dev_reader: MycelReader) -> None:
    record = _record(dev_reader, "m_sK5yDq1FvT7a-2")
    attempts = [c.index for c in record.calls if c.attempted]
    # Three summariser calls in the driver log, all failed: no compaction, then the breaker stops trying.
    assert len(_logged("m_sK5yDq1FvT7a-2", "summary")) == 3 == len(attempts)
    assert attempts == [13, 15, 17]
    assert not any(c.compacted for c in record.calls)
    breaker = [(c.index, c.breaker_failures, c.breaker_open) for c in record.calls]
    assert breaker[6:9] == [(13, 1, False), (15, 2, False), (17, 3, True)]
    later = [c for c in record.calls if c.index > 17]
    assert later and all(c.over_trigger and not c.attempted and c.breaker_open for c in later)
    assert record.calls[-1].context_limit == 6000  # only a limit near leon:tiny's explains the breaker
    # The head's memory_compaction_state channel says the same.
    row = dev_reader.get_thread("m_sK5yDq1FvT7a-2").value
    assert row is not None and (row.breaker_failures, row.breaker_open) == (3, True)


def test_calls_and_thread_json_name_the_rules_and_why(
    dev_reader: MycelReader, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = cli_json(capsys, "calls", "m_sK5yDq1FvT7a-2", "--json")
    assert {(c["rules"], c["rules_reason"]) for c in calls} == {("dev", "dev layout")}
    assert [c["call"] for c in calls if c["attempted"]] == [7, 8, 9]
    assert calls[-1]["breaker"] == {"failure_count": 3, "open": True}
    thread = cli_json(capsys, "thread", "m_sK5yDq1FvT7a-2", "--json")
    assert (thread["rules"], thread["rules_reason"]) == ("dev", "dev layout")
    as_main = cli_json(capsys, "calls", "m_rE2uGx6NbP9w-1", "--json", "--rules", "main")
    assert {(c["rules"], c["rules_reason"]) for c in as_main} == {("main", "--rules")}
    # Main's rules read the two calls after each crossing as compactions whose row is missing.
    assert [c["message_index"] for c in as_main if c["compacted"] and not c["summary_stored"]] == [14, 21]


def test_whatif_under_dev_rules_moves_the_compactions_with_trigger_tokens(
    dev_reader: MycelReader, capsys: pytest.CaptureFixture[str]
) -> None:
    thread = "m_rE2uGx6NbP9w-1"
    low = cli_json(capsys, "whatif", thread, "--json", "--context-limit", "6000", "--trigger-tokens", "3000")
    high = cli_json(capsys, "whatif", thread, "--json", "--context-limit", "6000", "--trigger-tokens", "5000")
    assert low["current"] == high["current"] == cli_json(capsys, "calls", thread, "--json")
    first_low = next(c["call"] for c in low["proposed"] if c["compacted"])
    first_high = next(c["call"] for c in high["proposed"] if c["compacted"])
    assert first_low < first_high
    assert all(c["trigger_tokens"] == 3000 for c in low["proposed"])
    assert not any(c["summary_stored"] and c["compacted"] for c in low["proposed"])  # simulated summaries


def test_trigger_tokens_under_main_rules_is_one_line(
    dev_reader: MycelReader, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["whatif", "m_rE2uGx6NbP9w-1", "--rules", "main", "--trigger-tokens", "10"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--trigger-tokens" in err[0]


def test_without_summary_rows_the_compact_notices_say_where_dev_compacted(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No leon.db: dev stored no summary row, only its compact notices in the history.
    monkeypatch.setenv("LEON_POSTGRES_URL", pg_dev_sample)
    monkeypatch.setenv("LEON_DB_PATH", str(tmp_path / "leon.db"))
    monkeypatch.setenv("MYCEL_CONFIG_HOME", str(tmp_path))
    reader = MycelReader(resolve_locations())
    record = _record(reader, "m_rE2uGx6NbP9w-1")
    assert record.summaries == ()
    assert _compacting_calls(record) == [11, 16, 19]
    assert not any(c.compaction_stored for c in record.calls if c.compacted)
    assert [c.request_messages for c in record.calls] == [len(s["sent"]) for s in _logged("m_rE2uGx6NbP9w-1")]

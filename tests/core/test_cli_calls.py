"""`mycel-memory calls`, `whatif` and `thread --json`'s settings in force, on the sample home (Mycel's own
rows) and the demo home's standalone thread."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.cli import main
from memory_core.demo import write_demo_home
from tests.support.cli import cli_json, run_cli
from tests.support.mycel_env import point_env_at

COMPACTING = "m_0D8EzdJXJhk9-2"
CALL_KEYS = {
    "call", "checkpoint_id", "message_index", "request_messages", "compacted", "split_turn", "summary_id",
    "summary_stored", "summary_compact_up_to_index", "summary_tokens_by_provider", "estimated_tokens", "tiktoken_tokens",
    "provider_input_tokens", "soft_trimmed", "hard_cleared", "over_trigger", "trigger_tokens", "context_limit",
    "context_limit_source", "summariser_requests",
}  # fmt: skip


@pytest.fixture
def facts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "facts"
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(folder))
    return folder


def test_calls_prints_one_object_per_model_call_from_mycels_rows(sample_home, facts, capsys) -> None:
    calls = cli_json(capsys, "calls", COMPACTING, "--json")
    assert [c["call"] for c in calls] == list(range(1, 13))
    assert all(set(c) == CALL_KEYS for c in calls)
    compacted = [c for c in calls if c["compacted"]]
    # Mycel's summary.db rows: compacted_at 11, 13, …, 23; compact_up_to_index 4, 4, 12, 12, 16, 16, 16
    assert [c["message_index"] for c in compacted] == list(range(11, 24, 2))
    assert [c["summary_compact_up_to_index"] for c in compacted] == [4, 4, 12, 12, 16, 16, 16]
    assert [c["request_messages"] for c in compacted] == [
        2 + at - up for at, up in zip(range(11, 24, 2), [4, 4, 12, 12, 16, 16, 16], strict=True)
    ]
    assert [c["split_turn"] for c in compacted] == [False, False, True, False, True, True, False]
    assert all(c["summary_stored"] and c["summary_id"] for c in compacted)
    # Mycel main's summariser got one request per compaction, and a second for a split turn's prefix.
    assert [len(c["summariser_requests"]) for c in calls] == [
        (1 + c["split_turn"]) if c["compacted"] else 0 for c in calls
    ]
    for c in compacted:
        history = c["summariser_requests"][0]
        assert [m["role"] for m in history["messages"]] == ["system", "human"]
        assert history["messages"][0]["chars"] == 393 and history["max_tokens"] is None  # main's prompt
        assert history["summarised_messages"] >= 2
    assert {c["context_limit"] for c in calls} == {5500} and calls[0]["context_limit_source"] == "models.json"
    again = cli_json(capsys, "calls", COMPACTING, "--json")  # warm: from the kept facts
    assert again == calls
    assert list(facts.iterdir())
    thread = cli_json(capsys, "thread", COMPACTING, "--json")
    assert thread["recompacts_every_call"] is True  # Mycel main compacted again at every call from call 6
    assert thread["disagreements"] == [] and thread["compactions_not_stored"] == []


def test_whatif_current_is_calls_and_proposes_nothing_without_flags(sample_home, facts, capsys) -> None:
    calls = cli_json(capsys, "calls", COMPACTING, "--json")
    both = cli_json(capsys, "whatif", COMPACTING, "--json")
    assert both["current"] == calls and both["proposed"] == calls
    bigger = cli_json(capsys, "whatif", COMPACTING, "--context-limit", "100000", "--json")
    assert bigger["current"] == calls
    assert not any(c["compacted"] for c in bigger["proposed"])
    assert {c["context_limit"] for c in bigger["proposed"]} == {100_000}
    assert set(bigger["proposed"][0]) == CALL_KEYS
    # Totals per side: no compaction proposed, so nothing goes to the summariser.
    summariser_now = sum(r["chars"] for c in calls for r in c["summariser_requests"])
    assert bigger["totals"]["current"]["summariser_chars"] == summariser_now > 0
    assert bigger["totals"]["proposed"] == {
        "sent_tokens": sum(c["estimated_tokens"]["sent"] for c in bigger["proposed"]),
        "compactions": 0,
        "summariser_chars": 0,
    }


def test_whatif_table_names_the_proposal_and_says_when_there_is_none(sample_home, facts, capsys) -> None:
    calls = cli_json(capsys, "calls", COMPACTING, "--json")
    code, out, _ = run_cli(capsys, "whatif", COMPACTING)
    lines = out.splitlines()
    assert code == 0
    assert lines[0] == f"what-if for {COMPACTING}: no proposal"
    assert lines[1].startswith("no change proposed: both columns are the record")
    total = next(line for line in lines if line.startswith("TOTAL")).split()
    sent = sum(c["estimated_tokens"]["sent"] for c in calls)
    compacted = sum(1 for c in calls if c["compacted"])
    assert total == ["TOTAL", f"{sent:,}", f"{sent:,}", "0", str(compacted), str(compacted)]
    # A proposal: named in the header, each call's change signed, the totals beside them.
    code, out, _ = run_cli(capsys, "whatif", COMPACTING, "--context-limit", "100000")
    lines = out.splitlines()
    assert lines[0] == f"what-if for {COMPACTING}: proposal context_limit=100,000"
    assert "no change proposed" not in out
    total = next(line for line in lines if line.startswith("TOTAL")).split()
    assert total[1] == f"{sent:,}" and total[4:] == [str(compacted), "0"]
    assert total[3].startswith("+")  # nothing compacts under the bigger window: more is sent


def test_thread_json_names_the_limit_in_force_and_where_the_record_disagrees(
    tmp_path, monkeypatch, facts, capsys
) -> None:
    folder = tmp_path / "demo"
    write_demo_home(folder, seed=7)
    point_env_at(monkeypatch, folder)
    thread = cli_json(capsys, "thread", "interactive-chat", "--json")
    assert thread["context_limit"] == 6000
    assert thread["context_limit_source"] == "inferred from summaries"
    (line,) = thread["disagreements"]
    assert "the config in force then gives 1,000,000" in line
    (segment,) = thread["settings_in_force"]
    assert segment["consistent_limits"][0][0] <= 6000 <= segment["consistent_limits"][0][1]
    text_run = main(["calls", "interactive-chat"])
    out = capsys.readouterr().out
    assert text_run == 0 and "note: The stored summaries of the thread need a context limit" in out


def test_an_unknown_thread_is_one_clear_line(sample_home, facts, capsys) -> None:
    assert main(["calls", "no-such-thread"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mycel-memory: error: unknown thread 'no-such-thread'") and "Traceback" not in err


def test_every_call_of_the_sample_home_is_the_size_the_scripted_model_counted(
    sample_home, facts, capsys
) -> None:
    # Mycel main wrote the sample home with a scripted model that billed chars // 4 of the whole request
    # (its system prompt and tools, fixed per thread, and the messages); the record's "sent" estimate is
    # the request's message chars // 2. So where the record's request is the one the model received,
    # input tokens - sent / 2 is one constant per thread, up to the two floors' rounding (at most 1
    # token); a message missing, or trimmed where Mycel did not trim, moves it by its chars / 4.
    checked = 0
    for thread_id in sorted(r["thread_id"] for r in cli_json(capsys, "threads", "--json")):
        calls = cli_json(capsys, "calls", thread_id, "--json")
        if not calls:
            continue
        assert all(c["provider_input_tokens"] is not None for c in calls), thread_id
        overheads = [c["provider_input_tokens"] - c["estimated_tokens"]["sent"] / 2 for c in calls]
        assert max(overheads) - min(overheads) <= 1, (thread_id, overheads)
        checked += len(calls)
    # Every call of the six threads: the soft trim of m_npRsndIka9dx-2 and the compactions of
    # m_0D8EzdJXJhk9-2 among them.
    assert checked == 41

"""What Mycel changes in a request at call time without storing it (docs/request-time-changes.md): the
rules one by one, then the record on a thread whose owner steered a running run, through `calls` and
`whatif` as an operator runs them.

The steer messages carry dev's metadata exactly as each of its three paths stores it (memory_core.rules.
steer's docstring); which of them get the note, and where it goes, is what dev's own
`_apply_steer_contract` did with the same messages (run against OpenDCAI/Mycel dev bc8ab002, langchain-core
1.2.7, while writing the inventory).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from memory_core.call_record.dev_calls import dev_record
from memory_core.compaction import summary_message
from memory_core.messages import Message, MessageType, message_from_dict
from memory_core.rules.profile import RulesProfile
from memory_core.rules.request_time import (
    RULES,
    STEER_NOTE,
    STEER_NOTE_MESSAGE,
    Reproduction,
    RequestTime,
    RequestTimeIndex,
    call_lines,
    steer_contract,
    tool_search_names,
    with_request_time,
)
from memory_core.rules.steer import is_owner_steer, joined_a_running_run
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from tests.dashboard.planting import plant_thread
from tests.support.cli import cli_json
from tests.support.mycel_env import empty_home

# SteeringMiddleware.before_model, for an owner's item queued while the run was active.
MID_RUN = {
    "source": "owner",
    "notification_type": "steer",
    "sender_name": "Ada",
    "sender_avatar_url": None,
    "sender_id": "u_owner",
    "is_steer": True,
}
# persist_cancelled_owner_steers: the run that accepted the steer was cancelled first.
CANCELLED = {"source": "owner", "notification_type": "steer", "is_steer": True}
# followups / buffer_wiring: a queued owner steer wakes an idle thread (is_steer is not kept by the queue).
WOKE_A_RUN = {
    "source": "owner",
    "notification_type": "steer",
    "sender_name": "Ada",
    "sender_avatar_url": None,
    "is_steer": False,
}


STEERED_SAMPLE = "m_0D8EzdJXJhk9-3"


def _human(text: str, metadata: dict[str, Any] | None = None, raw_type: str = "human") -> Message:
    return Message(type=MessageType.HUMAN, content=text, metadata=metadata, raw_type=raw_type)


def _ai(text: str) -> Message:
    return Message(type=MessageType.AI, content=text, raw_type="ai")


# -- SteeringMiddleware.awrap_model_call: the steer note ----------------------------------------------------


def test_the_note_is_devs_text() -> None:
    assert len(STEER_NOTE) == 426  # len(_STEER_NON_PREEMPTIVE_SYSTEM_NOTE) in dev
    assert STEER_NOTE.startswith("Steer requests accepted during an active run are non-preemptive. ")
    assert STEER_NOTE.endswith("answer honestly about any side effects that may already exist.")
    assert (STEER_NOTE_MESSAGE.type, STEER_NOTE_MESSAGE.text) == (MessageType.SYSTEM, STEER_NOTE)


@pytest.mark.parametrize(
    ("message", "noted"),
    [
        (_human("stop, do Y", MID_RUN), True),
        (_human("stop, do Y", CANCELLED), True),
        (_human("stop, do Y", WOKE_A_RUN), True),  # source owner + notification_type steer suffices
        (_human("hi", {"source": "external", "notification_type": "steer", "is_steer": False}), False),
        (_human("hi", {"source": "owner", "notification_type": "chat"}), False),
        (_human("hi"), False),
        (_human("stop", MID_RUN, raw_type="HumanMessageChunk"), False),  # dev checks the class name
        (Message(type=MessageType.AI, content="x", metadata=MID_RUN, raw_type="ai"), False),
    ],
)
def test_which_messages_are_owner_steers(message: Message, noted: bool) -> None:
    assert is_owner_steer(message) is noted
    sent = (_human("a"), _ai("b"), message)
    assert steer_contract(sent) == ((STEER_NOTE_MESSAGE, *sent) if noted else sent)


def test_the_note_goes_in_front_even_of_the_summary() -> None:
    # Dev's system prompt is a SystemMessage with a block list: the note cannot join it, so it is a
    # message of its own before everything memory sent, the summary included.
    summary = summary_message("S")
    sent = (summary, _human("a"), _ai("b"), _human("stop", MID_RUN))
    assert steer_contract(sent) == (STEER_NOTE_MESSAGE, *sent)
    assert with_request_time(sent, RequestTime(steer_note=True)) == steer_contract(sent)
    assert with_request_time(sent, RequestTime()) == sent


def test_a_steer_the_summary_replaced_brings_no_note() -> None:
    messages = [_human("a"), _ai("b"), _human("stop", MID_RUN), _ai("c"), _human("d"), _ai("e")]
    index = RequestTimeIndex.of(messages)
    assert index.steers == (2,)
    assert not index.at(1, 0).steer_note  # before the steer
    assert index.at(3, 0).steer_note and index.at(5, 0).steer_note  # every later call that sends it
    assert index.at(5, 2).steer_note  # the summary replaced messages 0-1: the steer is still sent
    assert not index.at(5, 3).steer_note  # the summary replaced it: memory's output holds no steer


def test_a_steer_joins_the_run_it_was_sent_into() -> None:
    """Dev's compaction notices close the run they belong to; a steer injected into a running run (or
    kept when that run was cancelled) does not start a new one, a queued steer that wakes the thread does."""
    assert joined_a_running_run(_human("x", MID_RUN)) and joined_a_running_run(_human("x", CANCELLED))
    assert not joined_a_running_run(_human("x", WOKE_A_RUN)) and not joined_a_running_run(_human("x"))
    notice = _human("Conversation compacted.", {"source": "system", "notification_type": "compact"})
    run = [_human("go"), Message(type=MessageType.AI, content="", raw_type="ai"), _human("stop", MID_RUN)]
    record = dev_record([*run, _ai("done"), notice], [], [1, 3])
    assert record.run_start == {4: 0}  # the run began at message 0, the steer did not begin another
    woken = dev_record([_human("go"), _ai("ok"), _human("next", WOKE_A_RUN), _ai("done"), notice], [], [1, 3])
    assert woken.run_start == {4: 2}


# -- ToolRunner: the tools offered ---------------------------------------------------------------------------


def _tool_search(content: str, name: str = "tool_search") -> Message:
    return Message(type=MessageType.TOOL, content=content, name=name, tool_call_id="c", raw_type="tool")


def test_dev_offers_the_deferred_tools_a_stored_tool_search_named() -> None:
    found = json.dumps([{"name": "TaskCreate", "parameters": {}}, {"name": "TaskList"}, {"no": "name"}])
    messages = [
        _human("a"),
        _ai("b"),
        _tool_search(found),
        _ai("c"),
        _tool_search('[{"name": "TaskCreate"}]'),
    ]
    assert tool_search_names(messages[2]) == ("TaskCreate", "TaskList")
    index = RequestTimeIndex.of([*messages, _ai("d")])
    assert index.at(1, 0).discovered_tools == ()
    assert index.at(3, 0).discovered_tools == ("TaskCreate", "TaskList")
    assert index.at(5, 0).discovered_tools == ("TaskCreate", "TaskList")  # each once


@pytest.mark.parametrize(
    "content",
    ["not json", '{"name": "x"}', "[" * 100_000, "<persisted-output path=/x bytes=9>", '[{"name": 3}]'],
)
def test_a_tool_search_result_dev_cannot_read_names_nothing(content: str) -> None:
    assert tool_search_names(_tool_search(content)) == ()
    assert tool_search_names(_tool_search('[{"name": "X"}]', name="Bash")) == ()


# -- what the call page says, rule by rule -------------------------------------------------------------------


def test_every_rule_of_both_branches_says_how_the_record_treats_it() -> None:
    assert {r.key for r in RULES[RulesProfile.MAIN]} == {"tools", "prompt_caching"}
    assert {r.key for r in RULES[RulesProfile.DEV]} == {
        "steer_note",
        "tools",
        "prompt_caching",
        "retries",
        "followthrough_note",
    }
    main = {line.rule.key: line.text for line in call_lines(RulesProfile.MAIN, RequestTime())}
    assert main["tools"].startswith("not reproducible: the tool definitions ToolRunner adds")
    assert main["prompt_caching"].startswith("no change: PromptCachingMiddleware adds cache_control only")
    dev = {line.rule.key: line.text for line in call_lines(RulesProfile.DEV, RequestTime())}
    assert dev["steer_note"] == "not added at this call: no owner steer among the messages sent."
    assert dev["retries"].startswith("not reproducible: a call retried with max_tokens raised")
    assert dev["followthrough_note"].startswith("no change: ")
    noted = {
        line.rule.key: line.text
        for line in call_lines(RulesProfile.DEV, RequestTime(steer_note=True, discovered_tools=("TaskList",)))
    }
    assert noted["steer_note"].startswith(
        "added: dev's steer note (426 characters), the first message after the system prompt"
    )
    assert noted["tools"].endswith("Found by tool_search before this call: TaskList.")
    reproduced = [
        r.key for rules in RULES.values() for r in rules if r.reproduction is Reproduction.REPRODUCED
    ]
    assert reproduced == ["steer_note"]


# -- the record: calls, whatif and thread --json on a steered thread ----------------------------------------


def _steered(steer_metadata: dict[str, Any] | None) -> list[BaseMessage]:
    """An owner asks; the agent runs a tool; the owner steers while it runs; the agent answers; a second
    question is answered after it."""
    call = {"id": "c1", "name": "Bash", "args": {"command": "ls"}}
    steer = HumanMessage("stop listing, count the files instead", id="h3")
    if steer_metadata is not None:
        steer = HumanMessage(steer.content, id="h3", metadata=steer_metadata)
    return [
        HumanMessage("list the files", id="h0"),
        AIMessage("", id="a1", tool_calls=[call]),
        ToolMessage("a.txt\nb.txt\n" * 40, tool_call_id="c1", id="t2", name="Bash"),
        steer,
        AIMessage("There are 80 files.", id="a4"),
        HumanMessage("and the biggest?", id="h5"),
        AIMessage("b.txt", id="a6"),
    ]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = empty_home(monkeypatch, tmp_path)
    plant_thread(folder / "leon.db", "t-steer", _steered(MID_RUN))
    plant_thread(folder / "leon.db", "t-plain", _steered(None))
    return folder


def test_the_steer_is_stored_as_dev_stores_it(home: Path) -> None:
    state = MycelReader(resolve_locations()).get_state("t-steer").value
    assert state is not None
    messages = state.messages
    assert messages[3].metadata == MID_RUN  # through LangGraph's serializer and our decoder
    assert is_owner_steer(messages[3]) and not any(is_owner_steer(m) for m in messages[:3] + messages[4:])
    # The same message as a LangChain dict (what an export or --messages file holds) reads the same.
    assert is_owner_steer(message_from_dict({"type": "human", "content": "x", "metadata": CANCELLED}))


def test_calls_under_devs_rules_count_the_note_in_every_call_that_sends_the_steer(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steered = cli_json(capsys, "calls", "t-steer", "--json", "--rules", "dev")
    plain = cli_json(capsys, "calls", "t-plain", "--json", "--rules", "dev")
    assert [c["message_index"] for c in steered] == [1, 4, 6]
    assert [c["request_time"]["steer_note"] for c in steered] == [False, True, True]
    assert [c["request_time"]["steer_note"] for c in plain] == [False, False, False]
    note_tiktoken = default_counter().count(STEER_NOTE)
    for with_note, without in zip(steered, plain, strict=True):
        extra = with_note["request_time"]["steer_note"]
        assert with_note["request_messages"] == without["request_messages"] + extra
        assert with_note["estimated_tokens"]["sent"] == without["estimated_tokens"]["sent"] + 213 * extra
        assert with_note["tiktoken_tokens"] == without["tiktoken_tokens"] + note_tiktoken * extra
        # Inside memory, the note is in none of its estimates: the trigger saw what it always saw.
        assert with_note["estimated_tokens"]["after_pruning"] == without["estimated_tokens"]["after_pruning"]
        assert with_note["trigger_view_tokens"] == without["trigger_view_tokens"]
    # system prompt + note + the 4 stored messages before the answer at index 4
    assert steered[1]["request_messages"] == 1 + 1 + 4


def test_main_adds_no_note_to_the_same_thread(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    as_main = cli_json(capsys, "calls", "t-steer", "--json")
    plain = cli_json(capsys, "calls", "t-plain", "--json")
    assert [c.get("rules", "main") for c in as_main] == ["main"] * 3  # a main thread's keys stay main's
    figures = ("request_messages", "estimated_tokens", "tiktoken_tokens")
    assert [[c[k] for k in figures] for c in as_main] == [[c[k] for k in figures] for c in plain]
    assert [c["request_messages"] for c in as_main] == [2, 5, 7]  # system prompt + messages[:i]
    assert "request_time" not in as_main[0]


def test_the_whatifs_current_side_is_the_record_and_its_proposed_side_keeps_the_note(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = cli_json(capsys, "calls", "t-steer", "--json", "--rules", "dev")
    whatif = cli_json(capsys, "whatif", "t-steer", "--json", "--rules", "dev", "--context-limit", "100000")
    assert whatif["current"] == calls
    # Under proposed settings dev still adds the note: the steer is still in what memory sends.
    assert [c["request_messages"] for c in whatif["proposed"]] == [c["request_messages"] for c in calls]


def test_an_integration_reminder_is_stored_so_the_record_sends_it_as_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Dev's IntegrationInstructionsDeltaMiddleware injects its reminder from before_model, and QueryLoop
    keeps what before_model injects: the SystemMessage is in the history, so the record sends it as any
    stored message, and adds nothing for it."""
    folder = empty_home(monkeypatch, tmp_path)
    reminder = (
        "<system-reminder>\n<integration_instructions_delta>"
        '{"added_names": ["docs"], "removed_names": []}</integration_instructions_delta>\n'
        "Integration instructions changed for this thread.\n</system-reminder>"
    )
    plant_thread(
        folder / "leon.db",
        "t-reminder",
        [HumanMessage("hi", id="h0"), SystemMessage(reminder, id="s1"), AIMessage("hello", id="a2")],
    )
    (call,) = cli_json(capsys, "calls", "t-reminder", "--json", "--rules", "dev")
    assert call["request_messages"] == 1 + 2  # system prompt, the human turn, the stored reminder
    assert call["estimated_tokens"]["sent"] == (len("hi") + len(reminder)) // 2
    assert call["request_time"] == {"steer_note": False, "discovered_tools": []}


def test_calls_name_the_deferred_tools_dev_offered_after_a_tool_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = empty_home(monkeypatch, tmp_path)
    search = {"id": "c1", "name": "tool_search", "args": {"query": "select:TaskCreate"}}
    found = json.dumps([{"name": "TaskCreate", "description": "Create a task", "parameters": {}}], indent=2)
    plant_thread(
        folder / "leon.db",
        "t-search",
        [
            HumanMessage("make a task", id="h0"),
            AIMessage("", id="a1", tool_calls=[search]),
            ToolMessage(found, tool_call_id="c1", id="t2", name="tool_search"),
            AIMessage("created", id="a3"),
        ],
    )
    calls = cli_json(capsys, "calls", "t-search", "--json", "--rules", "dev")
    assert [c["request_time"]["discovered_tools"] for c in calls] == [[], ["TaskCreate"]]
    as_main = cli_json(capsys, "calls", "t-search", "--json")  # main offers deferred tools never
    assert all("request_time" not in c for c in as_main)


def test_the_one_steer_of_the_sample_home_is_mycels_own(
    sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Mycel main's own code stored one owner steer in the sample home (its README: m_0D8EzdJXJhk9-3, sent
    while the run was active), in the very shape dev's before_model writes; the follow-up that a
    `POST /queue` started later says notification_type steer too, but from source system."""
    reader = MycelReader(resolve_locations())
    steers = {}
    for row in reader.list_threads().value:
        state = reader.get_state(row.thread_id).value
        found = RequestTimeIndex.of(state.messages if state is not None else ()).steers
        if found:
            steers[row.thread_id] = found
    assert steers == {STEERED_SAMPLE: (3,)}
    state = reader.get_state(STEERED_SAMPLE).value
    assert state is not None
    messages = state.messages
    assert set(messages[3].metadata or {}) == set(MID_RUN) and joined_a_running_run(messages[3])
    follow_up = messages[7].metadata or {}
    assert (follow_up["source"], follow_up["notification_type"], is_owner_steer(messages[7])) == (
        "system",
        "steer",
        False,
    )
    # Main's SteeringMiddleware adds no note; dev's would, to every call after the steer.
    as_main = cli_json(capsys, "calls", STEERED_SAMPLE, "--json")
    as_dev = cli_json(capsys, "calls", STEERED_SAMPLE, "--json", "--rules", "dev")
    assert [c["message_index"] for c in as_dev] == [1, 4, 6, 8]
    assert [c["request_time"]["steer_note"] for c in as_dev] == [False, True, True, True]
    assert [c["request_messages"] for c in as_main] == [2, 5, 7, 9]
    assert [c["request_messages"] for c in as_dev] == [2, 6, 8, 10]

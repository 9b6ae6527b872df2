"""Tool-output pressure (memory_core/economics/tool_pressure.py) on threads written by LangGraph's real
SqliteSaver, where every figure is known by hand, and on Mycel's sample home against a second computation
from LangGraph's own decoded messages and the pruning rules the vectors prove (tests/data/vectors/).

Mycel's defaults hold here (soft_trim_chars 3000, hard_clear_threshold 10000, protect_recent 3), and the
threads never reach a trigger. With one tool call per AI step, step s is message 2s-1 and its result
message 2s; call k's input is messages[:2k-1], so step s's result goes whole at calls s+1..s+3 (one of
the last three tool-calling steps) and pruned from call s+4 on. A result's pruning depends only on its
length, so one result is either trimmed or cleared, never both: the trimmed-then-cleared case is two
results of one thread, each sent whole first and pruned afterwards.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from memory_core import memo
from memory_core.app.tools import call_day, fleet_tool_pressure, tools_document
from memory_core.cli import main
from memory_core.compaction import SUMMARY_HEADER
from memory_core.economics.tool_pressure import READ_TOOLS, fleet_pressure, pressure_json, thread_pressure
from memory_core.pruning import SOFT_TRIM_MARKER
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import point_locations
from tests.support.cli import cli_json
from tests.support.engines import MycelStore
from tests.support.mycel_env import point_env_at

CLEARED_12000 = len("[Tool output cleared \u2014 12000 chars]")  # 35
TRIMMED_5000 = 1500 + len(SOFT_TRIM_MARKER) + 1500  # 3019: the first and last 1,500 around the marker
SPILL = (
    "Output too large (60000 bytes). Full output saved to: /w/.leon/tool-results/call_3.txt\n\n"
    "Use read_file to view specific sections with offset and limit parameters.\n\nPreview (first 2048 "
    "bytes):\nabc\n..."
)

Step = list[tuple[str, dict[str, Any], str]]  # one AI step's tool calls: (name, args, output)


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build_scripted(db: Path, thread_id: str, steps: Sequence[Step]) -> None:
    """One owner turn: AI step s makes steps[s]'s tool calls (empty content), then a final answer; every
    checkpoint through LangGraph's real SqliteSaver and graph."""

    def agent(state: _State) -> dict[str, Any]:
        done = sum(1 for m in state["messages"] if m.type == "ai")
        if done == len(steps):
            return {"messages": [AIMessage(content="done")]}
        calls = [
            {"name": name, "args": args, "id": f"call_{done + 1}_{k}", "type": "tool_call"}
            for k, (name, args, _) in enumerate(steps[done])
        ]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    def tools(state: _State) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        step = steps[sum(1 for m in state["messages"] if m.type == "ai") - 1]
        out = []
        for call, (_, _, text) in zip(last.tool_calls, step, strict=True):
            # Mycel's spill buffer rebuilds the message with content and tool_call_id only (no name).
            name = None if text.startswith("Output too large") else call["name"]
            out.append(ToolMessage(content=text, tool_call_id=call["id"], name=name))
        return {"messages": out}

    def route(state: _State) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(_State)
    builder.add_node("agent", agent)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    with closing(sqlite3.connect(db, check_same_thread=False)) as conn:
        graph = builder.compile(checkpointer=SqliteSaver(conn))
        graph.invoke(
            {"messages": [{"role": "user", "content": "go"}]}, {"configurable": {"thread_id": thread_id}}
        )


def _grep(pattern: str) -> tuple[str, dict[str, Any], str]:
    return ("Grep", {"pattern": pattern}, "g" * 100)


# Step 1's Bash result is trimmed, step 2's Read result cleared; step 6 re-reads that file (other args).
TRIM_AND_CLEAR: list[Step] = [
    [("Bash", {"command": "make"}, "b" * 5000)],
    [("Read", {"file_path": "/w/big.py"}, "r" * 12000)],
    [_grep("x")],
    [_grep("y")],
    [_grep("z")],
    [("Read", {"file_path": "/w/big.py", "offset": 100}, "r" * 200)],
    [("Bash", {"command": "make"}, "b" * 200)],  # same as step 1, which was only trimmed: no re-request
]
# Step 1's result is cleared and asked again with the same arguments at step 5, then once more at step
# 6 (the content is back by then: not a re-request); step 3's WebFetch was spilled.
SAME_ARGS: list[Step] = [
    [("Bash", {"command": "cat log", "timeout": 5}, "l" * 12000)],
    [_grep("a")],
    [("WebFetch", {"url": "https://example.org"}, SPILL)],
    [_grep("b")],
    [("Bash", {"timeout": 5, "command": "cat log"}, "l" * 50)],  # the same arguments, another key order
    [("Bash", {"command": "cat log", "timeout": 5}, "l" * 50)],
]


@pytest.fixture
def built(tmp_path: Path) -> MycelReader:
    folder = tmp_path / "store"
    folder.mkdir()
    build_scripted(folder / "leon.db", "trim-and-clear", TRIM_AND_CLEAR)
    build_scripted(folder / "leon.db", "same-args", SAME_ARGS)
    return MycelReader(point_locations(folder))


def _tools(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["tool"]: t for t in report["tools"]}


def _thread(tool: dict[str, Any], thread_id: str) -> dict[str, Any]:
    return next(t for t in tool["threads"] if t["thread_id"] == thread_id)


def test_a_trimmed_and_a_cleared_result_remove_their_characters_at_every_call_they_are_pruned(built) -> None:
    report = pressure_json(fleet_tool_pressure(built).report)
    tools = _tools(report)
    bash, read, grep = (_thread(tools[name], "trim-and-clear") for name in ("Bash", "Read", "Grep"))
    # Bash: 5,000 whole at calls 2-4, 3,019 trimmed at calls 5-8; step 7's 200 chars at call 8.
    assert bash["sent_chars"] == 3 * 5000 + 4 * TRIMMED_5000 + 200 == 27276
    assert bash["chars_removed"] == 4 * (5000 - TRIMMED_5000) == 7924
    assert (bash["results"], bash["trimmed"], bash["cleared"], bash["re_requests"]) == (2, 1, 0, 0)
    # Read: 12,000 whole at calls 3-5, the 35-char marker at calls 6-8; step 6's 200 chars at calls 7-8.
    assert read["sent_chars"] == 3 * 12000 + 3 * CLEARED_12000 + 2 * 200 == 36505
    assert read["chars_removed"] == 3 * (12000 - CLEARED_12000) == 35895
    assert (read["trimmed"], read["cleared"]) == (0, 1)
    # Grep: 100 chars each, at calls 4-8, 5-8 and 6-8; never pruned.
    assert grep["sent_chars"] == 100 * (5 + 4 + 3) and grep["chars_removed"] == 0
    # Every character sent: those, and the owner's "go" at each of the 8 calls (AI steps are empty).
    total = 27276 + 36505 + 1200 + 8 * len("go")
    assert total == 64997
    assert report_thread_sent(report, "trim-and-clear") == total
    assert bash["thread_sent_share"] == pytest.approx(27276 / 64997)


def test_a_re_read_of_a_cleared_file_counts_at_the_call_that_first_sent_it_cleared(built) -> None:
    report = pressure_json(fleet_tool_pressure(built).report)
    asks = [a for a in report["re_requests"] if a["thread_id"] == "trim-and-clear"]
    # The Read result (message 4) is first sent cleared at call 6, whose answer (message 11) reads the
    # file again: that model had only the marker.
    assert asks == [
        {
            "thread_id": "trim-and-clear",
            "tool": "Read",
            "asked_tool": "Read",
            "kind": "re-read of the file",
            "cleared_index": 4,
            "cleared_call": 6,
            "asked_call": 6,
            "asked_index": 11,
        }
    ]
    assert _thread(_tools(report)["Read"], "trim-and-clear")["re_requests"] == 1
    assert "Read" in READ_TOOLS


def test_the_same_tool_with_the_same_arguments_after_a_clear_is_a_re_request_once(built) -> None:
    report = pressure_json(fleet_tool_pressure(built).report)
    asks = [a for a in report["re_requests"] if a["thread_id"] == "same-args"]
    # Message 2 (12,000 chars) is cleared from call 5 on; call 5's answer asks with the same arguments in
    # another key order. Call 6's answer asks once more, but the content was back: not counted.
    assert [(a["tool"], a["kind"], a["cleared_index"], a["cleared_call"], a["asked_call"]) for a in asks] == [
        ("Bash", "same arguments", 2, 5, 5)
    ]
    bash = _thread(_tools(report)["Bash"], "same-args")
    assert (bash["cleared"], bash["re_requests"], bash["results"]) == (1, 1, 3)
    # cleared at calls 5, 6 and 7; each call after a result's AI step sends it.
    assert bash["chars_removed"] == 3 * (12000 - CLEARED_12000)


def test_a_spilled_result_is_counted_under_the_tool_its_call_named(built) -> None:
    report = pressure_json(fleet_tool_pressure(built).report)
    fetch = _tools(report)["WebFetch"]  # the spilled ToolMessage has no name: the AI call names it
    assert (fetch["spills"], fetch["results"], fetch["trimmed"], fetch["cleared"]) == (1, 1, 0, 0)
    assert fetch["sent_chars"] == len(SPILL) * 4  # calls 4, 5, 6 and 7
    assert sum(t["spills"] for t in report["tools"]) == 1


def test_shares_of_two_threads_add_up_to_every_character_sent(built) -> None:
    found = fleet_tool_pressure(built).report
    report = pressure_json(found)
    assert report["threads"] == 2 and report["calls"] == 8 + 7
    assert report["sent_chars"] == sum(found.sent_by_thread.values())
    tools = _tools(report)
    # The owner's "go" is the only character sent outside tool results.
    assert sum(t["sent_chars"] for t in report["tools"]) == report["sent_chars"] - 15 * len("go")
    assert sum(t["sent_share"] for t in report["tools"]) == pytest.approx(1 - 30 / report["sent_chars"])
    assert tools["Read"]["sent_share"] == pytest.approx(36505 / report["sent_chars"])
    # The most sent first; each tool's threads and days add up to it.
    assert [t["sent_chars"] for t in report["tools"]] == sorted(
        (t["sent_chars"] for t in report["tools"]), reverse=True
    )
    for tool in report["tools"]:
        for field in (
            "sent_chars",
            "chars_removed",
            "results",
            "trimmed",
            "cleared",
            "spills",
            "re_requests",
        ):
            assert sum(t[field] for t in tool["threads"]) == tool[field]
            assert sum(d[field] for d in tool["days"]) == tool[field]


def test_a_calls_day_is_its_checkpoints_utc_day(built, tmp_path: Path) -> None:
    with closing(sqlite3.connect(tmp_path / "store" / "leon.db")) as conn:
        saver = SqliteSaver(conn)
        days = {
            c.checkpoint["ts"][:10]
            for t in ("trim-and-clear", "same-args")
            for c in saver.list({"configurable": {"thread_id": t}})
        }
    report = pressure_json(fleet_tool_pressure(built).report)
    assert {d["day"] for t in report["tools"] for d in t["days"]} <= days
    assert call_day(None) is None and call_day("not-a-uuid6") is None


def test_tools_cli_prints_the_reports_json_and_a_table(tmp_path, monkeypatch, capsys) -> None:
    folder = tmp_path / "cli"
    folder.mkdir()
    build_scripted(folder / "leon.db", "same-args", SAME_ARGS)
    point_env_at(monkeypatch, folder)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["tools", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == tools_document(fleet_tool_pressure(MycelReader(point_locations(folder))))
    assert (printed["analysed_threads"], printed["pending_threads"]) == (1, 0)
    assert {"sent_share", "trimmed", "cleared", "chars_removed", "re_requests", "spills"} <= set(
        printed["tools"][0]
    )
    assert main(["tools"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].split()[:3] == ["TOOL", "SENT", "SHARE"]
    assert "same arguments" in table and "call 5" in table


def test_tools_cli_without_mycel_data_is_one_line(tmp_path, monkeypatch, capsys) -> None:
    point_env_at(monkeypatch, tmp_path / "nowhere")
    assert main(["tools"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no Mycel data" in err


def test_a_warm_report_reuses_every_thread_and_a_moved_thread_alone_is_redone(built, tmp_path: Path) -> None:
    first = fleet_tool_pressure(built).report
    before = memo.stats()["stores.fleet_reductions"]
    again = fleet_tool_pressure(built).report
    after = memo.stats()["stores.fleet_reductions"]
    assert pressure_json(again) == pressure_json(first)
    assert (after.hits - before.hits, after.misses - before.misses) == (2, 0)  # both threads kept
    build_scripted(tmp_path / "store" / "leon.db", "third", [[_grep("q")]])
    before = memo.stats()["stores.fleet_reductions"]
    moved = pressure_json(fleet_tool_pressure(MycelReader(point_locations(tmp_path / "store"))).report)
    after = memo.stats()["stores.fleet_reductions"]
    assert (after.hits - before.hits, after.misses - before.misses) == (2, 1)  # only the new thread computed
    assert (
        moved["threads"] == 3
        and _tools(moved)["Grep"]["sent_chars"] == _tools(pressure_json(first))["Grep"]["sent_chars"] + 100
    )


# -- each engine's store against LangGraph's decoded messages and the vectors' pruning rules ---------------

SETTINGS = {
    "soft": 3000,
    "hard": 10000,
    "protect": 3,
}  # neither store has a runtime.json: Mycel's defaults


def _chars(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    return sum(
        len(b) if isinstance(b, str) else len(b.get("text", "")) if isinstance(b.get("text", ""), str) else 0
        for b in content
    )


def _pruned(message: BaseMessage, protected: set[str]) -> int:
    """The vectors' rule: an unprotected string result over soft_trim_chars is trimmed to head + marker +
    tail, over hard_clear_threshold replaced by the marker; list content is never pruned."""
    content = message.content
    if not isinstance(content, str) or message.tool_call_id in protected or len(content) <= SETTINGS["soft"]:
        return _chars(content)
    if len(content) > SETTINGS["hard"]:
        return len(f"[Tool output cleared \u2014 {len(content)} chars]")
    return 2 * (SETTINGS["soft"] // 2) + len(SOFT_TRIM_MARKER)


def _oracle(messages: list[BaseMessage], rows: list[tuple[str, int, int]]) -> dict[str, Any]:
    """Per tool: characters sent and removed, results trimmed/cleared, spills; and every character sent.
    The summary in front of call i is the newest row compacted at or before i (the sample home compacts at
    every call from its first row on, asserted below, so Mycel's cache never serves an older one)."""
    names = {c["id"]: c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    tools: dict[str, dict[str, int]] = {}
    sent_total = 0
    changed: dict[int, str] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, AIMessage):
            continue
        steps = [a for a in messages[:i] if isinstance(a, AIMessage) and a.tool_calls][-SETTINGS["protect"] :]
        protected = {c["id"] for a in steps for c in a.tool_calls}
        row = max((r for r in rows if r[2] <= i), key=lambda r: r[2], default=None)
        start = row[1] if row else 0
        sent_total += len(SUMMARY_HEADER) + len(row[0]) if row else 0
        for j in range(start, i):
            message = messages[j]
            size = (
                _pruned(message, protected) if isinstance(message, ToolMessage) else _chars(message.content)
            )
            sent_total += size
            if not isinstance(message, ToolMessage):
                continue
            tally = tools.setdefault(names.get(message.tool_call_id, message.name or "?"), _zero())
            tally["sent_chars"] += size
            tally["chars_removed"] += _chars(message.content) - size
            if size != _chars(message.content) and j not in changed:
                changed[j] = "cleared" if size < SETTINGS["soft"] // 2 else "trimmed"
                tally[changed[j]] += 1
    for m in messages:
        if isinstance(m, ToolMessage) and str(m.content).startswith("Output too large ("):
            tools.setdefault(names[m.tool_call_id], _zero())["spills"] += 1
    return {"tools": tools, "sent_chars": sent_total}


def _zero() -> dict[str, int]:
    return {"sent_chars": 0, "chars_removed": 0, "trimmed": 0, "cleared": 0, "spills": 0}


# What each store holds, as Bash's (results trimmed, spilled, characters removed): the sample home one Bash
# result of 6,431 characters trimmed at 3 calls and one spilled; the demo's compaction thread one of 3,081
# trimmed at one call, none spilled. Neither asks for a cleared result again.
BASH = {"sqlite": (1, 1, 3 * (6431 - 3019)), "postgresql": (1, 0, 3081 - 3019)}


def test_every_threads_figures_equal_langgraphs_decoded_messages_under_the_vectors_rules(
    mycel_store: MycelStore, capsys
) -> None:
    from memory_core.app.fleet_calls import fleet_records

    reader = MycelReader(resolve_locations())
    report = cli_json(capsys, "tools", "--json")
    assert report == tools_document(fleet_tool_pressure(reader))
    records = {row.thread_id: r for row, r in fleet_records(reader)}
    heads = mycel_store.heads()
    assert heads and report["threads"] == len(heads)
    expected: dict[str, dict[str, int]] = {}
    sent = 0
    for thread_id, messages in heads.items():
        rows = mycel_store.summaries(thread_id)
        calls = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
        if rows:  # a row at every call from the first one on
            assert sorted(r[2] for r in rows) == [i for i in calls if i >= min(r[2] for r in rows)]
        else:  # each request is the pruned messages: the record applied no summary either
            assert all(c.summary is None for c in records[thread_id].calls), thread_id
        thread = _oracle(messages, rows)
        sent += thread["sent_chars"]
        assert report_thread_sent(report, thread_id) == thread["sent_chars"]
        for tool in report["tools"]:  # the thread's own row under each tool
            row = next((t for t in tool["threads"] if t["thread_id"] == thread_id), None)
            if row is None:
                assert tool["tool"] not in thread["tools"], (thread_id, tool["tool"])
            else:
                assert {f: row[f] for f in thread["tools"][tool["tool"]]} == thread["tools"][tool["tool"]]
        for name, tally in thread["tools"].items():
            for field, value in tally.items():
                expected.setdefault(name, _zero())[field] += value
    assert report["sent_chars"] == sent
    tools = _tools(report)
    assert set(tools) == set(expected)
    for name, tally in expected.items():
        assert {f: tools[name][f] for f in tally} == tally, name
        assert tools[name]["sent_share"] == pytest.approx(tally["sent_chars"] / sent)
    bash = tools["Bash"]
    assert (bash["trimmed"], bash["spills"], bash["chars_removed"]) == BASH[mycel_store.engine]
    assert report["re_requests"] == []


def report_thread_sent(report: dict[str, Any], thread_id: str) -> int:
    return next(t["sent_chars"] for t in report["thread_totals"] if t["thread_id"] == thread_id)


def test_thread_pressure_is_pure_over_a_record(built) -> None:
    # The fleet report is the sum of the per-thread reductions, whatever their order.
    from memory_core.app.fleet_calls import fleet_records

    threads = [
        thread_pressure(row.thread_id, r.messages, r.calls, r.configured.settings, day_of=call_day)
        for row, r in fleet_records(built)
    ]
    assert (
        pressure_json(fleet_pressure(reversed(threads)))["tools"]
        == pressure_json(fleet_pressure(threads))["tools"]
    )

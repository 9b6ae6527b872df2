"""The prompt-cache cost of pruning (memory_core/economics/prompt_cache.py) on threads LangGraph's real
SqliteSaver wrote, where every number is known by hand, and on Mycel's sample home against a second
computation from LangGraph's own decoded messages, tiktoken and the pruning rules the vectors prove.

The scripted thread is one owner turn: AI step s (one tool call, empty content) is message 2s-1 and its
result message 2s; call k's input is messages[:2k-1]. Under Mycel's defaults (protect_recent 3) step s's
result goes whole at calls s+1..s+3 and pruned from call s+4 on, so the request of call s+4 differs
from call s+3's at message 2s: the system prompt and messages 0..2s-1 are shared (2s + 1 messages).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from memory_core.app.fleet_calls import recorded_thread
from memory_core.app.prompt_cache import fleet_cache, thread_cache
from memory_core.cli import main
from memory_core.compaction import SUMMARY_HEADER
from memory_core.economics.cost import PriceBook
from memory_core.economics.prompt_cache import Cause, prompt_caching, request_prefixes, rewrite_price
from memory_core.memory_settings import MemorySettings
from memory_core.model_view import ActiveSummary
from memory_core.pruning import SOFT_TRIM_MARKER
from memory_core.stores.reader import MycelReader
from memory_core.tokens import default_counter
from memory_core.whatif import thread_side
from tests.core.store_builders import build_thread, point_locations
from tests.support.cli import cli_json
from tests.support.engines import MycelStore
from tests.support.mycel_env import point_env_at

SONNET = "claude-sonnet-4-5-20250929"
# step 1's result is trimmed (5,000 > 3,000), step 2's cleared (12,000 > 10,000), the rest stay whole
RESULTS = [5000, 12000, 200, 200, 200, 200, 200]


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def build_steps(db: Path, thread_id: str, results: Sequence[int], *, model: str = SONNET) -> None:
    """One owner turn through LangGraph's real graph and SqliteSaver: step s calls one tool whose result
    has results[s-1] characters, then a final answer; every AI message names `model`."""
    meta = {"model_name": model}

    def agent(state: _State) -> dict[str, Any]:
        done = sum(1 for m in state["messages"] if m.type == "ai")
        if done == len(results):
            return {"messages": [AIMessage(content="done", response_metadata=meta)]}
        call = {"name": "Bash", "args": {"n": done}, "id": f"call_{done + 1}", "type": "tool_call"}
        return {"messages": [AIMessage(content="", tool_calls=[call], response_metadata=meta)]}

    def tools(state: _State) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        size = results[sum(1 for m in state["messages"] if m.type == "ai") - 1]
        text = (f"{last.tool_calls[0]['id']} output line\n" * (size // 10 + 1))[:size]
        return {"messages": [ToolMessage(content=text, tool_call_id=last.tool_calls[0]["id"], name="Bash")]}

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


def _decoded(db: Path, thread_id: str) -> list[BaseMessage]:
    with closing(sqlite3.connect(db)) as conn:
        found = SqliteSaver(conn).get_tuple({"configurable": {"thread_id": thread_id}})
    assert found is not None
    return list(found.checkpoint["channel_values"]["messages"])


def _book(**prices: dict[str, str]) -> PriceBook:
    return PriceBook.from_document(
        {"models": prices, "timestamp": datetime.now(UTC).timestamp()}, now=datetime.now(UTC)
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "leon"
    folder.mkdir()
    build_steps(folder / "leon.db", "t-steps", RESULTS)
    point_env_at(monkeypatch, folder)
    return folder


def _record(home: Path):  # noqa: ANN202 - the thread's record and its reader
    reader = MycelReader(point_locations(home))
    row = reader.get_thread("t-steps").value
    assert row is not None
    return reader, row, recorded_thread(reader, row)


def test_a_trim_then_a_clear_break_the_prefix_at_their_message(home: Path) -> None:
    _, _, record = _record(home)
    assert [c.index for c in record.calls] == [1, 3, 5, 7, 9, 11, 13, 15]
    # Mycel's estimate (characters / 2): each number by hand
    found = request_prefixes(record.messages, record.calls, record.configured.settings)
    rows = [
        (c.call, c.shared_prefix_messages, c.cause, c.break_index, c.rewritten_tokens) for c in found.calls
    ]
    assert rows == [
        (1, None, None, None, 0),
        (2, 2, Cause.NONE, None, 0),  # call 1 sent system + "go": both shared
        (3, 4, Cause.NONE, None, 0),
        (4, 6, Cause.NONE, None, 0),
        # call 5: step 1's result (message 2) falls out of protect_recent and is trimmed. Call 4 sent
        # messages 0..6; from message 2 on: 5,000 + "" + 12,000 + "" + 200 characters, / 2
        (5, 3, Cause.TRIM, 2, (5000 + 12000 + 200) // 2),
        # call 6: step 2's result (message 4) is cleared; call 5 sent it whole, then 200 + 200 after it
        (6, 5, Cause.CLEAR, 4, (12000 + 200 + 200) // 2),
        (7, 12, Cause.NONE, None, 0),  # results of steps 3.. are short: nothing else changes
        (8, 14, Cause.NONE, None, 0),
    ]
    assert found.unit == "Mycel's estimate (characters / 2)"
    totals = found.totals(None)
    assert (totals.of(Cause.TRIM).rewritten_tokens, totals.of(Cause.CLEAR).rewritten_tokens) == (8600, 6200)
    assert totals.rewritten_tokens == 14800 and totals.cost_usd is None


def test_rewritten_tokens_in_tiktoken_are_the_previous_requests_messages_from_the_break(home: Path) -> None:
    reader, row, record = _record(home)
    counter = default_counter()
    found = thread_cache(reader, row, book=None).current
    assert found.unit == f"tiktoken {counter.encoding_name}"
    texts = [m.content if isinstance(m.content, str) else "" for m in _decoded(home / "leon.db", "t-steps")]
    by_hand = {
        5: sum(counter.count_uncached(t) for t in texts[2:7]),  # call 4's messages 2..6, all whole
        6: sum(counter.count_uncached(t) for t in texts[4:9]),  # call 5's messages 4..8
    }
    assert {c.call: c.rewritten_tokens for c in found.calls if c.rewritten_tokens} == by_hand


def test_the_price_is_cache_write_minus_cache_read_per_million(home: Path) -> None:
    _, _, record = _record(home)
    book = _book(**{"claude-sonnet-4.5": {"cache_read": "0.30", "cache_write": "3.75", "input": "3"}})
    models = {c.call: SONNET for c in record.calls}
    found = request_prefixes(
        record.messages, record.calls, record.configured.settings, models=models, book=book
    )
    assert [c.cost_usd for c in found.calls if c.rewritten_tokens] == [
        Decimal(8600) * Decimal("3.45") / Decimal(1_000_000),  # 0.02967
        Decimal(6200) * Decimal("3.45") / Decimal(1_000_000),  # 0.02139
    ]
    assert found.totals(book).cost_usd == Decimal("0.05106")
    assert found.totals(book).of(Cause.TRIM).priced_tokens == 8600
    # Mycel adds prompt caching only for Anthropic models: another model's rewrites stay unpriced
    assert not prompt_caching("gpt-4o") and prompt_caching(SONNET) and prompt_caching("anthropic/claude-x")
    gpt = _book(**{"gpt-4o": {"cache_read": "1.25", "cache_write": "2.5"}})
    assert rewrite_price("gpt-4o", gpt) is None
    # a model whose entry has no cache prices is not priced either
    assert rewrite_price(SONNET, _book(**{"claude-sonnet-4.5": {"input": "3", "output": "15"}})) is None


def test_cli_prints_the_same_calls_and_totals(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cache", "t-steps", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    causes = [c["cause"] for c in document["calls"]]
    assert causes == [None, "none", "none", "none", "trim", "clear", "none", "none"]
    assert [c["shared_prefix_messages"] for c in document["calls"]] == [None, 2, 4, 6, 3, 5, 12, 14]
    by_cause = document["totals"]["current"]["by_cause"]
    assert (by_cause["trim"]["calls"], by_cause["clear"]["calls"], by_cause["none"]["calls"]) == (1, 1, 5)
    assert document["totals"]["proposed"] is None
    assert main(["cache", "--all", "--json"]) == 0
    fleet = json.loads(capsys.readouterr().out)
    assert fleet["threads"][0]["current"] == document["totals"]["current"]
    assert fleet["totals"]["current"] == document["totals"]["current"]


def test_a_larger_protect_recent_rewrites_less_in_this_thread(home: Path, capsys) -> None:
    # protect_recent 7 shields every result of the 7 steps to the end: no break, nothing re-written.
    assert main(["cache", "t-steps", "--protect-recent", "7", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    now, then = document["totals"]["current"], document["totals"]["proposed"]
    assert now["rewritten_tokens"] > 0 and then["rewritten_tokens"] == 0
    assert document["proposed"]["settings"]["protect_recent"] == 7
    # protect_recent 4 only moves each break one call later, where the previous request is longer:
    # (5,000 + 12,000 + 200 + 200) / 2 for the trim at call 6, (12,000 + 3 x 200) / 2 for the clear at 7.
    _, _, record = _record(home)
    settings = replace(record.configured.settings, protect_recent=4)
    side = thread_side(record.messages, settings=settings)
    found = request_prefixes(record.messages, side.calls, settings)
    assert [(c.call, c.cause, c.rewritten_tokens) for c in found.calls if c.rewritten_tokens] == [
        (6, Cause.TRIM, 8700),
        (7, Cause.CLEAR, 6300),
    ]


def test_a_compaction_rewrites_the_whole_previous_request(tmp_path: Path) -> None:
    # Six owner turns (Mycel cuts at a turn boundary), one 400-character result each: nothing is pruned.
    build_thread(tmp_path / "leon.db", "t-turns", turns=6, parallel=1, tool_chars=400)
    reader = MycelReader(point_locations(tmp_path))
    row = reader.get_thread("t-turns").value
    assert row is not None
    messages = recorded_thread(reader, row).messages
    # Under a 1,000-token limit (trigger 700) the replay first compacts at call 8 (its input: 880 tokens).
    settings = MemorySettings(context_limit=1000, keep_recent_tokens=100)
    calls = thread_side(messages, settings=settings).calls
    found = request_prefixes(messages, calls, settings).calls
    assert [c.call for c in calls if c.compacted] == [8, 9, 10, 11, 12]
    assert calls[6].summary is None and calls[6].index == 13  # call 7 sent messages 0..12, no summary
    chars = sum(len(m.content) if isinstance(m.content, str) else 0 for m in messages[:13])
    assert (found[7].cause, found[7].shared_prefix_messages, found[7].rewritten_tokens) == (
        Cause.COMPACTION,
        1,  # only the system prompt: the summary now stands where message 0 stood
        chars // 2,
    )
    # every later call compacts again (Mycel main past its trigger) and re-writes all the one before
    assert all(c.cause is Cause.COMPACTION and c.shared_prefix_messages == 1 for c in found[7:])


def test_a_summary_that_changed_without_a_compaction_is_a_new_summary(home: Path) -> None:
    _, _, record = _record(home)
    calls = list(record.calls)
    # Call 3 with a summary in front that no compaction brought (as Mycel's cache restored at a restart).
    calls[2] = replace(calls[2], summary=ActiveSummary("s" * 40, 2), sent_messages=calls[2].sent_messages - 1)
    found = request_prefixes(record.messages, calls, record.configured.settings).calls
    assert (found[2].cause, found[2].shared_prefix_messages, found[2].rewritten_tokens) == (
        Cause.NEW_SUMMARY,
        1,
        (2 + 5000) // 2,  # call 2 sent "go", an empty AI step and step 1's 5,000-character result
    )
    # call 4 falls back to no summary: again the front changed, and all of call 3's request is re-written
    assert found[3].cause is Cause.NEW_SUMMARY
    # (the summary, then messages 2..4: step 1's result, an empty AI step, step 2's result, all whole)
    assert found[3].rewritten_tokens == (len(SUMMARY_HEADER) + 40 + 5000 + 12000) // 2


def test_an_append_only_call_rewrites_nothing(home: Path) -> None:
    _, _, record = _record(home)
    found = request_prefixes(record.messages, record.calls, record.configured.settings).calls
    for before, call in zip(found, found[1:], strict=False):
        if call.cause is Cause.NONE:
            assert call.rewritten_tokens == 0 and call.shared_prefix_messages == before.request_messages


def test_unknown_thread_and_bad_flags_are_one_line(home: Path, capsys) -> None:
    assert main(["cache", "nope"]) == 2
    assert "unknown thread 'nope'" in capsys.readouterr().err
    assert main(["cache", "t-steps", "--protect-recent", "many"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--protect-recent" in err


def test_the_fleet_is_warm_on_the_second_read(home: Path) -> None:
    from memory_core.app.fleet_calls import _REDUCTIONS

    reader = MycelReader(point_locations(home))
    fleet_cache(reader, book=None)
    hits = _REDUCTIONS.stats().hits
    again = fleet_cache(reader, book=None)
    assert _REDUCTIONS.stats().hits == hits + 1
    assert again.current.rewritten_tokens > 0


# -- each engine's store against LangGraph's decoded messages, tiktoken and the vectors' rules ------------

SOFT, HARD, PROTECT = 3000, 10000, 3  # neither store has a runtime.json: Mycel's defaults


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)


def _form(message: BaseMessage, protected: set[str]) -> str:
    """The vectors' rule: an unprotected string result over soft_trim_chars is head + marker + tail, over
    hard_clear_threshold the marker alone; list content is never pruned."""
    content = message.content
    if (
        not isinstance(message, ToolMessage)
        or not isinstance(content, str)
        or message.tool_call_id in protected
    ):
        return _text(message)
    if len(content) > HARD:
        return f"[Tool output cleared \u2014 {len(content)} chars]"
    if len(content) > SOFT:
        return content[: SOFT // 2] + SOFT_TRIM_MARKER + content[-(SOFT // 2) :]
    return content


def _oracle(messages: list[BaseMessage], rows: list[tuple[str, int, int]]) -> list[tuple[Any, ...]]:
    """Per call after the first: (shared messages, cause, re-written tiktoken tokens). A request is a list
    of (what, text) after the system prompt; the summary in front of call i is the newest row compacted at
    or before i (the sample home compacts at every call from its first row on)."""
    counter = default_counter()
    out: list[tuple[Any, ...]] = []
    previous: list[tuple[object, str]] | None = None
    for i, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        steps = [a for a in messages[:i] if isinstance(a, AIMessage) and a.tool_calls][-PROTECT:]
        protected = {c["id"] for a in steps for c in a.tool_calls}
        row = max((r for r in rows if r[2] <= i), key=lambda r: r[2], default=None)
        request: list[tuple[object, str]] = []
        start = 0
        if row is not None:
            request.append((("summary", row[0], row[1]), SUMMARY_HEADER + row[0]))
            start = row[1]
        request += [(j, _form(messages[j], protected)) for j in range(start, i)]
        if previous is not None:
            k = next((n for n, (a, b) in enumerate(zip(previous, request, strict=False)) if a != b), None)
            if k is None and len(request) < len(previous):
                k = len(request)
            if k is None:
                out.append((1 + len(previous), "none", 0))
            else:
                what = previous[k][0]
                if row is not None and row[2] == i:
                    cause = "compaction"
                elif isinstance(what, tuple) or isinstance(request[k][0], tuple):
                    cause = "new summary"
                else:
                    cause = "clear" if request[k][1].startswith("[Tool output cleared") else "trim"
                out.append((1 + k, cause, sum(counter.count_uncached(t) for _, t in previous[k:])))
        previous = request
    return out


# What each store holds: the sample home one trim (a Bash result out of protect_recent) and Mycel's five
# compactions; the demo's threads one trim and, with no summary row reachable, no compaction.
CAUSES = {
    "sqlite": {"trim": 1, "clear": 0, "compaction": 5, "new summary": 0},
    "postgresql": {"trim": 1, "clear": 0, "compaction": 0, "new summary": 0},
}


def test_every_threads_figures_equal_langgraphs_decoded_messages_under_the_vectors_rules(
    mycel_store: MycelStore, capsys
) -> None:
    fleet = cli_json(capsys, "cache", "--all", "--json")
    heads = mycel_store.heads()
    assert heads and sorted(t["thread_id"] for t in fleet["threads"]) == sorted(heads)
    prices = mycel_store.prices()
    sonnet = None if prices is None else prices["claude-sonnet-4.5"]
    rate = None if sonnet is None else Decimal(sonnet["cache_write"]) - Decimal(sonnet["cache_read"])
    seen = dict.fromkeys(CAUSES[mycel_store.engine], 0)
    for thread_id, messages in heads.items():
        document = cli_json(capsys, "cache", thread_id, "--json")
        ours = [
            (c["shared_prefix_messages"], c["cause"], c["rewritten_tokens"]) for c in document["calls"][1:]
        ]
        assert ours == _oracle(messages, mycel_store.summaries(thread_id)), thread_id
        for c in document["calls"]:
            if c["cause"] in seen:
                seen[c["cause"]] += 1
            model = c["model"] or ""
            if c["rewritten_tokens"] and model.startswith("claude-sonnet-4-5"):
                # priced at cache_write - cache_read per million; without a pricing cache, not at all
                priced = None if rate is None else Decimal(c["rewritten_tokens"]) * rate / Decimal(1_000_000)
                assert (None if c["cost_usd"] is None else Decimal(c["cost_usd"])) == priced
        line = next(t for t in fleet["threads"] if t["thread_id"] == thread_id)
        assert line["current"] == document["totals"]["current"]
    assert seen == CAUSES[mycel_store.engine]

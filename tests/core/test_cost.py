"""Cost: provider usage x Mycel's pricing cache, checked by hand on threads LangGraph's real SqliteSaver wrote."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from memory_core.app.cost import ABANDONED, THREAD_CALLS, fleet_cost, list_fleet_calls
from memory_core.cli import main
from memory_core.economics.cost import (
    CACHE_TTL_S,
    CallUsage,
    MatchedBy,
    Price,
    PriceBook,
    Usage,
    cost_of,
    cost_report,
    read_usage,
    usage_of,
)
from memory_core.memo import reset
from memory_core.messages import Message, MessageType
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import point_locations
from tests.support.cli import cli_json, run_cli
from tests.support.engines import MycelStore
from tests.support.mycel_env import point_env_at

PRICES = {
    "claude-sonnet-4.5": {"input": "3", "output": "15", "cache_read": "0.3", "cache_write": "3.75"},
    "gpt-4o": {"input": "2.5", "output": "10", "cache_read": "1.25", "cache_write": "2.5"},
}


class _State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _graph(replies: Iterator[AIMessage]) -> StateGraph[Any]:
    def agent(state: _State) -> dict[str, Any]:
        return {"messages": [next(replies)]}

    graph = StateGraph(_State)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    return graph


def _sonnet(message_id: str, **usage: Any) -> AIMessage:
    return AIMessage(
        content=f"reply {message_id}",
        id=message_id,
        usage_metadata=usage,  # type: ignore[arg-type]
        response_metadata={"model_name": "claude-sonnet-4-5-20250929", "model_provider": "anthropic"},
    )


def _write_home(folder: Path, *, pricing: dict[str, Any] | None) -> None:
    """Two threads through the real SqliteSaver: one with a fork that abandons two calls, one plain."""
    folder.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        replies = iter(
            [
                _sonnet(
                    "a1",
                    input_tokens=1000,
                    output_tokens=300,
                    total_tokens=1300,
                    input_token_details={"cache_read": 600, "cache_creation": 200},
                    output_token_details={"reasoning": 100},
                ),
                AIMessage(
                    content="a2",
                    id="a2",
                    usage_metadata={"input_tokens": 50, "output_tokens": 5, "total_tokens": 55},
                    response_metadata={"model_name": "mystery-model-1"},
                ),
                AIMessage(content="a3 has no usage", id="a3"),
                AIMessage(
                    content="a4 on the fork",
                    id="a4",
                    usage_metadata={
                        "input_tokens": 400,
                        "output_tokens": 40,
                        "total_tokens": 440,
                        "input_token_details": {"cache_read": 100},
                    },
                    response_metadata={"model_name": "gpt-4o-2024-08-06"},
                ),
            ]
        )
        graph = _graph(replies).compile(checkpointer=saver)
        config: dict[str, Any] = {"configurable": {"thread_id": "t-fork"}}
        graph.invoke({"messages": [HumanMessage("one", id="h1")]}, config)
        after_first = graph.get_state(config).config
        graph.invoke({"messages": [HumanMessage("two", id="h2")]}, config)
        graph.invoke({"messages": [HumanMessage("three", id="h3")]}, config)
        # Time travel: new input from the first turn's checkpoint forks the thread there.
        graph.invoke({"messages": [HumanMessage("another way", id="h4")]}, after_first)

        plain = iter(
            [
                AIMessage(
                    content="p1",
                    id="p1",
                    usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
                ),
                AIMessage(
                    content="p2",
                    id="p2",
                    usage_metadata={"input_tokens": -5, "output_tokens": 1, "total_tokens": -4},
                ),
            ]
        )
        graph = _graph(plain).compile(checkpointer=saver)
        config = {"configurable": {"thread_id": "t-plain", "model": "claude-sonnet-4-5-20250929"}}
        graph.invoke({"messages": [HumanMessage("hi", id="q1")]}, config)
        graph.invoke({"messages": [HumanMessage("again", id="q2")]}, config)
    if pricing is not None:
        (folder / "pricing_cache.json").write_text(json.dumps(pricing))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    reset()
    folder = tmp_path / "cost-home"
    _write_home(
        folder, pricing={"timestamp": time.time(), "models": PRICES, "context_limits": {}, "providers": {}}
    )
    point_env_at(monkeypatch, folder)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    return folder


# -- the hand-computed case -------------------------------------------------------------------------


def test_hand_computed_cost_with_cache_and_reasoning_tokens(home: Path, capsys) -> None:
    data = cli_json(capsys, "cost", "--json")
    by_thread = {t["thread_id"]: t for t in data["threads"]}
    fork = by_thread["t-fork"]
    # a1 (sonnet, normalized): input 1000-600-200 = 200, output 300-100 = 200, cache read 600, write 200
    #   3x200 + 15x200 + 0.3x600 + 3.75x200 = 4,530 per million
    # a4 (gpt-4o by prefix): input 400-100 = 300, output 40, cache read 100: 2.5x300 + 10x40 + 1.25x100
    #   = 1,275 per million. a2 (mystery-model-1) has no price; a3 has no usage.
    a1, a4 = Decimal("0.00453"), Decimal("0.001275")
    assert Decimal(fork["cost_usd"]) == a1 + a4
    assert fork["input_tokens"] == 200 + 300 + 50
    assert fork["output_tokens"] == 200 + 40 + 5
    assert fork["reasoning_tokens"] == 100
    assert fork["cache_read_tokens"] == 600 + 100
    assert fork["cache_write_tokens"] == 200
    assert fork["unpriced_calls"] == 1
    # Mycel's calculator never prices reasoning; what it would cost at sonnet's output price, apart:
    assert Decimal(fork["reasoning_usd_if_priced"]) == Decimal("15") * 100 / 1_000_000
    models = {m["model"]: m for m in data["models"]}
    assert models["claude-sonnet-4-5-20250929"]["price"]["matched_by"] == "normalized"
    assert models["claude-sonnet-4-5-20250929"]["price"]["key"] == "claude-sonnet-4.5"
    assert models["gpt-4o-2024-08-06"]["price"]["matched_by"] == "prefix"
    assert models["gpt-4o-2024-08-06"]["price"]["key"] == "gpt-4o"
    assert Decimal(models["gpt-4o-2024-08-06"]["cost_usd"]) == a4
    assert models["mystery-model-1"]["price"] is None and models["mystery-model-1"]["cost_usd"] is None
    assert data["models_without_price"] == [
        {
            "model": "mystery-model-1",
            "input_tokens": 50,
            "output_tokens": 5,
            "reasoning_tokens": 0,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "calls": 1,
        }
    ]
    # t-plain: p1 is priced through the checkpoint metadata's model (no response_metadata stored)
    assert Decimal(by_thread["t-plain"]["cost_usd"]) == (Decimal(3) * 10 + Decimal(15) * 2) / 1_000_000
    assert Decimal(data["totals"]["cost_usd"]) == a1 + a4 + Decimal("0.00006")
    assert set(data["prices"]) == {"claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06"}
    assert data["pricing_cache"]["stale"] is False


def test_calls_without_usage_are_named_with_their_call_number(home: Path, capsys) -> None:
    missing = {
        (c["thread_id"], c["call"], c["message_id"]): c
        for c in cli_json(capsys, "cost", "--json")["calls_without_usage"]
    }
    assert set(missing) == {("t-plain", 2, "p2"), ("t-fork", None, "a3")}
    assert missing[("t-plain", 2, "p2")]["reason"] == "usage_metadata input_tokens is negative (-5)"
    assert missing[("t-fork", None, "a3")]["reason"] == "no usage_metadata"
    assert missing[("t-fork", None, "a3")]["branch"] == ABANDONED


def test_a_branch_message_is_counted_once_and_labelled(home: Path) -> None:
    reader = MycelReader(point_locations(home))
    calls = [c for c in list_fleet_calls(reader).value if c.thread_id == "t-fork"]
    assert [(c.message_id, c.call, c.branch) for c in calls] == [
        ("a1", 1, None),  # on the head and on the abandoned branch: once, with its head call number
        ("a4", 2, None),
        ("a2", None, ABANDONED),
        ("a3", None, ABANDONED),
    ]
    # a3 names no model anywhere: no response_metadata, no model in its checkpoints or threads row
    assert {c.message_id: c.model_from for c in calls} == {
        "a1": "response",
        "a4": "response",
        "a2": "response",
        "a3": "unknown",
    }
    # the day is the oldest checkpoint holding the message, never later than the head's own time
    assert all(c.at is not None and c.checkpoint_id for c in calls)


def test_model_falls_back_to_checkpoint_metadata(home: Path) -> None:
    reader = MycelReader(point_locations(home))
    plain = [c for c in list_fleet_calls(reader).value if c.thread_id == "t-plain"]
    assert [(c.call, c.model, c.model_from) for c in plain] == [
        (1, "claude-sonnet-4-5-20250929", "checkpoint"),
        (2, "claude-sonnet-4-5-20250929", "checkpoint"),
    ]


def test_fleet_is_warm_on_the_second_read(home: Path) -> None:
    reader = MycelReader(point_locations(home))
    list_fleet_calls(reader)
    before = THREAD_CALLS.stats()
    list_fleet_calls(MycelReader(point_locations(home)))
    after = THREAD_CALLS.stats()
    assert after.misses == before.misses and after.hits == before.hits + 2


def test_since_and_until(home: Path, capsys) -> None:
    today = datetime.now(UTC).date()
    on_today = cli_json(capsys, "cost", "--since", today.isoformat(), "--until", today.isoformat(), "--json")
    assert on_today["totals"]["calls"] == 4 and len(on_today["calls_without_usage"]) == 2
    yesterday, tomorrow = (today - timedelta(days=1)).isoformat(), (today + timedelta(days=1)).isoformat()
    assert cli_json(capsys, "cost", "--until", yesterday, "--json")["totals"]["calls"] == 0
    assert cli_json(capsys, "cost", "--since", tomorrow, "--json")["calls_without_usage"] == []


def test_period_sums_only_its_days() -> None:
    def call(day: int, tokens: int) -> CallUsage:
        at = datetime(2026, 11, day, 23, 59, tzinfo=UTC)
        return CallUsage("t", day, f"m{day}", "gpt-4o", "response", at, None, None, Usage(input=tokens))

    calls = [call(28, 1_000), call(29, 2_000), call(30, 4_000)]
    book = PriceBook.from_document({"timestamp": time.time(), "models": PRICES}, now=datetime.now(UTC))
    report = cost_report(calls, book, since=date(2026, 11, 29), until=date(2026, 11, 29))
    assert report.total.usage.input == 2_000 and report.total.cost_usd == Decimal("0.005")
    assert [d.name for d in report.days] == ["2026-11-29"]
    assert cost_report(calls, book, since=date(2026, 11, 29)).total.usage.input == 6_000
    assert cost_report(calls, book, until=date(2026, 11, 28)).total.usage.input == 1_000


def test_a_day_of_unpriced_calls_only_has_no_cost() -> None:
    # "$0.00" would read as free: a day whose calls the cache cannot price costs "—", as such a thread does.
    def call(day: int, model: str) -> CallUsage:
        at = datetime(2026, 11, day, 12, tzinfo=UTC)
        return CallUsage("t", day, f"m{day}", model, "response", at, None, None, Usage(input=1_000))

    book = PriceBook.from_document({"timestamp": time.time(), "models": PRICES}, now=datetime.now(UTC))
    report = cost_report([call(28, "gpt-4o"), call(29, "mystery-model-1")], book)
    assert [(d.name, d.cost_usd, d.unpriced_calls) for d in report.days] == [
        ("2026-11-28", Decimal("0.0025"), 0),
        ("2026-11-29", None, 1),
    ]
    assert report.total.cost_usd == Decimal("0.0025")


@pytest.mark.parametrize("value", ["2026-13-01", "yesterday", "2026-1-1", "<b>"])
def test_a_bad_date_is_one_line(home: Path, capsys, value: str) -> None:
    assert main(["cost", "--since", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mycel-memory: error: --since must be a date as YYYY-MM-DD, not {value!r}"]


def test_since_after_until_is_refused(home: Path, capsys) -> None:
    assert main(["cost", "--since", "2026-12-02", "--until", "2026-12-01"]) == 2
    assert "is after --until" in capsys.readouterr().err


def test_no_pricing_cache_shows_tokens_without_costs(tmp_path: Path, monkeypatch, capsys) -> None:
    reset()
    folder = tmp_path / "no-prices"
    _write_home(folder, pricing=None)
    point_env_at(monkeypatch, folder)
    data = cli_json(capsys, "cost", "--json")
    assert data["pricing_cache"] is None
    assert data["totals"]["cost_usd"] is None
    assert data["totals"]["input_tokens"] == 200 + 300 + 50 + 10
    assert data["models_without_price"] == []
    found = fleet_cost(MycelReader(point_locations(folder)), since=None, until=None)
    assert any("No pricing cache at" in note for note in found.notes)


# -- Mycel's lookup and usage split -----------------------------------------------------------------


def test_lookup_exact_normalized_prefix_none() -> None:
    book = PriceBook.from_document(
        {
            "timestamp": time.time(),
            "models": {
                **PRICES,
                "gpt-4o-2024-08-06": {"input": "2", "output": "8"},
                "claude-opus-4.1": {"input": "15", "output": "75"},
                "gpt-4": {"input": "30", "output": "60"},
            },
        },
        now=datetime.now(UTC),
    )
    assert book.price_for("gpt-4o-2024-08-06") == (Price(Decimal(2), Decimal(8)), MatchedBy.EXACT)
    assert book.price_for("claude-sonnet-4-5-20250929")[1] is MatchedBy.NORMALIZED
    assert book.price_for("claude-opus-4-1-20250805")[1] is MatchedBy.NORMALIZED
    # the longest key the name starts with: gpt-4o, not gpt-4
    price, how = book.price_for("gpt-4o-mini")
    assert how is MatchedBy.PREFIX and price is not None and price.input == Decimal("2.5")
    assert book.price_for("leon:large") == (None, None)
    # a kind the cache does not give costs nothing, as in Mycel
    assert Price(Decimal(2), Decimal(8)).cache_read == 0


def test_stale_cache_is_said_against_mycels_ttl(tmp_path: Path) -> None:
    now = datetime.now(UTC)
    fresh = PriceBook.from_document(
        {"timestamp": now.timestamp() - CACHE_TTL_S + 60, "models": PRICES}, now=now
    )
    stale = PriceBook.from_document(
        {"timestamp": now.timestamp() - CACHE_TTL_S - 60, "models": PRICES}, now=now
    )
    assert not fresh.stale and stale.stale
    assert PriceBook.from_document({"models": PRICES}, now=now).stale  # no timestamp: Mycel would refetch


def test_stale_sample_cache_is_noted(sample_home: Path) -> None:
    later = datetime.fromtimestamp(
        json.loads((sample_home / "pricing_cache.json").read_text())["timestamp"], UTC
    )
    found = fleet_cost(
        MycelReader(point_locations(sample_home)), since=None, until=None, now=later + timedelta(days=2)
    )
    assert any("Mycel ignores a cache older than 24 h" in note for note in found.notes)
    assert found.report.book is not None and found.report.book.stale


@pytest.mark.parametrize(
    ("metadata", "why"),
    [
        (None, "no usage_metadata"),
        ({"input_tokens": 1.5, "output_tokens": 1}, "input_tokens is not a whole number (float)"),
        ({"input_tokens": True, "output_tokens": 1}, "input_tokens is not a whole number (bool)"),
        ({"input_tokens": -1, "output_tokens": 1}, "input_tokens is negative (-1)"),
        (
            {"input_tokens": 10, "output_tokens": 1, "input_token_details": {"cache_read": 11}},
            "details exceed their totals",
        ),
    ],
)
def test_unusable_usage_is_named(metadata: dict[str, Any] | None, why: str) -> None:
    found = read_usage(metadata)
    assert isinstance(found, str) and why in found
    assert usage_of(Message(MessageType.AI, usage_metadata=metadata)) is None


def test_usage_split_as_mycels_token_monitor() -> None:
    usage = read_usage(
        {
            "input_tokens": 1000,
            "output_tokens": 300,
            "input_token_details": {"cache_read": 600, "cache_creation": None},
            "output_token_details": {"reasoning": 100},
        }
    )
    assert usage == Usage(input=400, output=200, reasoning=100, cache_read=600, cache_write=0)
    assert cost_of(usage, Price(Decimal(3), Decimal(15), Decimal("0.3"))) == Decimal("0.00438")


# -- each engine's store against an independent computation -----------------------------------------


def _sample_key(name: str, prices: dict[str, Any]) -> str:
    # The sample's names, spelled out: exact, or with a date suffix and "4-5" where the cache has "4.5".
    if name in prices:
        return name
    if name[-9] == "-" and name[-8:].isdigit():
        name = name[:-9]
    head, _, minor = name.rpartition("-")
    return f"{head}.{minor}"


def test_totals_match_langgraphs_messages(mycel_store: MycelStore, capsys) -> None:
    prices = mycel_store.prices()  # the sample home's pricing cache; none beside the demo's threads
    expected = None if prices is None else Decimal(0)
    calls = tokens = 0
    for messages in mycel_store.heads().values():
        for message in messages:
            if message.type != "ai":
                continue
            usage = message.usage_metadata
            assert usage, message.id  # every call of either store says what it used
            calls += 1
            tokens += usage["input_tokens"] + usage["output_tokens"]
            if expected is not None:
                price = prices[_sample_key(message.response_metadata["model_name"], prices)]
                expected += (
                    Decimal(price["input"]) * usage["input_tokens"]
                    + Decimal(price["output"]) * usage["output_tokens"]
                ) / 1_000_000
    code, out, err = run_cli(capsys, "cost", "--json")
    assert code == 0, err
    data = json.loads(out)
    totals = data["totals"]
    assert calls == totals["calls"] == mycel_store.model_calls and data["calls_without_usage"] == []
    # Mycel's split partitions input and output tokens, so the kinds add up to the provider's totals; neither
    # store holds cache or reasoning tokens, so input and output alone do too.
    kinds = ("input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_write_tokens")
    assert sum(totals[k] for k in kinds) == tokens
    assert totals["input_tokens"] + totals["output_tokens"] == tokens
    assert (None if totals["cost_usd"] is None else Decimal(totals["cost_usd"])) == expected
    assert ("No pricing cache at" in err) is (prices is None)


def test_a_dashboard_rollback_leaves_its_calls_counted_once_as_abandoned(home: Path, capsys) -> None:
    from memory_core.app.rollback import apply_rollback, preview_rollback

    reader = MycelReader(point_locations(home))
    target = next(c for c in reader.list_checkpoints("t-plain").value if c.messages == 2)
    apply_rollback(
        reader.locations,
        preview_rollback(reader, "t-plain", target.checkpoint_id),
        actor="test",
        force=True,
        reader=reader,
    )
    data = cli_json(capsys, "cost", "--json")
    plain = next(t for t in data["threads"] if t["thread_id"] == "t-plain")
    assert plain["calls"] == 1 and plain["input_tokens"] == 10  # p1, still call 1 on the new head
    missing = [c for c in data["calls_without_usage"] if c["thread_id"] == "t-plain"]
    # p2 left the active history with the rollback: named once, off the head, with no call number
    assert [(c["message_id"], c["call"], c["branch"]) for c in missing] == [("p2", None, ABANDONED)]

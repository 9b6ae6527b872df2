"""Estimator calibration on threads LangGraph's real SqliteSaver wrote, where every number is known, and
on Mycel's sample home (SQLite) and the demo's threads on PostgreSQL against a second computation from
LangGraph's decoded messages and tiktoken."""

from __future__ import annotations

import json
import sqlite3
import statistics
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
import tiktoken
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from memory_core.app.fleet_calls import fleet_records
from memory_core.cli import main
from memory_core.compaction import SUMMARY_HEADER, plan_compaction
from memory_core.economics.calibration import (
    Fit,
    Kind,
    content_kind,
    least_squares,
    percentile,
    recommend,
    sent_tiktoken,
)
from memory_core.memo import reset
from memory_core.memory_settings import MemorySettings
from memory_core.messages import message_from_dict
from memory_core.pruning import prune_decisions
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from memory_core.tokens import OFFLINE_ENCODING, TokenCounter
from tests.core.store_builders import point_locations
from tests.support.cli import cli_json
from tests.support.engines import MycelStore
from tests.support.mycel_env import point_env_at

ENC = OFFLINE_ENCODING
LIMIT = 10_000  # runtime.json's context_limit for the hand-built home: trigger int(0.7 x 10,000) = 7,000
CJK_TEXT = "记忆中间件按字符数除以二估算令牌，中文每个字几乎就是一个令牌。" * 4
CODE_TEXT = "def total(items):\n    return sum(item.price for item in items if item.price > 0)\n" * 3


def _tokens(text: str) -> int:
    return len(tiktoken.get_encoding(ENC).encode_ordinary(text))


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


def _reply(text: str, model: str, input_tokens: int) -> AIMessage:
    return AIMessage(
        content=text,
        usage_metadata={"input_tokens": input_tokens, "output_tokens": 1, "total_tokens": input_tokens + 1},
        response_metadata={"model_name": model},
    )


def _play(saver: SqliteSaver, thread_id: str, turns: list[tuple[str, AIMessage]]) -> None:
    graph = _graph(iter([reply for _, reply in turns])).compile(checkpointer=saver)
    config: dict[str, Any] = {"configurable": {"thread_id": thread_id}}
    for human, _ in turns:
        graph.invoke({"messages": [HumanMessage(human)]}, config)


FIT_HUMANS = [f"question {n}: " + "x" * (40 * n) for n in range(1, 7)]  # even lengths: exact estimates
FIT_REPLY = "answer"


def _fit_sent() -> list[int]:
    """Mycel's estimate of what each call of the fit thread sent: every earlier message, chars // 2."""
    sent, chars = [], 0
    for human in FIT_HUMANS:
        chars += len(human)
        sent.append(chars // 2)
        chars += len(FIT_REPLY)
    return sent


def _write_home(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "runtime.json").write_text(json.dumps({"runtime": {"context_limit": LIMIT}}))
    with closing(sqlite3.connect(folder / "leon.db", check_same_thread=False)) as conn:
        saver = SqliteSaver(conn)
        _play(saver, "t-cjk", [(CJK_TEXT, _reply("好", "model-kinds", 3 * len(CJK_TEXT) // 2))])
        _play(saver, "t-code", [(CODE_TEXT, _reply("ok", "model-kinds", len(CODE_TEXT) // 4))])
        # provider = 1,000 + 2 x estimate exactly: the fit's overhead and rate are known.
        _play(
            saver,
            "t-fit",
            [
                (h, _reply(FIT_REPLY, "model-fit", 1000 + 2 * s))
                for h, s in zip(FIT_HUMANS, _fit_sent(), strict=True)
            ],
        )
        # 4,000 characters: an estimate of 2,000 under the 7,000 trigger, yet 7,500 real tokens (over the
        # real 70 % line), then 12,000 (over the limit) while the estimate is still far under both.
        _play(
            saver,
            "t-unseen",
            [
                ("a" * 4000, _reply("r1", "model-unseen", 7500)),
                ("b" * 10, _reply("r2", "model-unseen", 12_000)),
            ],
        )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    reset()
    folder = tmp_path / "calibration-home"
    _write_home(folder)
    point_env_at(monkeypatch, folder)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "cache"))
    return folder


def _model(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(m for m in data["models"] if m["model"] == name)


# -- the classifier -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (CJK_TEXT, Kind.CJK),
        ('{"files": ["a.py", "b.py"], "count": 2}', Kind.JSON),
        ("[1, 2, 3]", Kind.JSON),
        ("{not json", Kind.CODE),
        ("```\nls -la\n```", Kind.CODE),
        (CODE_TEXT, Kind.CODE),
        ("The estimate counts characters and halves them.", Kind.PROSE),
        ("", Kind.PROSE),
        ("注意：文件是 missing", Kind.CJK),  # 6 of 13 non-space characters are CJK
        ("注意: the file 是 missing", Kind.PROSE),  # 3 of 18: under 30 %
    ],
)
def test_content_kind(text: str, kind: Kind) -> None:
    assert content_kind(text) is kind


# -- hand-built threads ---------------------------------------------------------------------------------


def test_cjk_against_code_ratios_are_tiktokens_counts_over_the_estimate(home: Path, capsys) -> None:
    data = cli_json(capsys, "calibration", "--model", "model-kinds", "--json")
    assert data["encodings"] == [ENC]
    kinds = _model(data, "model-kinds")
    cjk_ratio = _tokens(CJK_TEXT) / (len(CJK_TEXT) / 2)
    code_ratio = _tokens(CODE_TEXT) / (len(CODE_TEXT) / 2)
    assert cjk_ratio > 1.5 > 1 > code_ratio  # CJK is about a token a character; code about 2.4 a token
    by_kind = kinds["by_kind"]
    assert set(by_kind) == {"cjk", "code"}  # the replies were never sent: no call followed them
    assert by_kind["cjk"]["messages"] == 1 and by_kind["cjk"]["estimate_tokens"] == len(CJK_TEXT) / 2
    assert by_kind["cjk"]["tiktoken"][ENC] == {"tokens": _tokens(CJK_TEXT), "ratio": round(cjk_ratio, 4)}
    assert by_kind["code"]["tiktoken"][ENC] == {"tokens": _tokens(CODE_TEXT), "ratio": round(code_ratio, 4)}
    # The provider's ratio of the calls each kind dominates: input_tokens / (chars // 2).
    assert by_kind["cjk"]["provider_ratio_of_dominated_calls"]["p50"] == round(
        (3 * len(CJK_TEXT) // 2) / (len(CJK_TEXT) // 2), 4
    )
    assert by_kind["code"]["provider_ratio_of_dominated_calls"]["p50"] == round(
        (len(CODE_TEXT) // 4) / (len(CODE_TEXT) // 2), 4
    )
    # Per call, against tiktoken: two calls, p10..p90 between the code and the CJK ratio.
    per_call = sorted(_tokens(t) / (len(t) // 2) for t in (CJK_TEXT, CODE_TEXT))
    spread = kinds["estimate_ratio"]["tiktoken"][ENC]
    assert spread["count"] == 2
    assert spread["p10"] == round(per_call[0] + 0.1 * (per_call[1] - per_call[0]), 4)
    assert spread["p90"] == round(per_call[0] + 0.9 * (per_call[1] - per_call[0]), 4)
    assert kinds["fit"] is None and kinds["recommended_context_limit"] is None
    assert "a fit needs at least 5" in kinds["recommendation_basis"]


def test_fit_overhead_and_rate_and_the_recommendation(home: Path, capsys) -> None:
    fit = _model(cli_json(capsys, "calibration", "--json"), "model-fit")
    assert fit["calls"] == fit["provider_calls"] == 6
    assert fit["fit"]["overhead_tokens"] == 1000.0 and fit["fit"]["rate"] == 2.0
    assert fit["estimate_ratio"]["provider"]["p50"] == round(
        statistics.median((1000 + 2 * s) / s for s in _fit_sent()), 4
    )
    # overhead + rate x T' = 0.7 x 10,000: T' = (7,000 - 1,000) / 2; L' = T' / 0.7.
    assert fit["limit_in_force"] == LIMIT
    assert fit["recommended_trigger_tokens"] == 3000
    assert fit["recommended_context_limit"] == int(3000 / 0.7) == 4285
    assert fit["crossed_limit_unseen"] == []
    assert [p["provider_input_tokens"] for p in fit["points"]] == [1000 + 2 * s for s in _fit_sent()]


def test_the_real_count_crossing_unseen_is_flagged_with_its_call(home: Path, capsys) -> None:
    unseen = _model(cli_json(capsys, "calibration", "--json"), "model-unseen")["crossed_limit_unseen"]
    assert [(u["thread_id"], u["call"], u["line"], u["real_tokens"]) for u in unseen] == [
        ("t-unseen", 1, "70 % line", 7500),
        ("t-unseen", 2, "context limit", 12_000),
    ]
    first = unseen[0]
    assert first["real_from"] == "provider" and first["pruned_tokens"] == 2000
    assert first["trigger_tokens"] == 7000 and first["context_limit"] == LIMIT


def test_per_thread_figures_are_the_same_figures_on_its_calls(home: Path, capsys) -> None:
    data = cli_json(capsys, "calibration", "--json")
    threads = {t["thread_id"]: t["models"] for t in data["threads"]}
    assert set(threads) == {"t-cjk", "t-code", "t-fit", "t-unseen"}
    (own,) = threads["t-fit"]
    fleet = _model(data, "model-fit")
    assert {k: v for k, v in fleet.items() if k != "points"} == own  # the only thread of its model
    assert [m["calls"] for m in threads["t-cjk"]] == [1]


def test_recommendation_arithmetic() -> None:
    assert (
        recommend(Fit(overhead=2000, rate=1.25, calls=9), 200_000, 9).context_limit
        == 157_714
        == int(int((140_000 - 2000) / 1.25) / 0.7)
    )
    assert recommend(Fit(overhead=2000, rate=1.25, calls=9), 200_000, 9).trigger_tokens == 110_400
    none = recommend(Fit(overhead=8000, rate=1.0, calls=9), 10_000, 9)
    assert none.context_limit is None and "no room" in none.reason
    assert recommend(None, 10_000, 3).reason.startswith("3 call(s) with a provider count")
    assert least_squares([(10, 20)] * 6) is None  # one estimate: no line
    fit = least_squares([(x, 50 + 3 * x) for x in range(1, 7)])
    assert fit is not None and (fit.overhead, fit.rate) == (pytest.approx(50.0), pytest.approx(3.0))
    assert percentile([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5


def test_recount_in_another_encoding_equals_the_records_own_count(home: Path) -> None:
    reader = MycelReader(point_locations(home))
    counter = TokenCounter(ENC)
    for _row, record in fleet_records(reader):
        settings = record.configured.settings
        again = sent_tiktoken(record.messages, record.calls, lambda _c, s=settings: s, counter)
        assert again == [c.tiktoken_tokens for c in record.calls]


def test_unknown_model_is_one_line(home: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["calibration", "--model", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no model call used model 'nope'" in err[0] and "model-fit" in err[0]


def test_table_names_the_encoding_and_the_overhead(home: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["calibration"]) == 0
    out = capsys.readouterr().out
    assert ENC in out and "system prompt + tool schemas" in out
    assert "model-fit: context_limit 4,285 (in force 10,000), or dev's trigger_tokens 3,000" in out
    assert "unseen: t-unseen call 2 crossed the context limit" in out


def test_fleet_is_warm_on_the_second_read(home: Path, capsys) -> None:
    from memory_core.app.fleet_calls import _REDUCTIONS

    first = cli_json(capsys, "calibration", "--json")
    before = _REDUCTIONS.stats()
    assert cli_json(capsys, "calibration", "--json") == first
    after = _REDUCTIONS.stats()
    assert after.misses == before.misses and after.hits == before.hits + 4


# -- each engine's store against LangGraph's decoded messages ----------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else b.get("text", "") if isinstance(b.get("text", ""), str) else ""
        for b in content
    )


def _oracle_calls(
    store: MycelStore, limits: dict[str, list[int]]
) -> dict[str, list[tuple[str, int, int, int]]]:
    """Per model, every call's (thread, estimate sent, tiktoken sent, provider): LangGraph's messages
    pruned by the vectors' rules, the stored summary where Mycel compacted (its cache while under the
    trigger), counted by tiktoken itself."""
    encode = tiktoken.get_encoding(ENC).encode_ordinary
    out: dict[str, list[tuple[str, int, int, int]]] = defaultdict(list)
    for thread_id, raw in store.heads().items():
        messages = [message_from_dict(m.model_dump()) for m in raw]
        rows = {at: (text, up_to) for text, up_to, at in store.summaries(thread_id)}
        cached: tuple[str, int] | None = None
        ai = [i for i, m in enumerate(raw) if m.type == "ai"]
        for n, i in enumerate(ai):
            settings = MemorySettings(context_limit=limits[thread_id][n])
            pruned = prune_decisions(messages[:i], settings=settings).messages
            if i in rows:
                cached = rows[i]
                summary: tuple[str, int] | None = cached
            elif not plan_compaction(messages[:i], settings=settings).should_compact:
                summary = cached
            else:
                summary = None
            start = summary[1] if summary else 0
            chars = sum(len(_text(m.content)) for m in pruned[start:])
            tokens = sum(len(encode(_text(m.content))) for m in pruned[start:])
            if summary:
                chars += len(SUMMARY_HEADER) + len(summary[0])
                tokens += len(encode(SUMMARY_HEADER + summary[0]))
            model = raw[i].response_metadata["model_name"]
            out[model].append((thread_id, chars // 2, tokens, raw[i].usage_metadata["input_tokens"]))
    return out


def _deciles(values: list[float]) -> dict[str, float]:
    if len(values) == 1:
        return {"p10": round(values[0], 4), "p50": round(values[0], 4), "p90": round(values[0], 4)}
    q = statistics.quantiles(values, n=10, method="inclusive")
    return {"p10": round(q[0], 4), "p50": round(q[4], 4), "p90": round(q[8], 4)}


def test_figures_match_langgraphs_messages(mycel_store: MycelStore, capsys) -> None:
    # The limit in force at each call is the record's (its inference is tested in test_record*.py).
    limits: dict[str, list[int]] = {}
    for _row, record in fleet_records(MycelReader(resolve_locations())):
        limits[_row.thread_id] = [c.context_limit for c in record.calls]
    expected = _oracle_calls(mycel_store, limits)
    data = cli_json(capsys, "calibration", "--json")
    assert [m["model"] for m in data["models"]] == sorted(expected)
    assert sum(m["calls"] for m in data["models"]) == mycel_store.model_calls
    for m in data["models"]:
        calls = expected[m["model"]]
        assert (
            m["calls"] == m["provider_calls"] == len(calls) == m["estimate_ratio"]["tiktoken"][ENC]["count"]
        )
        provider = _deciles([p / s for _, s, _, p in calls])
        assert {k: m["estimate_ratio"]["provider"][k] for k in provider} == provider
        real = _deciles([t / s for _, s, t, _ in calls])
        assert {k: m["estimate_ratio"]["tiktoken"][ENC][k] for k in real} == real
        assert sorted(
            (p["thread_id"], p["sent_tokens"], p["provider_input_tokens"]) for p in m["points"]
        ) == sorted((t, s, p) for t, s, _, p in calls)
        if len(calls) >= 5:
            slope, intercept = statistics.linear_regression(
                [s for _, s, _, _ in calls], [p for *_, p in calls]
            )
            assert m["fit"]["rate"] == pytest.approx(slope, abs=1e-6)
            assert m["fit"]["overhead_tokens"] == pytest.approx(intercept, abs=0.01)
            limit = m["limit_in_force"]
            assert m["recommended_trigger_tokens"] == pytest.approx((0.7 * limit - intercept) / slope, abs=1)
            assert m["recommended_context_limit"] == pytest.approx(
                (0.7 * limit - intercept) / (0.7 * slope), abs=2
            )
        else:
            assert m["fit"] is None and m["recommended_context_limit"] is None
        # Each provider count is under the real 70 % line of its limit: nothing crossed unseen.
        assert m["crossed_limit_unseen"] == []

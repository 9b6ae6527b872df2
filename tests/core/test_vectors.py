"""Every case of the public vectors (produced by running Mycel's own memory code) must agree exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory_core.compaction import (
    detect_split_turn,
    message_token_estimates,
    plan_compaction,
    split_messages,
    summary_text_for,
)
from memory_core.memory_settings import MemorySettings
from memory_core.messages import Message, messages_from_dicts
from memory_core.pruning import PruneAction, prune_decisions
from memory_core.tokens import estimate_tokens
from tests.support.cli import cli_json
from tests.support.sample_data import VECTORS

CASES: list[dict[str, Any]] = json.loads(VECTORS.read_text(encoding="utf-8"))["cases"]


def _settings(config: dict[str, Any]) -> MemorySettings:
    return MemorySettings(
        soft_trim_chars=config["soft_trim_chars"],
        hard_clear_threshold=config["hard_clear_threshold"],
        protect_recent=config["protect_recent"],
        reserve_tokens=config["reserve_tokens"],
        keep_recent_tokens=config["keep_recent_tokens"],
        context_limit=config["context_limit"],
        threshold=config["threshold"],
    )


def _str_len(message: Message) -> int | None:
    return len(message.content) if isinstance(message.content, str) else None


def _first_type(messages: tuple[Message, ...]) -> str | None:
    return messages[0].type.value if messages else None


@pytest.fixture(params=CASES, ids=[case["id"] for case in CASES])
def case(request: pytest.FixtureRequest) -> dict[str, Any]:
    result: dict[str, Any] = request.param
    return result


def test_vectors_cover_every_category() -> None:
    assert {c["category"] for c in CASES} >= {
        "random_mix",
        "compaction",
        "edge",
        "prune_thresholds",
        "protect_recent",
    }


def test_estimates_match_mycel(case: dict[str, Any]) -> None:
    messages = messages_from_dicts(case["input"], strict=True)
    pruned = prune_decisions(messages, settings=_settings(case["config"])).messages
    assert estimate_tokens(messages) == case["outputs"]["estimate_tokens"]["raw"]
    assert estimate_tokens(pruned) == case["outputs"]["estimate_tokens"]["pruned"]


def test_every_pruning_decision_and_content_matches_mycel(case: dict[str, Any]) -> None:
    messages = messages_from_dicts(case["input"], strict=True)
    result = prune_decisions(messages, settings=_settings(case["config"]))
    expected = case["outputs"]["prune"]
    assert len(result.decisions) == len(expected)
    for decision, want in zip(result.decisions, expected, strict=True):
        assert decision.index == want["index"]
        assert decision.action.mycel_action == want["action"], (decision.index, decision.rule)
        assert _str_len(decision.message) == want["content_len"]
        if want["action"] == "unchanged":
            assert decision.message == messages[decision.index]
        else:
            assert decision.content == want["content"]


def test_compactor_on_raw_input_matches_mycel(case: dict[str, Any]) -> None:
    config = case["config"]
    want = case["outputs"]["compactor"]
    messages = messages_from_dicts(case["input"], strict=True)
    assert list(message_token_estimates(messages)) == want["msg_tokens"]
    split = split_messages(messages, keep_recent_tokens=config["keep_recent_tokens"])
    assert split.summarize_count == want["split_index"] == want["to_summarize_len"]
    assert len(split.to_keep) == want["to_keep_len"]
    assert _first_type(split.to_keep) == want["to_keep_first_type"]
    turn = detect_split_turn(split.to_keep, context_limit=config["context_limit"])
    assert turn.is_split_turn is want["is_split_turn"]
    assert len(turn.prefix) == want["turn_prefix_len"]
    raw_settings = _settings(config)
    assert (case["outputs"]["estimate_tokens"]["raw"] > raw_settings.trigger_tokens) is want["should_compact"]


def test_middleware_pipeline_matches_mycel(case: dict[str, Any]) -> None:
    want = case["outputs"]["middleware"]
    messages = messages_from_dicts(case["input"], strict=True)
    plan = plan_compaction(messages, settings=_settings(case["config"]), summary_placeholder="SUMMARY")
    assert plan.keep_recent_tokens == want["effective_keep_recent_tokens"]
    assert list(plan.message_tokens) == want["msg_tokens"]
    assert plan.summarize_count == want["split_index"] == want["to_summarize_len"]
    assert plan.keep_count == want["to_keep_len"]
    assert _first_type(plan.pruning.messages[plan.summarize_count :]) == want["to_keep_first_type"]
    assert plan.split_turn is want["is_split_turn"]
    assert plan.turn_prefix_count == want["turn_prefix_len"]
    assert plan.should_compact is want["should_compact"]

    done = want["do_compact"]
    assert (plan.compact_up_to_index is not None) is done["compacted"]
    assert plan.compact_up_to_index == done["compact_up_to_index"]
    assert len(plan.messages_after) == done["returned_len"]
    returned = [{"type": m.type.value, "id": m.id, "content_len": _str_len(m)} for m in plan.messages_after]
    assert returned == done["returned"]
    if done["compacted"]:
        assert done["summary_model_calls"] == (2 if plan.split_turn else 1)
        assert summary_text_for("SUMMARY", "SUMMARY" if plan.split_turn else None) == done["cached_summary"]
    else:
        assert done["summary_model_calls"] == 0


def _plan_json(case: dict[str, Any], tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    config = case["config"]
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(case["input"]), encoding="utf-8")
    out: dict[str, Any] = cli_json(
        capsys,
        "plan",
        "--messages",
        str(path),
        "--context-limit",
        str(config["context_limit"]),
        "--threshold",
        str(config["threshold"]),
        "--soft-trim-chars",
        str(config["soft_trim_chars"]),
        "--hard-clear-threshold",
        str(config["hard_clear_threshold"]),
        "--protect-recent",
        str(config["protect_recent"]),
        "--keep-recent-tokens",
        str(config["keep_recent_tokens"]),
        "--json",
    )
    return out


@pytest.mark.parametrize(
    "case_id", [c["id"] for c in CASES[::6]] + ["edge-031", "protect_recent-000", "edge-024"]
)
def test_cli_plan_json_matches_mycel(case_id: str, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in CASES if c["id"] == case_id)
    out = _plan_json(case, tmp_path, capsys)
    outputs = case["outputs"]
    middleware = outputs["middleware"]
    assert out["estimated_tokens"] == {
        "stored": outputs["estimate_tokens"]["raw"],
        "after_pruning": outputs["estimate_tokens"]["pruned"],
    }
    for row, want, raw in zip(out["pruning"], outputs["prune"], case["input"], strict=True):
        assert row["index"] == want["index"]
        assert row["type"] == raw["type"]
        assert PruneAction(row["action"]).mycel_action == want["action"]
        assert row["content"] == (raw["content"] if want["action"] == "unchanged" else want["content"])
    compaction = out["compaction"]
    assert compaction == {
        "threshold_tokens": int(case["config"]["context_limit"] * case["config"]["threshold"]),
        "should_compact": middleware["should_compact"],
        "keep_recent_tokens": middleware["effective_keep_recent_tokens"],
        "message_tokens": middleware["msg_tokens"],
        "summarize_count": middleware["to_summarize_len"],
        "keep_count": middleware["to_keep_len"],
        "split_turn": middleware["is_split_turn"],
        "turn_prefix_count": middleware["turn_prefix_len"],
        "compact_up_to_index": middleware["do_compact"]["compact_up_to_index"],
    }

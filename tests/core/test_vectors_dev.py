"""Every case of Mycel dev's public vectors (produced by dev's own memory middleware), through the CLI
contract of their meta.cli, compared field by field to the character."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import main
from memory_core.pruning import PruneAction
from tests.support.sample_data import DEV_VECTORS

DOCUMENT: dict[str, Any] = json.loads(DEV_VECTORS.read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = DOCUMENT["cases"]


def _arguments(case: dict[str, Any], tmp_path: Path) -> list[str]:
    """The invocation meta.cli spells out, with each optional flag passed only when the case has it."""
    config = case["config"]
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps(case["input"]), encoding="utf-8")
    args = ["plan", "--rules", "dev", "--messages", str(messages), "--json"]
    for key in (
        "context_limit",
        "soft_trim_chars",
        "hard_clear_threshold",
        "protect_recent",
        "keep_recent_tokens",
    ):
        args += ["--" + key.replace("_", "-"), str(config[key])]
    if config["trigger_tokens"] is not None:
        args += ["--trigger-tokens", str(config["trigger_tokens"])]
    if "active_summary" in case:
        summary = tmp_path / "summary.json"
        summary.write_text(json.dumps(case["active_summary"]), encoding="utf-8")
        args += ["--active-summary", str(summary)]
    if "breaker" in case:
        breaker = case["breaker"]
        args += ["--breaker-failures", str(breaker["failure_count"])]
        args += ["--breaker-open", "true" if breaker["breaker_open"] else "false"]
        if breaker["summarizer_fails"]:
            args.append("--summarizer-fails")
    return args


def test_the_cli_contract_is_the_one_these_tests_follow() -> None:
    compared = DOCUMENT["meta"]["cli"]["compared"]
    assert len(CASES) == DOCUMENT["meta"]["case_count"] == 124
    assert set(compared) == {
        "estimated_tokens.stored",
        "estimated_tokens.after_pruning",
        "estimated_tokens.trigger_view",
        "len(pruning)",
        "pruning[i].action",
        "pruning[i].content",
        "compaction.threshold_tokens",
        "compaction.should_compact",
        "compaction.keep_recent_tokens",
        "compaction.message_tokens",
        "compaction.summarize_count",
        "compaction.keep_count",
        "compaction.split_turn",
        "compaction.turn_prefix_count",
        "compaction.attempted",
        "compaction.compact_up_to_index",
        "compaction.breaker",
    }


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_cli_plan_under_dev_rules_matches_mycel_dev(
    case: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_arguments(case, tmp_path)) == 0
    out = json.loads(capsys.readouterr().out)
    outputs = case["outputs"]
    middleware = outputs["middleware"]
    done = middleware["do_compact"]

    assert out["estimated_tokens"] == {
        "stored": outputs["estimate_tokens"]["raw"],
        "after_pruning": outputs["estimate_tokens"]["pruned"],
        "trigger_view": outputs["estimate_tokens"]["trigger_view"],
    }
    assert len(out["pruning"]) == len(outputs["prune"])
    for row, want, raw in zip(out["pruning"], outputs["prune"], case["input"], strict=True):
        assert PruneAction(row["action"]).mycel_action == want["action"], row["index"]
        assert row["content"] == (raw["content"] if want["action"] == "unchanged" else want["content"])
    compaction = out["compaction"]
    assert {
        "threshold_tokens": compaction["threshold_tokens"],
        "should_compact": compaction["should_compact"],
        "keep_recent_tokens": compaction["keep_recent_tokens"],
        "message_tokens": compaction["message_tokens"],
        "summarize_count": compaction["summarize_count"],
        "keep_count": compaction["keep_count"],
        "split_turn": compaction["split_turn"],
        "turn_prefix_count": compaction["turn_prefix_count"],
        "attempted": compaction["attempted"],
        "compact_up_to_index": compaction["compact_up_to_index"],
        "breaker": compaction["breaker"],
    } == {
        "threshold_tokens": middleware["threshold_tokens"],
        "should_compact": middleware["should_compact"],
        "keep_recent_tokens": middleware["effective_keep_recent_tokens"],
        "message_tokens": middleware["msg_tokens"],
        "summarize_count": middleware["to_summarize_len"],
        "keep_count": middleware["to_keep_len"],
        "split_turn": middleware["is_split_turn"],
        "turn_prefix_count": middleware["turn_prefix_len"],
        "attempted": done["attempted"],
        "compact_up_to_index": done["compact_up_to_index"],
        "breaker": {
            "failure_count": done["breaker_after"]["failure_count"],
            "open": done["breaker_after"]["breaker_open"],
        },
    }
    # Not in meta.cli.compared, but the same step: what was sent, and whether the view applied.
    assert compaction["summary_view_applied"] is middleware["summary_view_applied"]
    assert compaction["sent"] == {
        "count": middleware["sent"]["len"],
        "from_index": middleware["sent"]["from_index"],
    }

"""`mycel-memory plan`: bad input ends with one clear line and a non-zero exit, good input with a plan."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import main

THREAD: list[dict[str, Any]] = [
    {"type": "human", "content": "look at the logs", "id": "h1"},
    {"type": "ai", "content": "", "id": "a1", "tool_calls": [{"id": "c1", "name": "Read", "args": {}}]},
    {"type": "tool", "content": "x" * 12000, "id": "t1", "tool_call_id": "c1", "name": "Read"},
    {"type": "ai", "content": "", "id": "a2", "tool_calls": [{"id": "c2", "name": "Read", "args": {}}]},
    {"type": "tool", "content": "y" * 5000, "id": "t2", "tool_call_id": "c2", "name": "Read"},
    {"type": "ai", "content": "done", "id": "a3", "tool_calls": []},
]


def _write(tmp_path: Path, data: Any, name: str = "messages.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _run_failing(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert "Traceback" not in captured.err
    assert captured.out == ""
    assert len(lines) == 1, lines
    return lines[0]


def test_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _run_failing(["plan", "--messages", str(tmp_path / "nope.json")], capsys)
    assert "cannot read" in line and "nope.json" in line


def test_invalid_json_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _run_failing(["plan", "--messages", str(_write(tmp_path, "[{"))], capsys)
    assert "not valid JSON" in line


def test_json_that_is_not_a_list_is_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _run_failing(["plan", "--messages", str(_write(tmp_path, {"type": "human"}))], capsys)
    assert "JSON list" in line


def test_unknown_message_type_names_the_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = [*THREAD[:2], {"type": "function", "content": "?"}]
    line = _run_failing(["plan", "--messages", str(_write(tmp_path, data))], capsys)
    assert "message 2" in line and "'function'" in line


@pytest.mark.parametrize(
    "flag",
    [
        ["--threshold", "-0.1"],
        ["--threshold", "nan"],
        ["--threshold", "abc"],
        ["--context-limit", "0"],
        ["--soft-trim-chars", "-5"],
        ["--hard-clear-threshold", "0"],
        ["--protect-recent", "-1"],
        ["--keep-recent-tokens", "1.5"],
    ],
)
def test_bad_flag_values_fail_cleanly(
    flag: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _run_failing(["plan", "--messages", str(_write(tmp_path, THREAD)), *flag], capsys)
    assert flag[0] in line


def test_invalid_runtime_config_value_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(tmp_path, {"memory": {"pruning": {"soft_trim_chars": -3}}}, "runtime.json")
    line = _run_failing(
        ["plan", "--messages", str(_write(tmp_path, THREAD)), "--runtime-config", str(config)], capsys
    )
    assert "soft_trim_chars" in line


def test_stdin_and_runtime_config_feed_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _write(
        tmp_path,
        {
            "runtime": {"context_limit": 5000},
            "memory": {"pruning": {"protect_recent": 1, "soft_trim_chars": 4000}},
        },
        "runtime.json",
    )
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(THREAD)))
    assert main(["plan", "--messages", "-", "--runtime-config", str(config), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    actions = [row["action"] for row in out["pruning"]]
    # c1 is no longer protected (protect_recent=1) and over the hard threshold; c2 is protected and long.
    assert actions == ["unchanged", "unchanged", "hard_cleared", "unchanged", "protected", "unchanged"]
    assert out["pruning"][2]["content"] == "[Tool output cleared \u2014 12000 chars]"
    assert out["compaction"]["threshold_tokens"] == int(5000 * 0.7)
    assert out["compaction"]["keep_recent_tokens"] == 2000  # 20000 capped at 0.4 x 5000


def test_flags_override_the_config_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _write(tmp_path, {"memory": {"pruning": {"protect_recent": 1}}}, "runtime.json")
    argv = ["plan", "--messages", str(_write(tmp_path, THREAD)), "--runtime-config", str(config)]
    assert main([*argv, "--protect-recent", "2", "--context-limit", "100000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pruning"][2]["action"] == "protected"
    assert out["compaction"]["threshold_tokens"] == 70000


def test_list_content_is_printed_as_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocks = [{"type": "text", "text": "z" * 20000}, "bare"]
    data = [*THREAD[:2], {"type": "tool", "content": blocks, "tool_call_id": "old", "id": "t0"}]
    assert main(["plan", "--messages", str(_write(tmp_path, data)), "--json", "--protect-recent", "0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pruning"][2] == {"index": 2, "type": "tool", "action": "unchanged", "content": blocks}


def test_readable_table_names_actions_and_rules(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "plan",
        "--messages",
        str(_write(tmp_path, THREAD)),
        "--protect-recent",
        "1",
        "--context-limit",
        "4000",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "hard_cleared" in out and "hard_clear_threshold=10000: 12000 > 10000" in out
    assert "protected" in out and "compaction:" in out

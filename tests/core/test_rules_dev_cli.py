"""`mycel-memory plan --rules dev`: bad input is one line and exit 2; the main rules stay the default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_core.cli import main

MESSAGES = [
    {"type": "human", "content": "x" * 400, "id": "h1"},
    {"type": "ai", "content": "y" * 400, "id": "a1", "tool_calls": []},
    {"type": "human", "content": "z" * 400, "id": "h2"},
    {"type": "ai", "content": "done", "id": "a2", "tool_calls": []},
]


def _write(tmp_path: Path, data: Any, name: str) -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(path)


def _dev(tmp_path: Path, *extra: str) -> list[str]:
    return ["plan", "--rules", "dev", "--messages", _write(tmp_path, MESSAGES, "m.json"), "--json", *extra]


def _one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert captured.out == ""
    assert "Traceback" not in captured.err
    assert len(lines) == 1, lines
    return lines[0]


def test_unknown_profile_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--rules", "beta", "--messages", _write(tmp_path, MESSAGES, "m.json")]
    line = _one_line_error(argv, capsys)
    assert "'beta'" in line and "main" in line and "dev" in line


def test_trigger_tokens_zero_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(_dev(tmp_path, "--trigger-tokens", "0"), capsys)
    assert "--trigger-tokens" in line and "positive" in line


@pytest.mark.parametrize(
    "summary",
    [
        "{not json",
        json.dumps([1, 2]),
        json.dumps({"text": "s"}),
        json.dumps({"text": 3, "compact_up_to_index": 1}),
    ],
)
def test_malformed_summary_file_is_one_line(
    summary: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _one_line_error(_dev(tmp_path, "--active-summary", _write(tmp_path, summary, "s.json")), capsys)
    assert "s.json" in line


def test_threshold_does_not_apply_under_dev(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(_dev(tmp_path, "--threshold", "0.5"), capsys)
    assert "--threshold" in line and "0.7" in line


def test_breaker_open_takes_true_or_false(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = _one_line_error(_dev(tmp_path, "--breaker-open", "maybe"), capsys)
    assert "--breaker-open" in line


def test_dev_flags_are_refused_under_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--messages", _write(tmp_path, MESSAGES, "m.json"), "--trigger-tokens", "10"]
    line = _one_line_error(argv, capsys)
    assert "--trigger-tokens" in line and "--rules dev" in line


def test_main_is_the_default_profile_and_keeps_its_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--messages", _write(tmp_path, MESSAGES, "m.json"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["estimated_tokens"]) == {"stored", "after_pruning"}
    assert "attempted" not in out["compaction"] and "breaker" not in out["compaction"]


def test_an_open_breaker_blocks_the_attempt_and_the_model_gets_everything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _dev(tmp_path, "--context-limit", "400", "--keep-recent-tokens", "10")
    argv += ["--breaker-failures", "3", "--breaker-open", "true"]
    assert main(argv) == 0
    compaction = json.loads(capsys.readouterr().out)["compaction"]
    assert compaction["should_compact"] is True
    assert compaction["attempted"] is False
    assert compaction["compact_up_to_index"] is None
    assert compaction["breaker"] == {"failure_count": 3, "open": True}
    assert compaction["sent"] == {"count": len(MESSAGES), "from_index": 0}


def test_the_third_failure_opens_the_breaker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _dev(tmp_path, "--context-limit", "400", "--keep-recent-tokens", "10")
    argv += ["--breaker-failures", "2", "--breaker-open", "false", "--summarizer-fails"]
    assert main(argv) == 0
    compaction = json.loads(capsys.readouterr().out)["compaction"]
    assert compaction["attempted"] is True
    assert compaction["breaker"] == {"failure_count": 3, "open": True}


def test_text_output_names_the_breaker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _dev(tmp_path, "--context-limit", "400", "--breaker-failures", "3", "--breaker-open", "true")
    argv.remove("--json")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "circuit breaker is open" in out and "3 failure(s), open" in out

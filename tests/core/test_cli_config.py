"""`mycel-memory config`: show with layers and limits, set with a diff (or --dry-run), history, restore."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.audit import KeptAuditLog
from tests.support.cli import cli_json, kept_main

SOFT = "memory.pruning.soft_trim_chars"


def _fails(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert kept_main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert "Traceback" not in captured.err
    assert len(lines) == 1, lines
    return lines[0]


def test_show_lists_values_with_layers_and_every_models_context_limit(sample_home: Path, capsys):
    (sample_home / "runtime.json").write_text(json.dumps({"memory": {"pruning": {"protect_recent": 5}}}))
    data = cli_json(capsys, "config", "--json")
    assert data["values"]["memory.pruning.protect_recent"] == {"value": 5, "layer": "user"}
    assert data["values"][SOFT] == {"value": 3000, "layer": "system"}
    assert [layer["name"] for layer in data["layers"]] == ["system", "user", "project"]
    snug = next(limit for limit in data["context_limits"] if limit["model"] == "leon:snug")
    assert (snug["context_limit"], snug["source"], snug["threads"]) == (5500, "models_mapping", 1)
    assert snug["trigger_tokens"] == 3849


def test_show_reports_problems_such_as_ignored_top_level_keys(sample_home: Path, capsys):
    (sample_home / "runtime.json").write_text(json.dumps({"context_limit": 50000}))
    data = cli_json(capsys, "config", "--json")
    problem = next(p for p in data["problems"] if p["key_path"] == "context_limit")
    assert problem["severity"] == "warning" and "ignored" in problem["message"]
    assert data["values"]["runtime.context_limit"]["value"] == 0


def test_show_prints_a_readable_table(sample_home: Path, capsys):
    assert kept_main(["config"]) == 0
    out = capsys.readouterr().out
    assert f"{SOFT}" in out and "system" in out
    assert "leon:snug: 5,500" in out


def test_set_dry_run_shows_the_diff_and_writes_nothing(sample_home: Path, capsys):
    assert kept_main(["config", "set", SOFT, "2000", "--layer", "user", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert f"{SOFT}: (absent) -> 2000" in out and "dry run" in out
    assert not (sample_home / "runtime.json").exists()


def test_set_writes_the_nested_form_keeping_every_other_key(sample_home: Path, capsys):
    (sample_home / "runtime.json").write_text(
        json.dumps({"mcp": {"x": 1}, "memory": {"pruning": {"protect_recent": 4}}})
    )
    data = cli_json(capsys, "config", "set", SOFT, "2000", "--layer", "user", "--json")
    assert data["written"] is True and data["backup"]
    assert data["changes"] == [
        {"key_path": SOFT, "before": None, "after": 2000, "added": True, "removed": False}
    ]
    assert "restart" in data["note"]
    assert json.loads((sample_home / "runtime.json").read_text()) == {
        "mcp": {"x": 1},
        "memory": {"pruning": {"protect_recent": 4, "soft_trim_chars": 2000}},
    }


def test_old_style_key_is_written_nested(sample_home: Path, capsys):
    assert kept_main(["config", "set", "context_limit", "64000", "--layer", "user"]) == 0
    assert json.loads((sample_home / "runtime.json").read_text()) == {"runtime": {"context_limit": 64000}}


def test_null_removes_the_key_from_the_layer(sample_home: Path, capsys):
    (sample_home / "runtime.json").write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 2000}}}))
    assert kept_main(["config", "set", SOFT, "null", "--layer", "user"]) == 0
    assert json.loads((sample_home / "runtime.json").read_text()) == {}


def test_out_of_range_value_is_one_line_and_nothing_is_written(sample_home: Path, capsys):
    line = _fails(["config", "set", SOFT, "0", "--layer", "user"], capsys)
    assert "Must be greater than 0" in line and "nothing written" in line
    assert not (sample_home / "runtime.json").exists()


def test_unknown_key_is_refused(sample_home: Path, capsys):
    line = _fails(["config", "set", "memory.pruning.sof_trim", "5", "--layer", "user"], capsys)
    assert "not a memory or spill-buffer setting" in line


def test_unwritable_folder_is_one_line_and_the_file_is_unchanged(sample_home: Path, capsys):
    original = json.dumps({"memory": {"pruning": {"protect_recent": 4}}})
    (sample_home / "runtime.json").write_text(original)
    (sample_home / ".history").write_text("a file where the backup folder goes")
    line = _fails(["config", "set", SOFT, "2000", "--layer", "user"], capsys)
    assert "Nothing was changed" in line
    assert (sample_home / "runtime.json").read_text() == original


def test_broken_layer_file_is_refused_instead_of_overwritten(sample_home: Path, capsys):
    (sample_home / "runtime.json").write_text("{not json")
    line = _fails(["config", "set", SOFT, "2000", "--layer", "user"], capsys)
    assert "not valid JSON" in line
    assert (sample_home / "runtime.json").read_text() == "{not json"


def test_project_layer_goes_to_the_given_workspace(sample_home: Path, tmp_path: Path, capsys):
    project = tmp_path / "workspace"
    project.mkdir()
    args = ["config", "set", "memory.compaction.keep_recent_tokens", "12000", "--layer", "project"]
    assert kept_main([*args, "--project-dir", str(project)]) == 0
    capsys.readouterr()
    assert json.loads((project / ".leon" / "runtime.json").read_text()) == {
        "memory": {"compaction": {"keep_recent_tokens": 12000}}
    }
    data = cli_json(capsys, "config", "--json", "--project-dir", str(project))
    assert data["values"]["memory.compaction.keep_recent_tokens"] == {"value": 12000, "layer": "project"}


def test_history_lists_versions_and_restore_puts_one_back(sample_home: Path, capsys):
    assert kept_main(["config", "set", SOFT, "2000", "--layer", "user"]) == 0
    assert kept_main(["config", "set", SOFT, "2500", "--layer", "user"]) == 0
    capsys.readouterr()
    history = cli_json(capsys, "config", "history", "--layer", "user", "--json")
    version, no_file = history["versions"]  # newest first: the 2000 version, then "no file"
    assert version["version"].startswith("runtime.json.bak-") and not version["absent"]
    assert no_file["absent"] and no_file["version"].endswith(".absent") and no_file["sha256"] is None
    data = cli_json(capsys, "config", "restore", version["version"], "--layer", "user", "--json")
    assert data["restored"] == version["version"]
    assert json.loads((sample_home / "runtime.json").read_text()) == {
        "memory": {"pruning": {"soft_trim_chars": 2000}}
    }
    assert len(cli_json(capsys, "config", "history", "--layer", "user", "--json")["versions"]) == 3


def test_restore_of_an_unknown_version_is_refused(sample_home: Path, capsys):
    line = _fails(["config", "restore", "runtime.json.bak-20200101T000000", "--layer", "user"], capsys)
    assert "not a saved version" in line
    line = _fails(["config", "restore", "../leon.db", "--layer", "user"], capsys)
    assert "'../leon.db' is not a version name (see the layer's history)." in line


def test_a_set_is_audited_in_the_pages_words(sample_home: Path) -> None:
    audit = KeptAuditLog()
    assert kept_main(["config", "set", SOFT, "2500", "--layer", "user"], audit) == 0
    assert kept_main(["config", "set", SOFT, "1200", "--layer", "user"], audit) == 0
    first, second = (record.message for record, _ in audit.entries)
    assert first == f"{SOFT}: default 3,000 → 2,500"  # the file did not set it: Mycel's default, never None
    assert second == f"{SOFT}: 2,500 → 1,200"

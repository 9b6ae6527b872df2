"""`mycel-memory search`: the results as issue 16 names them, bad input in one line (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.app.search import search
from memory_core.cli import main
from memory_core.stores.reader import MycelReader
from memory_core.stores.thread_list.derived import default_folder
from tests.core.store_builders import build_thread, point_locations
from tests.dashboard.planting import plant_thread
from tests.support.mycel_env import empty_home


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = empty_home(monkeypatch, tmp_path)
    plant_thread(
        folder / "leon.db",
        "t-ops",
        [
            HumanMessage(content="which thread ran it?", id="h"),
            AIMessage(
                content="", id="a", tool_calls=[{"id": "c", "name": "Bash", "args": {"command": "rm -rf /"}}]
            ),
            ToolMessage(content="refused <script>alert(1)</script>", tool_call_id="c", name="Bash", id="t"),
        ],
    )
    plant_thread(folder / "leon.db", "t-chat", [HumanMessage(content="a thread that ran nothing", id="h")])
    return folder


def test_json_gives_thread_index_and_snippet(capsys: pytest.CaptureFixture[str], home: Path):
    code, out, err = _run(capsys, "search", '"rm -rf"', "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["thread_id"], r["index"], r["kind"], r["tool"], r["rank"]) for r in rows] == [
        ("t-ops", 1, "tool-args", "Bash", 1)
    ]
    assert "rm -rf" in rows[0]["snippet"]
    start, end = rows[0]["marks"][0]
    assert rows[0]["snippet"][start:end] == "rm -rf"


def test_json_equals_the_one_search_function(capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path):
    code, out, _ = _run(capsys, "search", "ran", "--json")
    assert code == 0
    reader = MycelReader(
        point_locations(home),
        facts_folder=default_folder({"MYCEL_MEMORY_CACHE_DIR": str(tmp_path / "cache")}),
    )
    expected = search(reader, "ran")
    assert [(r["thread_id"], r["index"], r["snippet"]) for r in json.loads(out)] == [
        (h.thread_id, h.index, h.snippet) for h in expected.hits
    ]
    assert len(expected.hits) == 2


def test_filters_on_the_command_line(capsys: pytest.CaptureFixture[str], home: Path):
    _, out, _ = _run(capsys, "search", "ran", "--thread", "t-chat", "--json")
    assert {r["thread_id"] for r in json.loads(out)} == {"t-chat"}
    _, out, _ = _run(capsys, "search", "refused", "--tool", "Bash", "--json")
    assert [r["kind"] for r in json.loads(out)] == ["tool"]
    _, out, _ = _run(capsys, "search", "refused", "--tool", "Read", "--json")
    assert json.loads(out) == []


def test_the_table_brackets_matches(capsys: pytest.CaptureFixture[str], home: Path):
    code, out, _ = _run(capsys, "search", "refused")
    assert code == 0
    assert "[refused]" in out and "t-ops" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("search", ""), "no words"),
        (("search", '"*"'), "no words"),
        (("search", "x", "--since", "yesterday"), "--since must be a date"),
        (("search", "x", "--until", "2026-13-01"), "--until must be a date"),
        (("search", "x", "--since", "2026-02-01", "--until", "2026-01-01"), "is after"),
        (("search", "x", "--limit", "0"), "--limit must be"),
        (("search", "x", "--limit", "lots"), "--limit must be"),
    ],
)
def test_bad_input_is_one_line(
    capsys: pytest.CaptureFixture[str], home: Path, argv: tuple[str, ...], message: str
):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_unusable_index_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the index folder should be")
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(blocker))
    code, _, err = _run(capsys, "search", "ran")
    assert code == 2 and "search index" in err and len(err.strip().splitlines()) == 1


def test_stderr_says_what_each_search_added_to_the_index(capsys: pytest.CaptureFixture[str], home: Path):
    db = home / "leon.db"
    build_thread(db, "t-graph", turns=2, parallel=1)
    code, out, err = _run(capsys, "search", "ran", "--json")
    assert code == 0 and json.loads(out)  # --json stays the list: the note is on stderr
    assert "note: indexed 3 threads" in err
    code, _, err = _run(capsys, "search", "ran")
    assert code == 0 and "indexed" not in err  # nothing moved: nothing added, nothing said
    build_thread(db, "t-graph", turns=1, parallel=1)  # the real graph: one more owner turn
    code, _, err = _run(capsys, "search", "ran")
    assert code == 0 and "note: indexed 1 thread (1 from their new writes)" in err

"""`mycel-memory threads` and `thread ID`: what a whole process imports, the facts it keeps, arbitrary ids,
and a missing home said plainly. Data written by LangGraph's real SqliteSaver (store_builders)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ormsgpack
import pytest

from memory_core import memo
from memory_core.cli import main
from memory_core.cli.parsers import CONFIG_LAYERS
from memory_core.cli.table import ID_WIDTH, printable, short_id
from memory_core.config import ConfigLayerName
from tests.core.store_builders import build_thread
from tests.support.mycel_env import point_env_at

ROOT = Path(__file__).resolve().parents[2]

# Ids as LangGraph lets anyone choose them (the list): each must list, open and print safely.
ODD_IDS = [
    "user/42",
    "a?b=c#frag",
    "100%25 done %s",
    "with space and ..",
    "../../etc/passwd",
    "分身-スレッド",
    "bell\x07esc\x1b[31mred\nnewline\ttab",
    "x" * 3000,
]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *thread_ids: str, turns: int = 2) -> Path:
    home = tmp_path / "data-home"
    home.mkdir()
    for thread_id in thread_ids:
        build_thread(home / "leon.db", thread_id, turns=turns, parallel=2, tool_chars=400)
    point_env_at(monkeypatch, home)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    return home


def _subprocess_env(home: Path, facts: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LEON_DB_PATH=str(home / "leon.db"),
        LEON_SANDBOX_DB_PATH=str(home / "sandbox.db"),
        LEON_QUEUE_DB_PATH=str(home / "queue.db"),
        MYCEL_CONFIG_HOME=str(home),
        MYCEL_MEMORY_CACHE_DIR=str(facts),
    )
    return env


# -- a read imports only what reading needs ----------------------------------------------------------

_IMPORTED = """
import json, sys
from memory_core.cli import main
code = main(sys.argv[1:])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"langgraph", "langchain_core", "aiosqlite", "pydantic"})
print(json.dumps({"code": code, "heavy": heavy}), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "argv", [["threads"], ["threads", "--json"], ["thread", "t-1"], ["thread", "t-1", "--json"]]
)
def test_read_commands_never_import_langgraph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
):
    home = _home(tmp_path, monkeypatch, "t-1")
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *argv],
        env=_subprocess_env(home, tmp_path / "facts"),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "heavy": []}
    assert "t-1" in done.stdout


def test_the_config_layer_choices_are_mycels_layer_names():
    assert (ConfigLayerName.USER.value, ConfigLayerName.PROJECT.value) == CONFIG_LAYERS


def test_help_lists_every_subcommand_without_importing_them(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for command in ("plan", "threads", "thread", "rollback", "undo", "dry-run", "config"):
        assert f"    {command} " in out


# -- thread: the head decoded at most once, the facts kept --------------------------------------------


def _head_payload(home: Path, thread_id: str) -> bytes:
    import sqlite3

    with sqlite3.connect(home / "leon.db") as conn:
        (blob,) = conn.execute(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id DESC LIMIT 1",
            (thread_id,),
        ).fetchone()
    return bytes(blob)


def _count_head_decodes(monkeypatch: pytest.MonkeyPatch, head: bytes) -> list[int]:
    """Every ormsgpack decode of the head payload (the reader's decoder and the series' both use it)."""
    calls: list[int] = []
    real = ormsgpack.unpackb

    def counting(data, *args, **kwargs):
        if bytes(data) == head:
            calls.append(1)
        return real(data, *args, **kwargs)

    monkeypatch.setattr(ormsgpack, "unpackb", counting)
    return calls


def test_a_second_run_reads_no_checkpoint_payload_and_prints_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = _home(tmp_path, monkeypatch, "t-1", turns=3)
    decodes = _count_head_decodes(monkeypatch, _head_payload(home, "t-1"))
    code, first, _ = _run(capsys, "thread", "t-1", "--json")
    assert code == 0
    assert len(decodes) == 2  # the list skims the moved head to count it; one full decode serves the rest
    memo.reset()  # as a new process starts
    decodes.clear()
    code, second, _ = _run(capsys, "thread", "t-1", "--json")
    assert code == 0
    assert second == first
    assert decodes == []
    data = json.loads(second)
    assert len(data["messages"]) == data["checkpoints"][0]["messages"]
    assert all(isinstance(m["tiktoken_tokens"], int) for m in data["messages"])


def test_kept_facts_are_not_used_after_the_thread_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    home = _home(tmp_path, monkeypatch, "t-1", turns=2)
    _, before, _ = _run(capsys, "thread", "t-1", "--json")
    memo.reset()
    build_thread(home / "leon.db", "t-1", turns=1, parallel=1, tool_chars=100)  # one more turn
    _, after, _ = _run(capsys, "thread", "t-1", "--json")
    old, new = json.loads(before), json.loads(after)
    assert new["head_checkpoint_id"] != old["head_checkpoint_id"]
    assert new["checkpoints"][0]["checkpoint_id"] == new["head_checkpoint_id"]
    assert len(new["checkpoints"]) > len(old["checkpoints"])
    assert len(new["messages"]) > len(old["messages"])


def test_kept_facts_hold_no_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    home = tmp_path / "data-home"
    home.mkdir()
    build_thread(home / "leon.db", "t-1", turns=2, configurable={"api_key": "sk-live-NEVER-KEPT"})
    point_env_at(monkeypatch, home)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    code, out, err = _run(capsys, "thread", "t-1", "--json")
    assert code == 0
    kept = list((tmp_path / "facts").glob("thread-facts-*.sqlite3"))
    assert len(kept) == 1
    for text in (out, err, *(p.read_bytes().decode("latin-1") for p in (tmp_path / "facts").iterdir())):
        assert "sk-live-NEVER-KEPT" not in text


# -- every id lists and opens ---------------------------------------------------------------------------


def test_every_odd_id_lists_whole_in_json_and_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _home(tmp_path, monkeypatch, *ODD_IDS, turns=1)
    code, out, _ = _run(capsys, "threads", "--json")
    assert code == 0
    assert sorted(r["thread_id"] for r in json.loads(out)) == sorted(ODD_IDS)
    for thread_id in ODD_IDS:
        code, out, err = _run(capsys, "thread", thread_id, "--json")
        assert code == 0, err
        data = json.loads(out)
        assert data["thread_id"] == thread_id
        assert data["messages"] and data["checkpoints"]
        code, out, _ = _run(capsys, "thread", thread_id)
        assert code == 0
        assert out.startswith(f"thread   {printable(thread_id)}")


def test_the_table_shortens_long_ids_and_escapes_control_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _home(tmp_path, monkeypatch, *ODD_IDS, turns=1)
    code, out, _ = _run(capsys, "threads")
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out
    lines = out.splitlines()
    assert len(lines) == 1 + len(ODD_IDS)  # a newline inside an id never starts a row
    assert f"{'x' * 20}…{'x' * 8}" in out
    assert "x" * 29 not in out
    assert "bell\\x07esc\\x1b[31mred\\nnewline\\ttab" in out
    for thread_id in ("user/42", "a?b=c#frag", "分身-スレッド", "../../etc/passwd"):
        assert thread_id in out


def test_short_id_keeps_ids_up_to_the_width_and_cuts_longer_ones():
    assert short_id("a" * ID_WIDTH) == "a" * ID_WIDTH
    assert short_id("a" * 20 + "b" * 30 + "c" * 8) == "a" * 20 + "…" + "c" * 8
    assert short_id("tab\there") == "tab\\there"
    assert short_id("zero\u200bwidth") == "zero\\u200bwidth"
    assert printable("分身 ok") == "分身 ok"


def test_an_unknown_odd_id_is_one_escaped_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _home(tmp_path, monkeypatch, "t-1", turns=1)
    code, out, err = _run(capsys, "thread", "no\x1b[2Jsuch/thread")
    assert code == 2
    assert out == ""
    assert err == "mycel-memory: error: unknown thread 'no\\x1b[2Jsuch/thread': no Mycel store has it\n"


# -- a missing home is not an empty one -----------------------------------------------------------------


@pytest.mark.parametrize("argv", [["threads"], ["threads", "--json"], ["thread", "t-1"]])
def test_no_mycel_file_where_the_variables_point_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
):
    missing = tmp_path / "nowhere"
    point_env_at(monkeypatch, missing)
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err == (
        f"mycel-memory: error: no Mycel data: {missing / 'leon.db'} does not exist (set LEON_DB_PATH to "
        "Mycel's leon.db; LEON_SANDBOX_DB_PATH and LEON_QUEUE_DB_PATH for the other stores)\n"
    )


def test_an_existing_empty_home_lists_no_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    import sqlite3

    home = tmp_path / "empty-home"
    home.mkdir()
    sqlite3.connect(home / "leon.db").close()
    point_env_at(monkeypatch, home)
    code, out, _ = _run(capsys, "threads")
    assert code == 0
    assert out.splitlines()[-1] == "(no threads)"


def test_the_missing_home_exit_code_as_a_whole_process(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "memory_core", "threads"],
        env=_subprocess_env(tmp_path / "nowhere", tmp_path / "facts"),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"mycel-memory: error: no Mycel data: {tmp_path / 'nowhere' / 'leon.db'}")


def test_the_series_from_a_head_decoded_before_equals_the_series_decoded_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from memory_core.stores.locations import resolve_locations
    from memory_core.stores.reader import MycelReader

    _home(tmp_path, monkeypatch, "t-1", turns=3)
    reader = MycelReader(resolve_locations())
    afresh = reader.list_checkpoints("t-1").value
    memo.reset()
    assert reader.get_state("t-1").value is not None  # the head, decoded and kept
    seeded = reader.checkpoint_series("t-1")
    assert seeded is not None
    assert reader.list_checkpoints("t-1").value == afresh
    assert seeded.decoded == 1  # the root; the head came from get_state


def test_every_odd_id_rolls_back_in_a_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _home(tmp_path, monkeypatch, *ODD_IDS, turns=2)
    for thread_id in ODD_IDS:
        _, out, _ = _run(capsys, "thread", thread_id, "--json")
        checkpoints = json.loads(out)["checkpoints"]
        target = checkpoints[-2]["checkpoint_id"]
        code, out, err = _run(capsys, "rollback", thread_id, "--to", target, "--dry-run", "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["thread_id"] == thread_id
        assert report["target_checkpoint_id"] == target
        assert report["head_checkpoint_id"] == checkpoints[0]["checkpoint_id"]


def test_a_damaged_facts_file_is_set_aside_and_the_facts_derived_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    _home(tmp_path, monkeypatch, "t-1", turns=2)
    _, first, _ = _run(capsys, "thread", "t-1", "--json")
    (kept,) = (tmp_path / "facts").glob("thread-facts-*.sqlite3")
    kept.write_bytes(b"not a database" * 100)
    memo.reset()
    code, again, _ = _run(capsys, "thread", "t-1", "--json")
    assert code == 0
    assert again == first
    memo.reset()
    _, third, _ = _run(capsys, "thread", "t-1", "--json")  # a new file, kept again
    assert third == first
    assert kept.read_bytes().startswith(b"SQLite format 3")

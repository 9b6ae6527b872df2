"""Export: the JSON bundle is `thread --json`, `calls --json` and the checkpoint's messages, redacted and
self-contained (`plan --bundle` and `dry-run --bundle` with no Mycel file give the live thread's
decisions); the Markdown transcript holds every human message and summary, fenced so nothing breaks out.

The CLI's `export` writes the audit log (Django), so its tests are in tests/dashboard/test_export_page.py;
here the bundle is built by the same function the command calls."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.app.export import FORMAT, ExportError, export_bundle, export_filename
from memory_core.cli import main
from memory_core.cli.reading import open_reader
from memory_core.demo import FAKE_API_KEY
from memory_core.export.markdown import bundle_markdown, code, fence
from memory_core.messages import MessageType, messages_from_dicts
from tests.dashboard.planting import plant_env_dump, plant_thread
from tests.support.cli import cli_json
from tests.support.mycel_env import point_env_at
from tests.support.odd_ids import CHECKPOINT_IDS, ODD_IDS, write_odd_home

SAMPLE_THREADS = (
    "m_0D8EzdJXJhk9-1",
    "m_0D8EzdJXJhk9-2",
    "m_0D8EzdJXJhk9-3",
    "m_npRsndIka9dx-1",
    "m_npRsndIka9dx-2",
    "m_npRsndIka9dx-3",
)
WITH_SUMMARIES = "m_0D8EzdJXJhk9-2"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SECRET_ARG = "leak-tool-arg-secret-0042"
SECRET_VALUE = "sk-leakedProviderKey0043abcdef"
FENCED_OUTPUT = "before\n```\n# not a heading\n````\n<script>alert(1)</script>\nafter"


def _bundle(thread_id: str, checkpoint_id: str | None = None) -> dict[str, Any]:
    return export_bundle(open_reader(), thread_id, checkpoint_id=checkpoint_id, exported_at=NOW)


def _one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert "Traceback" not in captured.err and captured.out == ""
    assert len(lines) == 1, lines
    return lines[0]


def _empty_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mycel's variables at an empty folder: the bundle is all there is."""
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    point_env_at(monkeypatch, empty)
    return empty


def _config_flags(config: dict[str, Any]) -> list[str]:
    s = config["settings"]
    return [
        *("--context-limit", str(s["context_limit"]), "--threshold", str(s["threshold"])),
        *(
            "--soft-trim-chars",
            str(s["soft_trim_chars"]),
            "--hard-clear-threshold",
            str(s["hard_clear_threshold"]),
        ),
        *("--protect-recent", str(s["protect_recent"]), "--keep-recent-tokens", str(s["keep_recent_tokens"])),
    ]


def test_the_bundle_is_the_thread_and_calls_json(
    sample_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle = _bundle(WITH_SUMMARIES)
    thread = cli_json(capsys, "thread", WITH_SUMMARIES, "--json")
    calls = cli_json(capsys, "calls", WITH_SUMMARIES, "--json")
    assert (bundle["format"], bundle["version"], bundle["exported_at"]) == (FORMAT, 1, NOW.isoformat())
    assert bundle["thread"] == thread
    assert bundle["calls"] == calls and len(calls) == 12
    assert bundle["checkpoints"] == thread["checkpoints"]
    assert bundle["checkpoint_id"] == thread["head_checkpoint_id"]
    assert [s["summary_id"] for s in bundle["summaries"]] == [s["summary_id"] for s in thread["summaries"]]
    assert all(s["summary_text"] for s in bundle["summaries"])
    assert bundle["config"]["context_limit"] == thread["context_limit"] == 5500
    assert bundle["config"]["rules"] == "main"
    assert [d["index"] for d in bundle["pruning"]] == list(range(len(bundle["messages"])))


def test_the_messages_are_the_checkpoints_messages(sample_home: Path) -> None:
    for thread_id in SAMPLE_THREADS:
        state = open_reader().get_state(thread_id).value
        assert state is not None
        bundle = _bundle(thread_id)
        back = messages_from_dicts(bundle["messages"], strict=True)
        # raw_type is the spelling the data used; a bundle spells every type LangChain's way.
        assert [replace(m, raw_type="") for m in back] == [replace(m, raw_type="") for m in state.messages]


@pytest.mark.parametrize("thread_id", SAMPLE_THREADS)
def test_plan_bundle_gives_the_live_threads_decisions_with_no_mycel_files(
    thread_id: str, sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bundle = _bundle(thread_id)
    live_dry_run = cli_json(capsys, "dry-run", thread_id, "--json", "--show-text")
    state = open_reader().get_state(thread_id).value
    assert state is not None
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    from memory_core.app.export import message_dict

    live = tmp_path / "live-messages.json"
    live.write_text(json.dumps([message_dict(m) for m in state.messages]), encoding="utf-8")

    _empty_env(tmp_path, monkeypatch)
    from_bundle = cli_json(capsys, "plan", "--bundle", str(path), "--json")
    from_messages = cli_json(
        capsys, "plan", "--messages", str(live), *_config_flags(bundle["config"]), "--json"
    )
    assert from_bundle == from_messages
    assert [d["action"] for d in from_bundle["pruning"]] == [d["action"] for d in bundle["pruning"]]
    assert cli_json(capsys, "dry-run", "--bundle", str(path), "--json", "--show-text") == live_dry_run
    assert not (
        tmp_path / "elsewhere" / "leon.db"
    ).exists()  # nothing was created where Mycel's files would be


def test_plan_bundle_under_dev_rules_uses_the_bundles_summary_and_breaker(
    sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    bundle = _bundle(WITH_SUMMARIES)
    active = bundle["config"]["active_summary"]
    assert active is not None
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    (tmp_path / "messages.json").write_text(json.dumps(bundle["messages"]), encoding="utf-8")
    (tmp_path / "summary.json").write_text(json.dumps(active), encoding="utf-8")
    _empty_env(tmp_path, monkeypatch)
    dev = cli_json(capsys, "plan", "--bundle", str(path), "--rules", "dev", "--json")
    flags = [f for f in _config_flags(bundle["config"]) if f not in ("--threshold", "0.7")]
    given = ["plan", "--rules", "dev", "--messages", str(tmp_path / "messages.json"), *flags]
    expected = cli_json(capsys, *given, "--active-summary", str(tmp_path / "summary.json"), "--json")
    assert dev == expected and dev["rules"] == "dev"


def test_flags_still_override_the_bundles_config(
    sample_home: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(_bundle(WITH_SUMMARIES)), encoding="utf-8")
    _empty_env(tmp_path, monkeypatch)
    report = cli_json(capsys, "dry-run", "--bundle", str(path), "--context-limit", "100000", "--json")
    assert report["context_limit"] == 100000 and report["context_limit_source"] == "--context-limit"


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ([{"type": "human", "content": "a list, not a bundle"}], "not a mycel-memory export bundle"),
        ({"format": "langfuse-export", "version": 1}, "not a mycel-memory export bundle"),
        ({"format": FORMAT, "version": 2}, "bundle version 2"),
        ({"format": FORMAT, "version": 1}, "config must be an object"),
    ],
)
def test_a_foreign_file_is_one_line(
    document: Any, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    _empty_env(tmp_path, monkeypatch)
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    for argv in (["plan", "--bundle", str(path)], ["dry-run", "--bundle", str(path), "--json"]):
        line = _one_line_error(argv, capsys)
        assert said in line and "foreign.json" in line


def test_a_damaged_bundle_is_one_line(sample_home: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    good = _bundle(WITH_SUMMARIES)
    _empty_env(tmp_path, monkeypatch)
    damages = {
        "messages": lambda b: b.update(messages={"0": "not a list"}),
        "message 3": lambda b: b["messages"].__setitem__(3, {"type": "function", "content": "x"}),
        "config.settings.soft_trim_chars": lambda b: b["config"]["settings"].update(soft_trim_chars="3000"),
        "config.settings: unknown setting": lambda b: b["config"]["settings"].update(run="rm -rf /"),
        "config.rules": lambda b: b["config"].update(rules="python"),
        "config.breaker.open": lambda b: b["config"]["breaker"].update(open="yes"),
        "not valid JSON": None,
    }
    for said, damage in damages.items():
        path = tmp_path / "damaged.json"
        if damage is None:
            path.write_text(json.dumps(good)[:-40], encoding="utf-8")
        else:
            bundle = json.loads(json.dumps(good))
            damage(bundle)
            path.write_text(json.dumps(bundle), encoding="utf-8")
        assert said in _one_line_error(["plan", "--bundle", str(path), "--json"], capsys), said


def test_bundle_and_messages_together_are_refused(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "--bundle", "a.json", "--messages", "b.json"])
    assert exit_.value.code == 2
    assert "not allowed with" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["dry-run", "some-thread", "--bundle", "a.json"])
    assert "not allowed with" in capsys.readouterr().err
    line = _one_line_error(["dry-run", "--bundle", str(tmp_path / "none.json"), "--checkpoint", "x"], capsys)
    assert "--checkpoint does not apply to a bundle" in line


def test_markdown_holds_every_human_message_and_summary(sample_home: Path) -> None:
    for thread_id in SAMPLE_THREADS:
        bundle = _bundle(thread_id)
        text = bundle_markdown(bundle)
        humans = [m for m in bundle["messages"] if m["type"] == MessageType.HUMAN.value]
        assert humans
        for message in humans:
            assert message["content"] in text, (thread_id, message["id"])
        for summary in bundle["summaries"]:
            assert summary["summary_text"] in text
        assert text.count("**▶ model call ") == len(bundle["calls"])
    summarised = bundle_markdown(_bundle(WITH_SUMMARIES))
    assert summarised.count("### Summary ") == 7
    assert "— **summarised**" in summarised  # tool results behind the active summary's boundary


def test_markdown_names_the_timelines_badges(sample_home: Path) -> None:
    text = bundle_markdown(_bundle("m_npRsndIka9dx-2"))
    badges = set(re.findall(r"\*\*(soft-trimmed|hard-cleared|protected)", text))
    assert badges, "the longest sample thread has trimmed, cleared or protected results"
    assert re.search(
        r"\*\*soft-trimmed [\d,]+ → [\d,]+ chars\*\*|\*\*hard-cleared \(was [\d,]+ chars\)\*\*", text
    )


def _plant_hostile(home: Path) -> str:
    thread_id = "export/hostile ``` thread"
    plant_thread(
        home / "leon.db",
        thread_id,
        [
            HumanMessage("deploy it, key is below", id="h1"),
            AIMessage(
                "",
                id="a1",
                tool_calls=[{"id": "c1", "name": "Bash", "args": {"command": "ls", "api_key": SECRET_ARG}}],
            ),
            ToolMessage(FENCED_OUTPUT, tool_call_id="c1", id="t1", name="Bash"),
            HumanMessage(SECRET_VALUE, id="h2"),
            AIMessage("done", id="a2"),
        ],
        metadata={"api_key": SECRET_ARG, "nested": {"password": SECRET_ARG}},
    )
    return thread_id


def test_no_planted_secret_in_either_format(sample_home: Path) -> None:
    thread_id = _plant_hostile(sample_home)
    assert SECRET_ARG.encode() in (sample_home / "leon.db").read_bytes()
    for exported in (_bundle(thread_id), _bundle(WITH_SUMMARIES)):
        for text in (json.dumps(exported, ensure_ascii=False), bundle_markdown(exported)):
            assert SECRET_ARG not in text and SECRET_VALUE not in text and FAKE_API_KEY not in text
    args = _bundle(thread_id)["messages"][1]["tool_calls"][0]["args"]
    assert args["command"] == "ls" and args["api_key"] != SECRET_ARG  # the key is kept, its value hidden


def test_secrets_inside_texts_are_masked_to_their_length_and_decide_alike(
    sample_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    key, token = "sk-proj-InsideTheOutput0099xyz", "tok-in-a-header-0099"
    output = (
        f"OPENAI_API_KEY={key}\nHOME=/root\n"
        + "line of env output\n" * 400
        + f"Authorization: Bearer {token}"
    )
    thread_id = "export-env-dump"
    plant_env_dump(sample_home / "leon.db", thread_id, key=key, output=output)
    bundle = _bundle(thread_id)
    for text in (json.dumps(bundle, ensure_ascii=False), bundle_markdown(bundle)):
        assert key not in text and token not in text
    shown = bundle["messages"][2]["content"]
    assert len(shown) == len(output) and shown.startswith("OPENAI_API_KEY=" + "*" * len(key) + "\nHOME=/root")
    assert shown.endswith("Bearer " + "*" * len(token))
    assert bundle["messages"][1]["tool_calls"][0]["args"]["command"] == "env K=" + "*" * len(key)

    state = open_reader().get_state(thread_id).value
    assert state is not None
    from memory_core.app.export import message_dict

    path, live = tmp_path / "bundle.json", tmp_path / "live-messages.json"
    path.write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    live.write_text(json.dumps([message_dict(m) for m in state.messages]), encoding="utf-8")
    _empty_env(tmp_path, monkeypatch)
    from_bundle = cli_json(capsys, "plan", "--bundle", str(path), "--json")
    from_live = cli_json(capsys, "plan", "--messages", str(live), *_config_flags(bundle["config"]), "--json")
    actions = [d["action"] for d in from_bundle["pruning"]]
    assert "soft_trimmed" in actions  # the env dump is pruned: its length decides

    def sized(
        plan: dict[str, Any],
    ) -> list[dict[str, Any]]:  # the text as its length: masks differ, sizes not
        return [{**d, "content": len(d["content"])} for d in plan["pruning"]]

    assert sized(from_bundle) == sized(from_live)  # every decision and size alike
    assert actions == [d["action"] for d in from_live["pruning"]] == [d["action"] for d in bundle["pruning"]]


def test_a_tool_output_cannot_break_out_of_its_fence(sample_home: Path) -> None:
    text = bundle_markdown(_bundle(_plant_hostile(sample_home)))
    assert f"`````text\n{FENCED_OUTPUT}\n`````" in text
    assert "\n# not a heading" not in text.replace(f"`````text\n{FENCED_OUTPUT}", "")
    assert fence("a ```` b") == "`````\na ```` b\n`````"
    assert code("x`y") == "``x`y``" and code("a\nb") == "`a\\nb`"


HOSTILE_MODEL = "<img src=x onerror=alert(1)>\n# heading *bold* [link](javascript:alert(2))"


def _without_code(markdown: str) -> str:
    """The Markdown with every fenced block and code span taken out: what a renderer reads as prose."""
    blocks = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?\n\1$", "", markdown)
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", blocks)


def test_markdown_escapes_a_model_name_and_every_other_value_from_the_data(sample_home: Path) -> None:
    thread_id = "export-hostile-model"
    plant_thread(
        sample_home / "leon.db",
        thread_id,
        [HumanMessage("hi", id="h1"), AIMessage("hello", id="a1")],
        metadata={"model": HOSTILE_MODEL},
    )
    bundle = _bundle(thread_id)
    assert "<img" in bundle["config"]["context_limit_source"]  # the limit's explanation names the model
    bundle["config"]["rules_reason"] = "<script>alert(3)</script>"
    bundle["thread"]["layout"] = "<b>main</b>"
    bundle["exported_at"] = "</p><iframe>"
    bundle["integrity"] = [{"kind": "<svg onload=alert(4)>", "index": "<i>1</i>"}]
    prose = _without_code(bundle_markdown(bundle))
    for raw in ("<img", "<script", "<b>", "</p>", "<iframe", "<svg", "<i>"):
        assert raw not in prose, raw
    assert not re.search(r"(?<!\\)\]\(javascript:", prose)  # `\](` is an escaped bracket, not a link
    assert "&lt;img src=x onerror=alert(1)&gt;" in prose  # shown, as text
    assert "\n# heading" not in prose  # a newline in a value cannot start a block


def test_one_checkpoint_and_odd_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    point_env_at(monkeypatch, write_odd_home(tmp_path / "odd"))
    names = set()
    for thread_id in ODD_IDS.values():
        head = _bundle(thread_id)
        first = _bundle(thread_id, CHECKPOINT_IDS[0])
        assert (head["thread_id"], head["checkpoint_id"], len(head["messages"])) == (
            thread_id,
            CHECKPOINT_IDS[1],
            6,
        )
        assert (first["checkpoint_id"], len(first["messages"]), len(first["calls"])) == (
            CHECKPOINT_IDS[0],
            2,
            1,
        )
        assert code(thread_id) in bundle_markdown(head)
        for fmt in ("json", "md"):
            name = export_filename(thread_id, fmt)
            assert re.fullmatch(r"mycel-[A-Za-z0-9._-]+-[0-9a-f]{8}\." + fmt, name), name
            assert ".." not in name and "/" not in name
            names.add(name)
    assert len(names) == 2 * len(ODD_IDS)


def test_unknown_thread_or_checkpoint_is_an_export_error(sample_home: Path) -> None:
    with pytest.raises(ExportError, match="unknown thread"):
        _bundle("no-such-thread")
    with pytest.raises(ExportError, match="no checkpoint 'nope'"):
        _bundle(WITH_SUMMARIES, "nope")


def _export_process(
    sample_home: Path, tmp_path: Path, dashboard_db: Path
) -> subprocess.CompletedProcess[str]:
    """`mycel-memory export` in a fresh process, the dashboard's database at `dashboard_db`."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "LEON_DB_PATH": str(sample_home / "leon.db"),
        "MYCEL_CONFIG_HOME": str(sample_home),
        "DASHBOARD_DB_PATH": str(dashboard_db),
        "DASHBOARD_DATA_DIR": str(tmp_path / "var"),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mycel_dashboard.cli",
            "export",
            WITH_SUMMARIES,
            "-o",
            str(tmp_path / "out.json"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_cli_sets_up_its_audit_log_on_first_use(sample_home: Path, tmp_path: Path) -> None:
    # A machine where the web app never ran: no dashboard database yet. The export makes it, migrated, and
    # records itself there.
    dashboard_db = tmp_path / "never-made" / "dashboard.sqlite3"
    run = _export_process(sample_home, tmp_path, dashboard_db)
    assert run.returncode == 0, run.stderr
    assert json.loads((tmp_path / "out.json").read_text())["thread_id"] == WITH_SUMMARIES
    with closing(sqlite3.connect(dashboard_db)) as db:
        rows = db.execute(
            "SELECT actor, action, result, thread_id FROM mycel_dashboard_auditentry"
        ).fetchall()
    assert [row[1:] for row in rows] == [("export", "applied", WITH_SUMMARIES)]
    assert rows[0][0].startswith("cli:")


def test_the_export_is_not_written_when_the_audit_log_cannot_record_it(
    sample_home: Path, tmp_path: Path
) -> None:
    # The dashboard's database cannot be made (its folder would be inside a file): no audit, no export.
    (tmp_path / "a-file").write_text("not a folder")
    run = _export_process(sample_home, tmp_path, tmp_path / "a-file" / "dashboard.sqlite3")
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith("mycel-memory: error: the export was not written")
    assert len(run.stderr.strip().splitlines()) == 1 and not (tmp_path / "out.json").exists()


def test_the_engine_alone_refuses_an_export_it_cannot_audit(
    sample_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # memory_core's own entry point has no audit log (the dashboard's is wired by `mycel-memory`): the
    # export is refused in one line and nothing is written.
    target = tmp_path / "out.json"
    assert main(["export", WITH_SUMMARIES, "-o", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mycel-memory: error: refused, nothing written: this entry point has no audit log")
    assert not target.exists()

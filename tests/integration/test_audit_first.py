"""Audit first, then write; or nothing — against a real gunicorn server and the real command line.

With the dashboard's own database write-locked by another process, a rollback, an undo, a config save and
a restore are each refused with a message, from the pages and from `mycel-memory`, and no byte of Mycel's
files changes. A process killed between a write's intent and its outcome leaves an entry the Audit screen
shows as "outcome unknown", with what to check. Each CLI write is on the Audit screen, by the shell user.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

from tests.dashboard.broken_homes import THREAD, sample_checkpoints
from tests.integration.live_server import HTMX_SAVE_PANEL, ROOT, Session, field, stop_process
from tests.support.server import DashboardServer, running_server

USERS = {"operator": "operator"}
TOOL_HEAVY = "m_npRsndIka9dx-2"
SOFT = "memory.pruning.soft_trim_chars"
FAST = {"DASHBOARD_DB_TIMEOUT_S": "1"}  # how long a write waits for the lock before it is refused


def _fingerprints(home: Path) -> dict[str, str]:
    return {
        str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(home.rglob("*"))
        if path.is_file()
    }


@contextmanager
def _write_locked(database: Path) -> Iterator[None]:
    """Another process holds the database's write lock (readers go on, as under any long write)."""
    script = (
        "import sqlite3, sys\n"
        "db = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
        "db.execute('BEGIN IMMEDIATE')\n"
        "print('locked', flush=True)\n"
        "sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        stop_process(holder)  # type: ignore[arg-type]


def _checkpoints(home: Path) -> int:
    with closing(sqlite3.connect(home / "leon.db")) as db:
        (count,) = db.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = ?", (THREAD,)).fetchone()
    return int(count)


def _cli(server: DashboardServer, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mycel_dashboard.cli", *argv],
        cwd=ROOT,
        env={**server.env, "USER": "ops"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _save_form(operator: Session, value: str) -> dict[str, str]:
    params = {"thread": TOOL_HEAVY, "layer": "user", SOFT: value}
    preview = operator.get("/config/preview/", params, HTMX_SAVE_PANEL)
    assert preview.status == 200, preview.body[:500]
    return {**params, "sha256": field(preview.body, "sha256")}


def test_a_write_locked_audit_log_refuses_every_write_from_the_pages_and_the_cli(
    sample_home: Path, tmp_path: Path
) -> None:
    ids = sample_checkpoints(THREAD)
    # A user layer that exists, so the first save keeps a version a restore can put back.
    (sample_home / "runtime.json").write_text(json.dumps({"memory": {"pruning": {"soft_trim_chars": 1500}}}))
    with running_server(tmp_path / "server", sample_home, roles=USERS, extra_env=FAST) as server:
        operator = Session(server.url, "operator")
        # Unlocked first: a rollback and a save, so an undo and a restore have something to act on.
        preview = operator.get(f"/threads/{THREAD}/checkpoints/{ids[-3]}/rollback/")
        applied = operator.post(
            f"/threads/{THREAD}/checkpoints/{ids[-3]}/rollback/apply/",
            {"fingerprint": field(preview.body, "fingerprint")},
        )
        assert applied.status == 302, applied.body[:500]
        assert operator.post("/config/save/", _save_form(operator, "2000"), HTMX_SAVE_PANEL).status == 200
        history = operator.get("/config/", None, {"HX-Request": "true", "HX-Target": "history"}).body
        version = field(history, "version")
        # A restore is previewed first: its confirming form carries the file's hash.
        restore = operator.get(
            "/config/restore/preview/", {"layer": "user", "version": version}, HTMX_SAVE_PANEL
        )
        current = field(restore.body, "sha256")
        again = operator.get(f"/threads/{THREAD}/checkpoints/{ids[-4]}/rollback/")
        undo = operator.get(f"/threads/{THREAD}/undo/")
        save = _save_form(operator, "2500")
        before = _fingerprints(sample_home)

        database = Path(server.env["DASHBOARD_DATA_DIR"]) / "dashboard.sqlite3"
        with _write_locked(database):
            answers = {
                "rollback": operator.post(
                    f"/threads/{THREAD}/checkpoints/{ids[-4]}/rollback/apply/",
                    {"fingerprint": field(again.body, "fingerprint")},
                ),
                "undo": operator.post(
                    f"/threads/{THREAD}/undo/apply/", {"fingerprint": field(undo.body, "fingerprint")}
                ),
                "config save": operator.post("/config/save/", save, HTMX_SAVE_PANEL),
                "config restore": operator.post(
                    "/config/restore/",
                    {"layer": "user", "version": version, "sha256": current},
                    HTMX_SAVE_PANEL,
                ),
            }
            for what, answer in answers.items():
                assert answer.status == 409, (what, answer.status, answer.body[:300])
                assert (
                    f"the {what} was not written: the dashboard&#x27;s audit log cannot record it"
                    in answer.body
                ), what
                assert "database is locked" in answer.body, what
            runs = {
                "rollback": _cli(server, "rollback", THREAD, "--to", ids[-4]),
                "undo": _cli(server, "undo", THREAD),
                "config save": _cli(server, "config", "set", SOFT, "3000", "--layer", "user"),
                "config restore": _cli(server, "config", "restore", version, "--layer", "user"),
            }
            for what, run in runs.items():
                assert run.returncode == 2, (what, run.stdout, run.stderr)
                assert run.stderr.startswith(f"mycel-memory: error: the {what} was not written"), (
                    what,
                    run.stderr,
                )
                assert "database is locked" in run.stderr and len(run.stderr.strip().splitlines()) == 1, what
        assert _fingerprints(sample_home) == before  # not one byte of Mycel's files changed

        # Unlocked again, each CLI write is audited like the pages', in the same log, by the shell user.
        assert _cli(server, "rollback", THREAD, "--to", ids[-4]).returncode == 0
        assert _cli(server, "undo", THREAD).returncode == 0
        assert _cli(server, "config", "set", SOFT, "3000", "--layer", "user").returncode == 0
        assert _cli(server, "config", "restore", version, "--layer", "user").returncode == 0
        audit = operator.get("/audit/", {"actor": "cli:ops"}).body
        for label in ("Roll back", "Undo rollback", "Save config", "Restore config version"):
            assert f"<td>{label}</td>" in audit, label
        assert audit.count("<td>cli:ops</td>") == 4 and audit.count('class="badge ok">Applied') == 4


def test_a_process_killed_between_intent_and_outcome_leaves_an_outcome_unknown_entry(
    sample_home: Path, tmp_path: Path
) -> None:
    ids = sample_checkpoints(THREAD)
    # The real command line and audit log, in a process that dies right after the write, before its outcome.
    script = (
        "import os, sys\n"
        "from memory_core.cli import main\n"
        "from mycel_dashboard.cli import ShellAuditLog\n"
        "class DiesAfterTheWrite(ShellAuditLog):\n"
        "    def end(self, ticket, result, *, message, after):\n"
        "        os._exit(9)\n"
        "main(sys.argv[1:], audit=DiesAfterTheWrite())\n"
    )
    with running_server(tmp_path / "server", sample_home, roles=USERS) as server:
        killed = subprocess.run(
            [sys.executable, "-c", script, "rollback", THREAD, "--to", ids[-3]],
            cwd=ROOT,
            env={**server.env, "USER": "ops"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert killed.returncode == 9, killed.stderr
        # The write happened; its outcome was never said.
        assert _checkpoints(sample_home) == len(ids) + 1
        audit = Session(server.url, "operator").get("/audit/").body
    assert "Outcome unknown</span>" in audit
    assert f"Outcome unknown: open the thread: if its newest checkpoint is a rollback to {ids[-3]}" in audit

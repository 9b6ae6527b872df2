"""Issue 6, "a live agent beside it": Mycel keeps writing while the dashboard serves, rolls back and saves.

One scenario runs once per module against a real gunicorn server over a demo data home, with a writer
PROCESS (writer_process.py) playing Mycel's backend: turns through LangGraph's AsyncSqliteSaver on three
"hot" threads the whole time, summaries, queue rows and run events beside them. Meanwhile logged-in users
read pages over HTTP, operators roll back idle threads (and fail to roll back busy ones), race each other
on the same preview, and save config (racing too, and against a hand edit). Idle threads resume on a
signal, so the agent's next checkpoint can be checked against the rollback it must continue from. Each
test below checks one promise on what that run left behind.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from memory_core.demo import DemoManifest, determinism, write_demo_home
from memory_core.messages import MessageType
from memory_core.rollback import ROLLBACK_METADATA_KEY
from memory_core.stores.checkpoints import time_of_checkpoint_id
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.integration.live_server import HTMX_SAVE_PANEL, ROOT, Response, Session, start_server, stop_process
from tests.integration.live_server import field as form_field
from tests.integration.writer_process import WriterPlan

HOT = ("lab", "steer", "idle")  # the agent runs these the whole time
RESUMED = ("qa", "compaction", "chat", "glossary")  # idle until the test lets the agent go on
RESUME_TURNS = 2
SOFT = "memory.pruning.soft_trim_chars"
PROBLEM = re.compile(r'<p class="problem[^"]*"[^>]*role="alert">(.*?)</p>', re.S)
APPLIED = re.compile(
    r"(Rolled back|Undone): the active checkpoint is now ([0-9a-f-]{36}) \(was ([0-9a-f-]{36})\)"
)
# The writer stops by itself after this long even if the test never tells it to. Hot threads get a turn
# every ~0.2 s, far inside the dashboard's 15 s "running" window, so they stay busy throughout.
WRITER_LIMIT_S = 50.0


# ---------------------------------------------------------------- what the run left behind


@dataclass(frozen=True)
class Read:
    path: str
    status: int
    problems: tuple[str, ...]
    running_refusal: bool


@dataclass(frozen=True)
class Outcome:
    """One rollback or undo POST as the operator saw it."""

    thread_id: str
    action: str
    target: str
    status: int
    new_head: str | None = None
    previous_head: str | None = None
    refusal: str = ""


@dataclass(frozen=True)
class ConfigSave:
    round: int
    kind: str  # "race" or "hand-edit"
    value: int
    status: int
    saved: bool
    refused: bool
    file_after_round: str
    hand_edit: str | None = None


@dataclass
class LiveRun:
    home: Path
    manifest: DemoManifest
    log: list[dict[str, Any]]
    writer_exit: int | None
    reads: list[Read]
    outcomes: list[Outcome]
    summary_checks: list[tuple[str, str, bool, bool]]  # (action, summary id, expected active, found active)
    targets: dict[str, str]
    stale_outcome: Outcome | None
    config_saves: list[ConfigSave]
    audit: list[dict[str, str]]
    server_log: str
    seconds: float
    facts: dict[str, Any] = field(default_factory=dict)

    def thread(self, key: str) -> str:
        return self.manifest.thread(key).thread_id

    def logged(self, kind: str) -> list[dict[str, Any]]:
        return [record for record in self.log if record["kind"] == kind]


# ---------------------------------------------------------------- helpers


def _wait_for(predicate: Callable[[], bool], what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        time.sleep(0.05)


def _read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    # The writer may be half-way through a line: only complete lines count.
    return [json.loads(line) for line in text.splitlines(keepends=True) if line.endswith("\n")]


def _reader(home: Path) -> MycelReader:
    environ = {
        "HOME": str(home.parent / "os-home"),
        "LEON_DB_PATH": str(home / "leon.db"),
        "LEON_SANDBOX_DB_PATH": str(home / "sandbox.db"),
        "LEON_QUEUE_DB_PATH": str(home / "queue.db"),
        "MYCEL_CONFIG_HOME": str(home),
    }
    return MycelReader(resolve_locations(environ))


@contextlib.contextmanager
def _ro(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to one of Mycel's files, closed afterwards."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        yield conn
    finally:
        conn.close()


def _turn_end_targets(reader: MycelReader, thread_id: str) -> list[tuple[str, int]]:
    """Checkpoints (oldest first, head excluded) whose state ends a turn: last message an AI answer."""
    rows = reader.list_checkpoints(thread_id).value
    head = rows[0].checkpoint_id
    found = []
    for row in reversed(rows):
        if row.checkpoint_id == head or row.source != "loop":
            continue
        state = reader.get_state(thread_id, row.checkpoint_id).value
        assert state is not None
        last = state.messages[-1] if state.messages else None
        if last is not None and last.type is MessageType.AI and not last.tool_calls:
            found.append((row.checkpoint_id, len(state.messages)))
    return found


def _pick_targets(home: Path, manifest: DemoManifest) -> dict[str, str]:
    reader = _reader(home)
    targets: dict[str, str] = {}
    for key in ("qa", "chat", "lab", "steer"):
        targets[key] = _turn_end_targets(reader, manifest.thread(key).thread_id)[0][0]
    compaction = manifest.thread("compaction").thread_id
    active = [s for s in reader.list_summaries(compaction).value if s.is_active]
    assert active, "the demo compaction thread must have an active summary"
    # A target shorter than the active summary's index, so the rollback has a summary to deactivate.
    targets["compaction"] = next(
        cid for cid, count in _turn_end_targets(reader, compaction) if count < active[0].compact_up_to_index
    )
    return targets


def _outcome(session: Session, thread_id: str, action: str, target: str, response: Response) -> Outcome:
    if response.status != 302:
        refusal = re.search(
            r'<p class="problem" role="alert">Refused: (.*?)</p>|<h1>Nothing to undo</h1>\s*<p class="notice">(.*?)</p>',
            response.body,
            re.S,
        )
        text = (refusal.group(1) or refusal.group(2)) if refusal else response.body[:300]
        return Outcome(thread_id, action, target, response.status, refusal=text)
    page = session.get(response.headers["Location"])
    found = APPLIED.search(page.body)
    assert page.status == 200 and found, f"no confirmation after an applied {action}: {page.body[:500]}"
    return Outcome(thread_id, action, target, 302, new_head=found.group(2), previous_head=found.group(3))


def _preview_rollback(session: Session, thread_id: str, target: str) -> tuple[Response, str]:
    preview = session.get(f"/threads/{thread_id}/checkpoints/{target}/rollback/")
    assert preview.status == 200, preview.body[:500]
    return preview, form_field(preview.body, "fingerprint")


def _rollback(session: Session, thread_id: str, target: str, fingerprint: str) -> Outcome:
    response = session.post(
        f"/threads/{thread_id}/checkpoints/{target}/rollback/apply/", {"fingerprint": fingerprint}
    )
    return _outcome(session, thread_id, "rollback", target, response)


def _undo(session: Session, thread_id: str) -> Outcome:
    preview = session.get(f"/threads/{thread_id}/undo/")
    assert preview.status == 200, preview.body[:500]
    # With nothing to undo the page has no form; a stale tab may still post one.
    offered = re.search(r'name="fingerprint" value="([0-9a-f]{16})"', preview.body)
    fingerprint = offered.group(1) if offered else "0" * 16
    response = session.post(f"/threads/{thread_id}/undo/apply/", {"fingerprint": fingerprint})
    target = re.search(r"copies <span class=\"mono small\">([0-9a-f-]{36})", preview.body)
    return _outcome(session, thread_id, "undo", target.group(1) if target else "", response)


def _summary_active(home: Path, summary_ids: list[str]) -> dict[str, bool]:
    with _ro(home / "summary.db") as conn:
        rows = conn.execute("SELECT summary_id, is_active FROM summaries").fetchall()
    return {str(sid): bool(active) for sid, active in rows if sid in summary_ids}


def _dashboard_note(home: Path, checkpoint_id: str) -> dict[str, Any]:
    with _ro(home / "leon.db") as conn:
        row = conn.execute(
            "SELECT metadata FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        ).fetchone()
    return json.loads(row[0]).get(ROLLBACK_METADATA_KEY, {}) if row else {}


class Readers:
    """Viewers reading pages in a loop on their own threads until stopped."""

    def __init__(self, base_url: str, paths: Callable[[], list[str]], count: int = 3) -> None:
        self.reads: list[Read] = []
        self._stop = threading.Event()
        self._paths = paths
        self._sessions = [Session(base_url, "viewer") for _ in range(count)]
        self._threads = [threading.Thread(target=self._loop, args=(s,), daemon=True) for s in self._sessions]
        self.errors: list[BaseException] = []

    def _loop(self, session: Session) -> None:
        try:
            while not self._stop.is_set():
                for path in self._paths():
                    response = session.get(path)
                    self.reads.append(
                        Read(
                            path,
                            response.status,
                            tuple(PROBLEM.findall(response.body)),
                            "Running: the thread looks busy" in response.body,
                        )
                    )
                    if self._stop.is_set():
                        break
        except BaseException as exc:  # noqa: BLE001 - reported by the tests, not swallowed
            self.errors.append(exc)

    def __enter__(self) -> Readers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=60)


# ---------------------------------------------------------------- the scenario


def _config_file(home: Path) -> Path:
    return home / "runtime.json"


def _config_preview(session: Session, value: int) -> str:
    response = session.get("/config/preview/", {"layer": "user", SOFT: str(value)}, HTMX_SAVE_PANEL)
    assert response.status == 200, response.body[:500]
    return form_field(response.body, "sha256")


def _config_save(session: Session, sha: str, value: int) -> Response:
    return session.post("/config/save/", {"layer": "user", "sha256": sha, SOFT: str(value)}, HTMX_SAVE_PANEL)


def _config_rounds(home: Path, first: Session, second: Session) -> list[ConfigSave]:
    saves: list[ConfigSave] = []
    for number in range(4):
        # Two operators preview the same file, then confirm at the same moment.
        values = (2000 + 10 * number, 2005 + 10 * number)
        shas = [_config_preview(first, values[0]), _config_preview(second, values[1])]
        assert shas[0] == shas[1]
        barrier = threading.Barrier(2)

        def save(session: Session, sha: str, value: int, barrier: threading.Barrier = barrier) -> Response:
            barrier.wait()
            return _config_save(session, sha, value)

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(save, (first, second), shas, values))
        after = _config_file(home).read_text(encoding="utf-8")
        for value, answer in zip(values, answers, strict=True):
            saves.append(
                ConfigSave(
                    number,
                    "race",
                    value,
                    answer.status,
                    "Saved" in answer.body and answer.status == 200,
                    "Not saved:" in answer.body,
                    after,
                )
            )
    # A hand edit lands between the preview and the save.
    value = 2100
    sha = _config_preview(first, value)
    hand_edit = json.dumps({"memory": {"pruning": {SOFT.rsplit(".", 1)[1]: 1999}}, "edited": "by hand"})
    # Written aside and renamed, as editors save: readers running meanwhile must never see it half-written
    # (truncate-then-write let one read find an empty runtime.json and report it).
    aside = home / "runtime.json.editing"
    aside.write_text(hand_edit, encoding="utf-8")
    aside.replace(_config_file(home))
    answer = _config_save(first, sha, value)
    after = _config_file(home).read_text(encoding="utf-8")
    saves.append(
        ConfigSave(
            4,
            "hand-edit",
            value,
            answer.status,
            "Saved" in answer.body and answer.status == 200,
            "Not saved:" in answer.body,
            after,
            hand_edit,
        )
    )
    return saves


def _read_paths(run_log: Path, threads: dict[str, str], targets: dict[str, str]) -> Callable[[], list[str]]:
    def paths() -> list[str]:
        latest: dict[str, str] = {}
        for record in _read_log(run_log):
            if record["kind"] == "checkpoint":
                latest[record["thread_id"]] = record["checkpoint_id"]
        out = ["/threads/"]
        for key in HOT:
            thread_id = threads[key]
            out.append(f"/threads/{thread_id}/")
            if thread_id in latest:
                out.append(f"/threads/{thread_id}/checkpoints/{latest[thread_id]}/")
            out.append(f"/threads/{thread_id}/panels/queue/")
            out.append(f"/threads/{thread_id}/panels/run-events/")
            if key in targets:
                out.append(f"/threads/{thread_id}/checkpoints/{targets[key]}/rollback/")
        out.extend(f"/threads/{threads[key]}/" for key in RESUMED)
        out.append("/config/")  # the fleet what-if reads every thread's head
        return out

    return paths


def _audit(session: Session) -> list[dict[str, str]]:
    response = session.get("/audit.csv")
    assert response.status == 200
    return list(csv.DictReader(io.StringIO(response.body)))


def _facts(home: Path) -> dict[str, Any]:
    """Everything the checks need from Mycel's files once the writer has stopped (read-only)."""
    with _ro(home / "leon.db") as conn:
        checkpoints = [
            (str(r[0]), str(r[1]), r[2], json.loads(r[3]))
            for r in conn.execute(
                "SELECT thread_id, checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints"
                " WHERE checkpoint_ns = ''"
            )
        ]
        writes = Counter(
            (str(r[0]), str(r[1]), str(r[2]), int(r[3]))
            for r in conn.execute(
                "SELECT thread_id, checkpoint_id, task_id, idx FROM writes WHERE checkpoint_ns = ''"
            )
        )
    with _ro(home / "summary.db") as conn:
        summaries = {
            str(r[0]): (str(r[1]), bool(r[2]))
            for r in conn.execute("SELECT summary_id, thread_id, is_active FROM summaries")
        }
    with _ro(home / "queue.db") as conn:
        queue = {int(r[0]): str(r[1]) for r in conn.execute("SELECT id, thread_id FROM message_queue")}
    with _ro(home / "events.db") as conn:
        events = [
            (str(r[0]), str(r[1]), str(r[2]))
            for r in conn.execute("SELECT thread_id, run_id, event_type FROM run_events")
        ]
    return {
        "checkpoints": checkpoints,
        "writes": writes,
        "summaries": summaries,
        "queue": queue,
        "events": events,
    }


@pytest.fixture(scope="module")
def live_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveRun]:
    started = time.monotonic()
    base = tmp_path_factory.mktemp("live-agent")
    home = base / "mycel-home"
    # The agent writes with the wall clock, so the demo's recorded turns must lie in its past (a machine
    # whose clock is before 2026-11-30 gets them a day ago); otherwise every thread would look busy.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(determinism, "_BASE_EPOCH", min(determinism._BASE_EPOCH, time.time() - 86_400))
        manifest = write_demo_home(home, seed=7)
    with _ro(home / "leon.db") as conn:
        (newest_id,) = conn.execute("SELECT max(checkpoint_id) FROM checkpoints").fetchone()
    newest_demo = time_of_checkpoint_id(str(newest_id))
    assert newest_demo is not None and newest_demo.timestamp() < time.time() - 20, newest_demo
    threads = {t.key: t.thread_id for t in manifest.threads}
    targets = _pick_targets(home, manifest)
    control = base / "control"
    control.mkdir()
    run_log = base / "writer.jsonl"
    plan = WriterPlan(
        home=str(home),
        log=str(run_log),
        control=str(control),
        hot=tuple(threads[k] for k in HOT),
        resume=tuple(threads[k] for k in RESUMED),
        resume_turns=RESUME_TURNS,
        max_seconds=WRITER_LIMIT_S,
    )
    plan_file = base / "plan.json"
    plan_file.write_text(plan.to_json(), encoding="utf-8")

    with start_server(base, home) as server:
        writer_out = (base / "writer.out").open("wb")
        writer = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("writer_process.py")), str(plan_file)],
            cwd=ROOT,
            stdout=writer_out,
            stderr=subprocess.STDOUT,
        )
        try:
            run = _scenario(server.url, home, manifest, threads, targets, control, run_log, writer)
            run.server_log = server.log_text()
        finally:
            (control / "stop").touch()
            with contextlib.suppress(subprocess.TimeoutExpired):
                writer.wait(timeout=20)  # it finishes its turn and stops by itself
            stop_process(writer)
            writer_out.close()
    run.writer_exit = writer.returncode
    run.log = _read_log(run_log)
    run.facts = _facts(home)
    run.seconds = time.monotonic() - started
    yield run


def _scenario(
    url: str,
    home: Path,
    manifest: DemoManifest,
    threads: dict[str, str],
    targets: dict[str, str],
    control: Path,
    run_log: Path,
    writer: subprocess.Popen[bytes],
) -> LiveRun:
    def writer_did(kind: str, thread_id: str) -> bool:
        if writer.poll() is not None:
            raise AssertionError(f"the writer exited early: {(run_log.parent / 'writer.out').read_text()}")
        return any(r["kind"] == kind and r["thread_id"] == thread_id for r in _read_log(run_log))

    for key in HOT:
        _wait_for(lambda key=key: writer_did("run_done", threads[key]), f"the agent's first turn on {key}")
    operator, operator2 = Session(url, "operator"), Session(url, "operator2")
    outcomes: list[Outcome] = []
    summary_checks: list[tuple[str, str, bool, bool]] = []
    with Readers(url, _read_paths(run_log, threads, targets)) as readers:
        # Busy threads: the preview says so and the write is refused.
        for key in ("lab", "steer"):
            preview, fingerprint = _preview_rollback(operator, threads[key], targets[key])
            assert "Running: the thread looks busy" in preview.body
            outcomes.append(_rollback(operator, threads[key], targets[key], fingerprint))

        # An idle thread rolls back.
        _, fingerprint = _preview_rollback(operator, threads["qa"], targets["qa"])
        outcomes.append(_rollback(operator, threads["qa"], targets["qa"], fingerprint))

        # Two operators confirm the same preview at the same moment: one write, one refusal.
        _, fingerprint = _preview_rollback(operator, threads["chat"], targets["chat"])
        _, fingerprint2 = _preview_rollback(operator2, threads["chat"], targets["chat"])
        assert fingerprint == fingerprint2
        barrier = threading.Barrier(2)

        def confirm(session: Session) -> Outcome:
            barrier.wait()
            return _rollback(session, threads["chat"], targets["chat"], fingerprint)

        with ThreadPoolExecutor(2) as pool:
            outcomes.extend(pool.map(confirm, (operator, operator2)))

        # Roll back past an active summary (deactivated in the same write), then undo (reactivated).
        _, fingerprint = _preview_rollback(operator, threads["compaction"], targets["compaction"])
        rolled = _rollback(operator, threads["compaction"], targets["compaction"], fingerprint)
        outcomes.append(rolled)
        if rolled.new_head:
            gone = list(_dashboard_note(home, rolled.new_head).get("deactivated_summaries", []))
            summary_checks.extend(("rollback", s, False, a) for s, a in _summary_active(home, gone).items())
            summary_checks.append(("rollback", "(count)", True, bool(gone)))
            undone = _undo(operator, threads["compaction"])
            outcomes.append(undone)
            if undone.new_head:
                back = list(_dashboard_note(home, undone.new_head).get("reactivated_summaries", []))
                summary_checks.extend(("undo", s, True, a) for s, a in _summary_active(home, back).items())
                summary_checks.append(("undo", "(same)", True, sorted(back) == sorted(gone)))

        # A stale preview: the agent moves on between the preview and the confirmation.
        glossary = threads["glossary"]
        glossary_target = _turn_end_targets(_reader(home), glossary)[0][0]
        _, fingerprint = _preview_rollback(operator, glossary, glossary_target)
        (control / f"go-{glossary}").touch()
        _wait_for(lambda: writer_did("checkpoint", glossary), "the agent to move the glossary thread")
        stale = _rollback(operator, glossary, glossary_target, fingerprint)
        outcomes.append(stale)

        config_saves = _config_rounds(home, operator, operator2)

        # Let the agent continue the rolled-back threads, and read on while it does.
        for key in ("qa", "chat", "compaction"):
            (control / f"go-{threads[key]}").touch()
        for key in RESUMED:
            _wait_for(
                lambda key=key: (
                    sum(
                        1
                        for r in _read_log(run_log)
                        if r["kind"] == "run_done" and r["thread_id"] == threads[key]
                    )
                    >= RESUME_TURNS
                ),
                f"the agent's resumed turns on {key}",
            )
        # The agent ran on since the rollback: an undo now has nothing to undo, and writes nothing.
        outcomes.append(_undo(operator, threads["qa"]))
    if readers.errors:
        raise readers.errors[0]
    audit = _audit(operator)
    return LiveRun(
        home=home,
        manifest=manifest,
        log=[],
        writer_exit=None,
        reads=readers.reads,
        outcomes=outcomes,
        summary_checks=summary_checks,
        targets={**targets, "glossary": glossary_target},
        stale_outcome=stale,
        config_saves=config_saves,
        audit=audit,
        server_log="",
        seconds=0.0,
    )


# ---------------------------------------------------------------- the promises


def test_the_writer_ran_to_the_end_without_an_error(live_run: LiveRun):
    assert live_run.writer_exit == 0
    assert not live_run.logged("error"), live_run.logged("error")
    assert live_run.log[-1]["kind"] == "done"
    turns = live_run.log[-1]["turns"]
    assert all(turns[live_run.thread(key)] >= 3 for key in HOT), turns
    assert all(turns[live_run.thread(key)] == RESUME_TURNS for key in RESUMED), turns


def test_no_read_failed_or_showed_a_problem_while_the_agent_wrote(live_run: LiveRun):
    assert len(live_run.reads) >= 20, "the readers barely ran"
    failed = [(r.path, r.status) for r in live_run.reads if r.status != 200]
    assert failed == []
    problems = [(r.path, p) for r in live_run.reads for p in r.problems]
    assert problems == []
    assert "Traceback" not in live_run.server_log
    assert "Internal Server Error" not in live_run.server_log


def test_previews_of_a_busy_thread_say_it_is_running(live_run: LiveRun):
    previews = [r for r in live_run.reads if r.path.endswith("/rollback/")]
    assert previews and all(r.running_refusal for r in previews)


def test_every_checkpoint_and_write_the_agent_logged_exists_exactly_once(live_run: LiveRun):
    stored = Counter(checkpoint_id for _, checkpoint_id, _, _ in live_run.facts["checkpoints"])
    parents = {checkpoint_id: parent for _, checkpoint_id, parent, _ in live_run.facts["checkpoints"]}
    logged = live_run.logged("checkpoint")
    assert len(logged) > 50
    assert len({r["checkpoint_id"] for r in logged}) == len(logged), "the agent wrote an id twice"
    assert [r["checkpoint_id"] for r in logged if stored[r["checkpoint_id"]] != 1] == []
    assert [
        r["checkpoint_id"] for r in logged if parents[r["checkpoint_id"]] != r["parent_checkpoint_id"]
    ] == []
    writes: Counter[tuple[str, str, str, int]] = live_run.facts["writes"]
    missing = [
        (r["checkpoint_id"], r["task_id"], idx)
        for r in live_run.logged("writes")
        for idx in r["idx"]
        if writes[(r["thread_id"], r["checkpoint_id"], r["task_id"], idx)] != 1
    ]
    assert missing == []


def test_summaries_queue_rows_and_the_latest_run_events_are_all_present(live_run: LiveRun):
    summaries: dict[str, tuple[str, bool]] = live_run.facts["summaries"]
    logged = live_run.logged("summary")
    assert logged
    assert [
        r["summary_id"] for r in logged if summaries.get(r["summary_id"], ("", False))[0] != r["thread_id"]
    ] == []
    # Mycel's rule survives the concurrent rollbacks: exactly one active summary per thread it saved for.
    for thread_id in {r["thread_id"] for r in logged}:
        newest = [r for r in logged if r["thread_id"] == thread_id][-1]["summary_id"]
        active = [sid for sid, (tid, on) in summaries.items() if tid == thread_id and on]
        assert active == [newest]
    queue: dict[int, str] = live_run.facts["queue"]
    assert [r["id"] for r in live_run.logged("queue") if queue.get(r["id"]) != r["thread_id"]] == []
    events = set(live_run.facts["events"])
    runs = live_run.logged("run_done")
    for thread_id in {r["thread_id"] for r in runs}:
        latest = [r for r in runs if r["thread_id"] == thread_id][-1]["run_id"]
        assert {(thread_id, latest, kind) for kind in ("user_message", "run_start", "run_done")} <= events


def test_busy_and_stale_rollbacks_are_refused_and_a_double_confirm_writes_once(live_run: LiveRun):
    by_thread: dict[str, list[Outcome]] = {}
    for outcome in live_run.outcomes:
        by_thread.setdefault(outcome.thread_id, []).append(outcome)
    for key in ("lab", "steer"):
        (busy,) = by_thread[live_run.thread(key)]
        # Either the agent wrote since the preview, or it is still mid-run: refused both ways.
        assert busy.status == 409
        assert "changed since" in busy.refusal or "running" in busy.refusal, busy.refusal
    chat = by_thread[live_run.thread("chat")]
    assert sorted(o.status for o in chat) == [302, 409]
    assert "changed since" in next(o for o in chat if o.status == 409).refusal
    stale = live_run.stale_outcome
    assert stale is not None and stale.status == 409
    qa = by_thread[live_run.thread("qa")]
    assert [(o.action, o.status) for o in qa] == [("rollback", 302), ("undo", 409)]
    assert "nothing to undo" in qa[1].refusal.lower()
    assert [(o.action, o.status) for o in by_thread[live_run.thread("compaction")]] == [
        ("rollback", 302),
        ("undo", 302),
    ]


def test_every_applied_rollback_is_one_checkpoint_that_names_it_and_refusals_wrote_nothing(live_run: LiveRun):
    rows = {
        checkpoint_id: (thread_id, parent, meta)
        for thread_id, checkpoint_id, parent, meta in live_run.facts["checkpoints"]
    }
    applied = [o for o in live_run.outcomes if o.status == 302]
    written = sorted(cid for cid, (_, _, meta) in rows.items() if ROLLBACK_METADATA_KEY in meta)
    assert written == sorted(o.new_head for o in applied if o.new_head)
    reader = _reader(live_run.home)
    for outcome in applied:
        thread_id, parent, meta = rows[outcome.new_head]
        note = meta[ROLLBACK_METADATA_KEY]
        assert (thread_id, parent) == (outcome.thread_id, outcome.target)
        assert (note["action"], note["target"], note["previous_head"]) == (
            outcome.action,
            outcome.target,
            outcome.previous_head,
        )
        copy = reader.get_state(thread_id, outcome.new_head).value
        original = reader.get_state(thread_id, outcome.target).value
        assert copy is not None and original is not None
        assert [(m.id, m.text) for m in copy.messages] == [(m.id, m.text) for m in original.messages]
    # The summary side of the same writes: deactivated by the rollback, back after the undo.
    assert live_run.summary_checks
    assert [
        (action, sid) for action, sid, expected, found in live_run.summary_checks if expected != found
    ] == []
    # The audit log tells the same story as the operators saw.
    audited = Counter(
        (row["action"], row["result"]) for row in live_run.audit if row["action"] in ("rollback", "undo")
    )
    seen = Counter((o.action, "applied" if o.status == 302 else "refused") for o in live_run.outcomes)
    assert audited == seen


def test_the_agents_next_checkpoint_continues_from_the_rolled_back_state(live_run: LiveRun):
    rows = {
        checkpoint_id: (thread_id, meta)
        for thread_id, checkpoint_id, _, meta in live_run.facts["checkpoints"]
    }
    reader = _reader(live_run.home)
    for key in ("qa", "chat", "compaction"):
        thread_id = live_run.thread(key)
        ours = sorted(
            cid for cid, (tid, meta) in rows.items() if tid == thread_id and ROLLBACK_METADATA_KEY in meta
        )
        assert ours, f"no rollback was applied on {key}"
        newest = ours[-1]
        first = next(r for r in live_run.logged("checkpoint") if r["thread_id"] == thread_id)
        assert first["checkpoint_id"] > newest
        assert first["parent_checkpoint_id"] == newest, key
        rolled = reader.get_state(thread_id, newest).value
        continued = reader.get_state(thread_id, first["checkpoint_id"]).value
        assert rolled is not None and continued is not None
        prefix = [(m.id, m.text) for m in rolled.messages]
        assert [(m.id, m.text) for m in continued.messages][: len(prefix)] == prefix
        # The agent's turns landed on top of the rolled-back history: 4 messages per turn.
        runs = [r for r in live_run.logged("run_done") if r["thread_id"] == thread_id]
        assert runs[-1]["messages"] == len(prefix) + 4 * RESUME_TURNS


def test_concurrent_config_saves_apply_one_and_refuse_the_other(live_run: LiveRun):
    races = [s for s in live_run.config_saves if s.kind == "race"]
    for number in sorted({s.round for s in races}):
        pair = [s for s in races if s.round == number]
        assert [s.saved for s in pair].count(True) == 1, pair
        assert [s.refused for s in pair].count(True) == 1, pair
        winner = next(s for s in pair if s.saved)
        on_disk = json.loads(pair[0].file_after_round)
        assert on_disk["memory"]["pruning"]["soft_trim_chars"] == winner.value
    (hand,) = [s for s in live_run.config_saves if s.kind == "hand-edit"]
    assert hand.status == 409 and hand.refused and not hand.saved
    assert hand.file_after_round == hand.hand_edit
    audited = Counter(row["result"] for row in live_run.audit if row["action"] == "config_save")
    assert audited == Counter("applied" if s.saved else "refused" for s in live_run.config_saves)


def test_the_whole_run_is_bounded(live_run: LiveRun):
    assert live_run.seconds < 60

"""Bad input on a real server, each a plain StoreProblem from the reader and a one-line CLI error, never a
traceback: an unreachable server, a wrong password, a role the server does not know, no checkpoint table, another LangGraph
version's schema, a statement that runs past the time limit."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from memory_core.cli import main
from memory_core.records import ProblemKind
from memory_core.stores.locations import resolve_locations
from memory_core.stores.reader import MycelReader
from tests.support.postgres import PASSWORD, PASSWORD_USER


def _reader(url: str, tmp_path: Path, timeout_s: float = 5.0) -> MycelReader:
    environ = {"HOME": str(tmp_path / "home"), "LEON_POSTGRES_URL": url}
    return MycelReader(resolve_locations(environ), query_timeout_s=timeout_s)


def _cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path, *argv: str
):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LEON_POSTGRES_URL", url)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))
    for name in ("LEON_DB_PATH", "LEON_SANDBOX_DB_PATH", "LEON_QUEUE_DB_PATH", "MYCEL_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _kinds(result: Any) -> set[ProblemKind]:
    return {p.kind for p in result.problems}


def _assert_said_plainly(code: int, err: str, words: str) -> None:
    assert code == 2
    assert "Traceback" not in err
    assert err.startswith("mycel-memory: error: ")
    assert words in err


def test_unreachable_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://reader:hunter2@/mycel?host={tmp_path / 'no-server-here'}"
    listed = _reader(url, tmp_path, timeout_s=1.0).list_threads()
    assert listed.value == ()
    assert _kinds(listed) == {ProblemKind.UNREACHABLE}
    assert all("hunter2" not in p.message for p in listed.problems)
    code, out, err = _cli(monkeypatch, capsys, url, tmp_path, "threads", "--json")
    _assert_said_plainly(code, err, "cannot reach the server")
    assert "hunter2" not in out + err


def test_a_wrong_password_is_refused_and_the_right_one_reads(
    pg_server: Any,
    pg_dev_sample: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The cluster checks this role's password (scram-sha-256), as a real server does.
    database = pg_dev_sample.split("@/", 1)[1].split("?", 1)[0]
    wrong = pg_server.url(database, user=PASSWORD_USER, password="wrong-password-here")
    listed = _reader(wrong, tmp_path, timeout_s=2.0).list_threads()
    assert listed.value == ()
    assert _kinds(listed) == {ProblemKind.DENIED}
    assert "refused the login" in listed.problems[0].message
    assert "password authentication failed" in listed.problems[0].message
    assert all("wrong-password-here" not in p.message for p in listed.problems)
    code, out, err = _cli(monkeypatch, capsys, wrong, tmp_path, "thread", "m_sK5yDq1FvT7a-1", "--json")
    _assert_said_plainly(code, err, "refused the login")
    assert "wrong-password-here" not in out + err

    right = pg_server.url(database, user=PASSWORD_USER, password=PASSWORD)
    assert len(_reader(right, tmp_path).list_threads().value) == 5


def test_a_role_the_server_does_not_know(
    pg_dev_sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = "postgresql://nobody-here:wrong@" + pg_dev_sample.split("@", 1)[1]
    listed = _reader(url, tmp_path, timeout_s=1.0).list_threads()
    assert _kinds(listed) == {ProblemKind.DENIED}
    assert "refused the login" in listed.problems[0].message
    code, out, err = _cli(monkeypatch, capsys, url, tmp_path, "thread", "m_sK5yDq1FvT7a-1", "--json")
    _assert_said_plainly(code, err, "refused the login")
    assert ":wrong@" not in out + err


def test_no_checkpoint_table(
    pg_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_server.create_database("empty_for_missing_table")
    listed = _reader(url, tmp_path).list_threads()
    assert _kinds(listed) == {ProblemKind.MISSING_TABLE}
    assert "no LangGraph checkpoints table in schema agent or the search_path" in listed.problems[0].message
    code, _, err = _cli(monkeypatch, capsys, url, tmp_path, "threads")
    _assert_said_plainly(code, err, "no LangGraph checkpoints table")
    code, out, _ = _cli(monkeypatch, capsys, url, tmp_path, "status")
    assert code == 2 and "no LangGraph checkpoints table" in out


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("DELETE FROM agent.checkpoint_migrations WHERE v = 9", "checkpoint_migrations is at v8"),
        ("INSERT INTO agent.checkpoint_migrations VALUES (10)", "checkpoint_migrations is at v10"),
        ("ALTER TABLE agent.checkpoint_blobs DROP COLUMN type", "checkpoint_blobs lacks type"),
        ("DROP TABLE agent.checkpoint_migrations", "no checkpoint_migrations table"),
    ],
)
def test_a_schema_from_another_langgraph_version(
    pg_dev_sample: str,
    change: str,
    words: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with psycopg.connect(pg_dev_sample, autocommit=True) as conn:
        conn.execute(change)  # type: ignore[arg-type]
    reader = _reader(pg_dev_sample, tmp_path)
    listed = reader.list_threads()
    assert listed.value == ()
    assert _kinds(listed) == {ProblemKind.UNKNOWN_SCHEMA}
    assert words in listed.problems[0].message
    state = reader.get_state("m_sK5yDq1FvT7a-1")
    assert state.value is None and _kinds(state) == {ProblemKind.UNKNOWN_SCHEMA}
    code, _, err = _cli(monkeypatch, capsys, pg_dev_sample, tmp_path, "threads", "--json")
    _assert_said_plainly(code, err, words)


def test_a_statement_past_the_time_limit(pg_dev_sample: str, tmp_path: Path) -> None:
    # Another session holds the checkpoints table; our read waits on it until statement_timeout cancels it.
    locked, release = threading.Event(), threading.Event()

    def hold() -> None:
        with psycopg.connect(pg_dev_sample) as conn:
            conn.execute("LOCK TABLE agent.checkpoints IN ACCESS EXCLUSIVE MODE")
            locked.set()
            release.wait(30)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert locked.wait(10)
        reader = _reader(pg_dev_sample, tmp_path, timeout_s=1.0)
        listed = reader.list_threads()
        checkpoints = reader.list_checkpoints("m_sK5yDq1FvT7a-1")
    finally:
        release.set()
        holder.join()
    assert ProblemKind.TIMEOUT in _kinds(listed)
    assert "took longer than allowed" in next(
        p.message for p in listed.problems if p.kind is ProblemKind.TIMEOUT
    )
    assert checkpoints.value == [] and ProblemKind.TIMEOUT in _kinds(checkpoints)
    # Once the lock is gone the same reader reads: a timed-out list is not kept.
    again = reader.list_threads()
    assert again.problems == () and len(again.value) == 5

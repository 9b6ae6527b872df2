"""agent_registry.db, sub-agents and their family: the store, the tree, and the CLI's JSON.

Registries are written as Mycel's `SQLiteAgentRegistryRepo` writes them (its DDL verbatim, bare sqlite3,
INSERT OR REPLACE then an UPDATE of the status: memory_core/demo/subagents.py); checkpoints by LangGraph's
real SqliteSaver (store_builders).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import memo
from memory_core.demo.subagents import AGENTS_DDL, AgentsTableRow, write_agent_registry
from memory_core.family import (
    MAX_DEPTH,
    build_family,
    family_thread_ids,
    registered_only_rows,
)
from memory_core.records import AgentRecord, ProblemKind
from memory_core.stores.reader import MycelReader
from tests.core.store_builders import build_thread, point_locations
from tests.support.cli import run_cli
from tests.support.mycel_env import point_env_at
from tests.support.sample_data import SAMPLE_HOME

PARENT = "m_parent-1"
CHILD = "subagent-aaaa0001"
GRANDCHILD = "subagent-aaaa0002"
FAILED = "subagent-aaaa0003"
T0 = 1_796_029_200.0


def _row(
    agent_id: str, parent: str | None, status: str, at: float, kind: str | None = "explore"
) -> AgentsTableRow:
    return AgentsTableRow(agent_id, f"agent {agent_id}", f"subagent-{agent_id}", status, parent, kind, at)


FAMILY_ROWS = (
    _row("aaaa0001", PARENT, "completed", T0),
    _row("aaaa0002", CHILD, "running", T0 + 5),  # a sub-agent's own sub-agent
    _row("aaaa0003", PARENT, "error", T0 + 9, kind=None),  # failed before any checkpoint
)


@pytest.fixture(autouse=True)
def _fresh_memos() -> None:
    memo.reset()


def _reader(home: Path) -> MycelReader:
    return MycelReader(point_locations(home))


def _family_home(tmp_path: Path) -> Path:
    home = tmp_path / "data-home"
    home.mkdir()
    for thread_id in (PARENT, CHILD, GRANDCHILD):
        build_thread(home / "leon.db", thread_id, turns=1)
    write_agent_registry(home / "agent_registry.db", FAMILY_ROWS)
    return home


def _agent(agent_id: str, parent: str | None, status: str = "completed") -> AgentRecord:
    return AgentRecord(agent_id, agent_id, f"subagent-{agent_id}", status, parent, None, None)


# -- the store ----------------------------------------------------------------------------------------


def test_registry_rows_become_records_with_the_parent_thread_and_final_status(tmp_path: Path) -> None:
    home = tmp_path / "data-home"
    home.mkdir()
    write_agent_registry(home / "agent_registry.db", FAMILY_ROWS)
    found = _reader(home).list_agents()
    assert found.problems == ()
    assert [(a.agent_id, a.thread_id, a.status, a.parent_thread_id) for a in found.value] == [
        ("aaaa0001", CHILD, "completed", PARENT),
        ("aaaa0002", GRANDCHILD, "running", CHILD),
        ("aaaa0003", FAILED, "error", PARENT),
    ]
    assert found.value[0].created_at == datetime.fromtimestamp(T0, tz=UTC)
    assert found.value[2].subagent_type is None and found.value[0].subagent_type == "explore"


def test_created_at_left_to_mycels_default_reads_as_a_time(tmp_path: Path) -> None:
    path = tmp_path / "agent_registry.db"
    conn = sqlite3.connect(path)
    conn.executescript(AGENTS_DDL)
    # Exactly Mycel's register(): created_at comes from DEFAULT (strftime('%s', 'now')).
    conn.execute(
        "INSERT OR REPLACE INTO agents (agent_id, name, thread_id, status, parent_agent_id, subagent_type) "
        "VALUES (?,?,?,?,?,?)",
        ("b1", "worker", "subagent-b1", "running", "t", "general-purpose"),
    )
    conn.commit()
    conn.close()
    before = datetime.now(tz=UTC).timestamp()
    (agent,) = _reader(tmp_path).list_agents().value
    assert agent.created_at is not None
    assert abs(agent.created_at.timestamp() - before) < 120


def test_sample_home_has_an_empty_registry_and_no_problem() -> None:
    found = _reader(SAMPLE_HOME).list_agents()
    assert found.value == () and found.problems == ()


def test_a_missing_registry_is_an_expected_absence(tmp_path: Path) -> None:
    found = _reader(tmp_path).list_agents()
    assert found.value == ()
    assert [p.kind for p in found.problems] == [ProblemKind.MISSING_FILE]
    assert found.problems[0].expected_absence


def test_a_registry_without_its_table_is_an_expected_absence(tmp_path: Path) -> None:
    sqlite3.connect(tmp_path / "agent_registry.db").executescript("CREATE TABLE other (x);").close()
    found = _reader(tmp_path).list_agents()
    assert found.value == ()
    assert [(p.kind, p.expected_absence) for p in found.problems] == [(ProblemKind.MISSING_TABLE, True)]


def test_a_damaged_registry_is_a_problem_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "agent_registry.db").write_bytes(b"this is not a database, just some bytes" * 20)
    found = _reader(tmp_path).list_agents()
    assert found.value == ()
    (problem,) = found.problems
    assert problem.kind is ProblemKind.CORRUPT and not problem.expected_absence
    assert "agent_registry.db" in problem.message


def test_a_registry_without_thread_ids_is_refused_not_misread(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "agent_registry.db")
    conn.executescript(
        "CREATE TABLE agents (agent_id TEXT PRIMARY KEY, name TEXT); INSERT INTO agents VALUES ('x', 'y');"
    )
    conn.close()
    found = _reader(tmp_path).list_agents()
    assert found.value == ()
    (problem,) = found.problems
    assert problem.kind is ProblemKind.UNKNOWN_SCHEMA and "thread_id" in problem.message


def test_an_older_layout_without_the_optional_columns_still_lists_its_agents(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "agent_registry.db")
    conn.executescript(
        "CREATE TABLE agents (agent_id TEXT PRIMARY KEY, thread_id TEXT NOT NULL, parent_agent_id TEXT);"
        "INSERT INTO agents VALUES ('c1', 'subagent-c1', 'root');"
    )
    conn.close()
    (agent,) = _reader(tmp_path).list_agents().value
    assert (agent.thread_id, agent.parent_thread_id, agent.status, agent.name) == (
        "subagent-c1",
        "root",
        "running",
        "",
    )
    assert agent.subagent_type is None and agent.created_at is None


def test_a_new_registration_is_read_at_once(tmp_path: Path) -> None:
    home = tmp_path / "data-home"
    home.mkdir()
    write_agent_registry(home / "agent_registry.db", FAMILY_ROWS[:1])
    reader = _reader(home)
    assert len(reader.list_agents().value) == 1
    write_agent_registry(home / "agent_registry.db", FAMILY_ROWS[1:])
    assert [a.agent_id for a in reader.list_agents().value] == ["aaaa0001", "aaaa0002", "aaaa0003"]


# -- the family -----------------------------------------------------------------------------------------


def test_family_of_a_parent_lists_children_recursively_with_checkpoints_known(tmp_path: Path) -> None:
    home = _family_home(tmp_path)
    reader = _reader(home)
    agents = reader.list_agents().value
    family = build_family(agents, PARENT, has_checkpoints=lambda t: reader.head_checkpoint_id(t) is not None)
    assert family.parent is None and family.agent is None
    assert [(c.thread_id, c.has_checkpoints, c.agent and c.agent.status) for c in family.children] == [
        (CHILD, True, "completed"),
        (FAILED, False, "error"),
    ]
    assert [g.thread_id for g in family.children[0].children] == [GRANDCHILD]
    assert [m.thread_id for m in family.descendants()] == [CHILD, GRANDCHILD, FAILED]


def test_family_of_a_sub_agent_names_its_parent_and_its_own_children() -> None:
    agents = [_agent("a", "root"), _agent("b", "subagent-a"), _agent("c", "root")]
    family = build_family(agents, "subagent-a", has_checkpoints=lambda t: t != "subagent-b")
    assert family.parent is not None and family.parent.thread_id == "root"
    assert family.parent.children == ()  # the parent alone, not its other children
    assert family.agent is not None and family.agent.agent_id == "a"
    assert [(c.thread_id, c.has_checkpoints) for c in family.children] == [("subagent-b", False)]


def test_a_registry_that_loops_stops_instead_of_recursing() -> None:
    agents = [_agent("a", "subagent-b"), _agent("b", "subagent-a"), _agent("s", "subagent-s")]
    family = build_family(agents, "subagent-a", has_checkpoints=lambda t: True)
    assert [c.thread_id for c in family.children] == ["subagent-b"]
    assert family.children[0].children == () and family.children[0].cut
    assert family_thread_ids(agents, "subagent-a") == {"subagent-a", "subagent-b"}
    self_parent = build_family(agents, "subagent-s", has_checkpoints=lambda t: True)
    assert self_parent.parent is None and self_parent.children == () and self_parent.cut


def test_a_chain_deeper_than_the_cap_is_cut_not_a_recursion_error() -> None:
    depth = MAX_DEPTH * 40
    agents = [_agent(str(i), "root" if i == 0 else f"subagent-{i - 1}") for i in range(depth)]
    family = build_family(agents, "root", has_checkpoints=lambda t: True)
    level, seen = family.children, 0
    while level:
        seen += 1
        last = level[0]
        level = last.children
    assert seen == MAX_DEPTH and last.cut
    assert len(family_thread_ids(agents, "root")) == depth + 1  # the filter walks the whole chain


def test_registrations_no_store_knows_become_rows_without_checkpoints() -> None:
    agents = [_agent("a", "root"), _agent("f", "root", status="error")]
    (row,) = registered_only_rows(agents, ["root", "subagent-a"])
    assert (row.thread_id, row.checkpoints, row.messages, row.head_checkpoint_id) == (
        "subagent-f",
        0,
        0,
        None,
    )


# -- the CLI ---------------------------------------------------------------------------------------------


def _point(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    point_env_at(monkeypatch, home)
    monkeypatch.setenv("MYCEL_MEMORY_CACHE_DIR", str(tmp_path / "facts"))


def test_threads_json_rows_carry_parent_and_subagent_and_the_failed_registration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _family_home(tmp_path)
    _point(home, tmp_path, monkeypatch)
    code, out, _ = run_cli(capsys, "threads", "--json")
    assert code == 0
    rows = {r["thread_id"]: r for r in json.loads(out)}
    assert set(rows) == {PARENT, CHILD, GRANDCHILD, FAILED}
    assert rows[PARENT]["parent_thread_id"] is None and rows[PARENT]["subagent"] is None
    assert rows[GRANDCHILD]["parent_thread_id"] == CHILD
    assert rows[FAILED]["checkpoints"] == 0 and rows[FAILED]["head_checkpoint_id"] is None
    assert rows[FAILED]["subagent"] == {
        "agent_id": "aaaa0003",
        "name": "agent aaaa0003",
        "status": "error",
        "subagent_type": None,
        "created_at": datetime.fromtimestamp(T0 + 9, tz=UTC).isoformat(),
    }


def test_thread_json_has_the_family_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _family_home(tmp_path)
    _point(home, tmp_path, monkeypatch)
    code, out, _ = run_cli(capsys, "thread", PARENT, "--json")
    assert code == 0
    family = json.loads(out)["family"]
    assert family["parent"] is None and family["subagent"] is None
    tree = [
        (c["thread_id"], c["has_checkpoints"], [g["thread_id"] for g in c["children"]])
        for c in family["children"]
    ]
    assert tree == [(CHILD, True, [GRANDCHILD]), (FAILED, False, [])]

    code, out, _ = run_cli(capsys, "thread", GRANDCHILD, "--json")
    family = json.loads(out)["family"]
    assert family["parent"]["thread_id"] == CHILD and family["parent"]["subagent"]["status"] == "completed"
    assert family["subagent"]["agent_id"] == "aaaa0002" and family["children"] == []


def test_thread_opens_a_failed_registration_with_no_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _family_home(tmp_path)
    _point(home, tmp_path, monkeypatch)
    code, out, _ = run_cli(capsys, "thread", FAILED, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["checkpoints"] == [] and data["messages"] == [] and data["head_checkpoint_id"] is None
    assert data["family"]["parent"]["thread_id"] == PARENT
    assert data["family"]["subagent"]["status"] == "error"


def test_a_damaged_registry_warns_and_the_threads_still_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _family_home(tmp_path)
    (home / "agent_registry.db").write_bytes(b"\x00garbage" * 64)
    _point(home, tmp_path, monkeypatch)
    code, out, err = run_cli(capsys, "threads", "--json")
    assert code == 0
    assert {r["thread_id"] for r in json.loads(out)} == {PARENT, CHILD, GRANDCHILD}
    assert "agent_registry.db is not an SQLite database" in err
    code, out, err = run_cli(capsys, "thread", CHILD, "--json")
    assert code == 0 and json.loads(out)["family"] == {"subagent": None, "parent": None, "children": []}
    assert "agent_registry.db" in err

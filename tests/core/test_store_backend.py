"""MycelReader reads only through its StoreBackend: a second engine is a second backend, not a fork."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memory_core import memo
from memory_core.records import StoreProblem
from memory_core.stores.backend import CheckpointSnapshot, StoreBackend
from memory_core.stores.reader import MycelReader
from memory_core.stores.sqlite.backend import SqliteBackend
from tests.core.store_builders import build_thread, point_locations


class _Recording:
    """A backend over another one that records every call: stands in for a second engine."""

    def __init__(self, inner: SqliteBackend) -> None:
        self.inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        return getattr(self.inner, name)

    @contextmanager
    def checkpoints(
        self, thread_id: str, problems: list[StoreProblem]
    ) -> Iterator[CheckpointSnapshot | None]:
        self.calls.append("checkpoints")
        with self.inner.checkpoints(thread_id, problems) as snapshot:
            yield snapshot


def _reader(home: Path, backend: StoreBackend | None = None) -> MycelReader:
    return MycelReader(point_locations(home), backend=backend)


def test_every_read_goes_through_the_backend_and_gives_what_sqlite_gives(tmp_path: Path) -> None:
    build_thread(tmp_path / "leon.db", "t", turns=2)
    locations = point_locations(tmp_path)
    memo.reset()
    direct = _reader(tmp_path)
    expected = (
        direct.list_threads().value,
        direct.list_checkpoints("t").value,
        direct.get_state("t").value,
        direct.list_summaries("t").value,
        direct.list_queue("t").value,
    )
    memo.reset()
    recording = _Recording(SqliteBackend(locations, query_timeout_s=5.0, row_cap=100_000))
    through: StoreBackend = recording  # its checkpoints() and __getattr__ delegation
    reader = _reader(tmp_path, through)
    got = (
        reader.list_threads().value,
        reader.list_checkpoints("t").value,
        reader.get_state("t").value,
        reader.list_summaries("t").value,
        reader.list_queue("t").value,
    )
    assert got == expected
    assert {"version", "identity", "thread_rows", "checkpoints", "list_summaries", "list_queue"} <= set(
        recording.calls
    )


def test_what_is_kept_is_keyed_by_the_backends_identity(tmp_path: Path) -> None:
    """Two stores with the same thread id never share a series: the memo key carries the store's identity."""
    for name, turns in (("one", 1), ("two", 3)):
        (tmp_path / name).mkdir()
        build_thread(tmp_path / name / "leon.db", "same-id", turns=turns)
    memo.reset()
    one = _reader(tmp_path / "one").list_checkpoints("same-id").value
    two = _reader(tmp_path / "two").list_checkpoints("same-id").value
    assert len(one) < len(two)
    assert memo.stats()["stores.series"].entries == 2


def test_a_missing_checkpoint_store_yields_no_snapshot_and_says_why(tmp_path: Path) -> None:
    backend = SqliteBackend(point_locations(tmp_path), query_timeout_s=5.0, row_cap=10)
    problems: list[StoreProblem] = []
    with backend.checkpoints("t", problems) as snapshot:
        assert snapshot is None
    assert [p.message for p in problems] == ["leon.db does not exist"]


def _crossing_imports(tree: ast.AST, where: str, *, allowed_in: str | None) -> list[str]:
    """The imports of the writers or LangGraph under `tree`, except inside functions named `allowed_in`."""
    found: list[str] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == allowed_in:
            continue
        imported: list[str] = []
        if isinstance(node, ast.Import):
            imported = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        found += [
            f"{where} imports {module}"
            for module in imported
            if module.startswith("memory_core.stores.write") or module.split(".")[0] == "langgraph"
        ]
        found += _crossing_imports(node, where, allowed_in=allowed_in)
    return found


def test_the_read_side_imports_neither_the_writers_nor_langgraph() -> None:
    """The read/write border: nothing outside stores/write/ loads the audited writers, nor LangGraph (which
    they need), but a backend's copy_checkpoint, the one write the backend protocol carries."""
    folder = Path(__file__).resolve().parents[2] / "memory_core" / "stores"
    read_side = [path for path in folder.rglob("*.py") if "write" not in path.relative_to(folder).parts]
    assert len(read_side) > 20
    crossing: list[str] = []
    for path in read_side:
        crossing += _crossing_imports(
            ast.parse(path.read_text()), str(path.relative_to(folder)), allowed_in="copy_checkpoint"
        )
    assert crossing == []
    # The rule bites: the same import at a module's top, or in any other method, is found.
    planted = "from memory_core.stores.write.rollback_writer import x\nclass B:\n    def read(self):\n"
    planted += "        import langgraph\n    def copy_checkpoint(self):\n        import langgraph\n"
    assert _crossing_imports(ast.parse(planted), "p", allowed_in="copy_checkpoint") == [
        "p imports memory_core.stores.write.rollback_writer",
        "p imports memory_core.stores.write.rollback_writer.x",
        "p imports langgraph",
    ]


def test_reading_a_home_loads_no_writer_and_no_langgraph(sample_home: Path) -> None:
    """What the border is for: a process that lists threads and decodes a head never loads LangGraph."""
    script = (
        "import sys\n"
        "from memory_core.stores.locations import resolve_locations\n"
        "from memory_core.stores.reader import MycelReader\n"
        "reader = MycelReader(resolve_locations())\n"
        "rows = reader.list_threads().value\n"
        "assert rows and reader.get_state(rows[0].thread_id).value is not None\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langgraph', 'memory_core.stores.write'))))\n"
    )
    env = {**os.environ, "LEON_DB_PATH": str(sample_home / "leon.db"), "MYCEL_CONFIG_HOME": str(sample_home)}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

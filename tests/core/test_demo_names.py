"""The demo writer never reuses an engine record's name.

The demo defines its own rows for the tables it writes; were one called `ThreadRow` like the engine's
record, a test or screen importing the wrong one would still run and quietly mean something else.
"""

import ast
from pathlib import Path

import memory_core

PACKAGE = Path(memory_core.__file__).parent
DEMO = PACKAGE / "demo"


def _defined_names(path: Path, *, classes_only: bool) -> set[str]:
    """Public names a module defines at its top level (not the ones it imports)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif classes_only:
            continue
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("_")}


def _engine_classes() -> dict[str, Path]:
    return {
        name: path
        for path in sorted(PACKAGE.rglob("*.py"))
        if DEMO not in path.parents
        for name in _defined_names(path, classes_only=True)
    }


def test_the_engine_scan_finds_its_records() -> None:
    engine = _engine_classes()
    records = {"ThreadRow", "CheckpointRow", "SummaryRow", "QueueItem", "FileOperation", "RunEvent"}
    assert records <= set(engine)
    assert engine["ThreadRow"] == PACKAGE / "records.py"


def test_the_demo_scan_finds_its_table_rows() -> None:
    assert {"ThreadsTableRow", "MemberRow", "write_threads_table"} <= _defined_names(
        DEMO / "tables.py", classes_only=False
    )


def test_no_demo_name_is_an_engine_class_name() -> None:
    engine = _engine_classes()
    clashes = sorted(
        f"{path.relative_to(PACKAGE.parent)}: {name} (engine: {engine[name].relative_to(PACKAGE.parent)})"
        for path in sorted(DEMO.rglob("*.py"))
        for name in _defined_names(path, classes_only=False) & set(engine)
    )
    assert clashes == []
